// Loaded by `npm run test:unit` only: the unit suite is fast and self-contained, so a
// test that starts a server (a cluster's router, a scripted endpoint, code-server's
// client) fails here and belongs in test/integration.
import * as net from 'node:net';

net.Server.prototype.listen = function listen(): never {
  throw new Error('unit tests start no network server: move this test to test/integration');
};
