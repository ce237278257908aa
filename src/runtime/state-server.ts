import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoint } from './host-env';
import type { Json } from './types';

/** Serves `GET /state` (by default on a free loopback port); resolves with the port once listening (none on a socket path). */
export function startStateServer(state: () => Json, listen: Endpoint = { host: '127.0.0.1', port: 0 }): Promise<{ port?: number; server: http.Server }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/state') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /state is served\n');
      return;
    }
    let body: string;
    try {
      body = JSON.stringify(state()) ?? 'null';
    } catch (err) {
      // A broken state function must not crash the node it is meant to help debug.
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`state function failed: ${String(err)}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if ('path' in listen) server.listen(listen.path, () => resolve({ server }));
    else server.listen(listen.port, listen.host, () => resolve({ port: (server.address() as AddressInfo).port, server }));
  });
}
