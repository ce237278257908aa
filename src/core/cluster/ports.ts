import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Json } from '../../runtime/types';
import { JsonValue } from '../../runtime/wire';

/** A loopback port that was free a moment ago; the Node inspector cannot be told to pick one itself and report it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** GETs JSON from a loopback port without keep-alive, so no socket outlives the call. */
export function getJson(port: number, urlPath: string, timeoutMs: number): Promise<Json> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text.trim()}`));
        let raw: unknown;
        try {
          raw = JSON.parse(text);
        } catch {
          return reject(new Error(`response is not JSON: ${text.slice(0, 200)}`));
        }
        const parsed = JsonValue.safeParse(raw);
        if (parsed.success) resolve(parsed.data);
        else reject(new Error('response is not plain JSON'));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
