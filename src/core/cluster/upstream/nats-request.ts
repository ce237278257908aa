import * as net from 'node:net';
import { UserError } from '../../errors';
import type { Json } from '../../../runtime/types';

/**
 * One request over the NATS text protocol (the client side of a `client[].nats`
 * operation): connect, CONNECT, subscribe to a fresh inbox, publish the message with the
 * inbox as its reply subject, and take the first message on the inbox. Enough for
 * JetStream's API and for publishing to a stream (the PubAck is the reply); no
 * reconnects, no flow control.
 */
export interface NatsRequest {
  host: string;
  port: number;
  subject: string;
  payload: Buffer;
  headers?: Record<string, string>;
  timeoutMs: number;
}

export interface NatsReply {
  /** The status of a header-only reply (503 when nothing listens on the subject), 200 otherwise. */
  status: number;
  /** The status line's text, when there is one ("No Responders"). */
  description?: string;
  headers: Record<string, string>;
  data: Buffer;
}

const CRLF = '\r\n';

/** The request's subject: `{field}` filled from a body field (string or number); a missing field is an error. */
export function natsSubject(template: string, body: Record<string, Json>): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = body[name];
    if (typeof v !== 'string' && typeof v !== 'number') throw new UserError(`the subject ${template} needs "${name}" (a string or number) in the body`);
    const s = String(v);
    if (s === '' || /\s/.test(s)) throw new UserError(`"${name}" must be a subject token without spaces, not ${JSON.stringify(s)}`);
    return s;
  });
}

/** The message of a body: its `payload` (a string as is, anything else as JSON, absent: empty) and its `headers`. */
export function natsMessage(body: Record<string, Json>): { payload: Buffer; headers?: Record<string, string> } {
  const p = body.payload;
  const payload = p === undefined || p === null ? Buffer.alloc(0) : Buffer.from(typeof p === 'string' ? p : JSON.stringify(p));
  const h = body.headers;
  if (h === undefined || h === null) return { payload };
  if (typeof h !== 'object' || Array.isArray(h)) throw new UserError('"headers" must be an object of strings');
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (!/^[!-9;-~]+$/.test(k) || typeof v !== 'string' || /[\r\n]/.test(v)) throw new UserError(`header ${JSON.stringify(k)} must be a token with a one-line string value`);
    headers[k] = v;
  }
  return { payload, headers };
}

/** The header block of a message (`NATS/1.0` and `Name: value` lines). */
export function encodeHeaders(headers: Record<string, string>): Buffer {
  return Buffer.from(`NATS/1.0${CRLF}${Object.entries(headers).map(([k, v]) => `${k}: ${v}${CRLF}`).join('')}${CRLF}`);
}

/** A header block as the server sends it: status and description from the first line, then the headers. */
export function decodeHeaders(block: string): { status: number; description?: string; headers: Record<string, string> } {
  const lines = block.split(CRLF);
  const first = /^NATS\/1\.0(?: +(\d{3}))?(?: +(.*))?$/.exec(lines[0] ?? '');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  const status = first?.[1] !== undefined ? Number(first[1]) : 200;
  return { status, ...(first?.[2] && { description: first[2] }), headers };
}

/** Sends one request and resolves with its reply; rejects on a protocol error, a closed connection or the timeout. */
export function natsRequest(req: NatsRequest): Promise<NatsReply> {
  return new Promise((resolve, reject) => {
    const inbox = `_INBOX.ddbench.${Math.random().toString(36).slice(2, 12)}`;
    const sock = net.connect({ host: req.host, port: req.port });
    let buf = Buffer.alloc(0);
    let connected = false;
    let settled = false;
    const finish = (reply?: NatsReply, err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(reply as NatsReply);
    };
    const timer = setTimeout(() => {
      const e = new Error(`no reply within ${req.timeoutMs} ms`);
      e.name = 'TimeoutError';
      finish(undefined, e);
    }, req.timeoutMs);
    sock.on('error', (err) => finish(undefined, err));
    sock.on('close', () => finish(undefined, new Error('the server closed the connection')));
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const eol = buf.indexOf(CRLF);
        if (eol < 0) return;
        const line = buf.subarray(0, eol).toString();
        if (line.startsWith('INFO') && !connected) {
          connected = true;
          sock.write(`CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,"protocol":1,"name":"ddbench"}${CRLF}SUB ${inbox} 1${CRLF}`);
          if (req.headers !== undefined && Object.keys(req.headers).length > 0) {
            const h = encodeHeaders(req.headers);
            sock.write(`HPUB ${req.subject} ${inbox} ${h.length} ${h.length + req.payload.length}${CRLF}`);
            sock.write(Buffer.concat([h, req.payload, Buffer.from(CRLF)]));
          } else {
            sock.write(`PUB ${req.subject} ${inbox} ${req.payload.length}${CRLF}`);
            sock.write(Buffer.concat([req.payload, Buffer.from(CRLF)]));
          }
        } else if (line === 'PING') {
          sock.write(`PONG${CRLF}`);
        } else if (line.startsWith('-ERR')) {
          return finish(undefined, new Error(`the server refused the request: ${line.slice(5).trim()}`));
        } else if (line.startsWith('MSG ') || line.startsWith('HMSG ')) {
          // MSG <subject> <sid> [reply] <bytes>; HMSG <subject> <sid> [reply] <header bytes> <total bytes>
          const parts = line.split(/ +/).filter((p) => p !== '');
          const withHeaders = parts[0] === 'HMSG';
          const total = Number(parts[parts.length - 1]);
          const headerBytes = withHeaders ? Number(parts[parts.length - 2]) : 0;
          if (buf.length < eol + 2 + total + 2) return;
          const message = buf.subarray(eol + 2, eol + 2 + total);
          const h = withHeaders ? decodeHeaders(message.subarray(0, headerBytes).toString()) : { status: 200, headers: {} };
          return finish({ ...h, data: Buffer.from(message.subarray(headerBytes)) });
        }
        buf = buf.subarray(eol + 2);
      }
    });
  });
}
