import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback port that forwards each connection to a node's state socket: sandboxed
 * nodes have no network, but the harness and the person debugging reach their state
 * endpoint at http://127.0.0.1:<port>/state as on any backend.
 */
export class StateProxy {
  private readonly server: net.Server;
  private readonly open = new Set<net.Socket>();

  private constructor(socketPath: string) {
    this.server = net.createServer((client) => {
      const node = net.connect(socketPath);
      for (const s of [client, node]) {
        this.open.add(s);
        s.once('close', () => this.open.delete(s));
        // A node that is gone or restarting refuses; the client sees its connection end.
        s.on('error', () => {
          client.destroy();
          node.destroy();
        });
      }
      client.pipe(node).pipe(client);
    });
  }

  static async listen(socketPath: string): Promise<StateProxy> {
    const proxy = new StateProxy(socketPath);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
