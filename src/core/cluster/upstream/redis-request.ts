import * as net from 'node:net';
import { UserError } from '../../errors';
import type { Json } from '../../../runtime/types';

/**
 * One command over RESP2, Redis's protocol (the client side of a `client[].redis`
 * operation): connect, send the command as an array of bulk strings, read one reply,
 * close. No pipelining, no reconnects, no RESP3: enough for a cluster's commands
 * (CLUSTER ..., INFO, SET with WAIT) to one node at a time. MOVED and ASK replies are
 * errors like any other; the scenario decides where to send a command.
 */
export interface RedisRequest {
  host: string;
  port: number;
  command: readonly string[];
  timeoutMs: number;
}

/** An error reply (`-ERR ...`, `-MOVED 3999 10.0.0.2:6379`, `-CLUSTERDOWN ...`). */
export class RedisErrorReply {
  constructor(readonly message: string) {}
}

/** A RESP2 reply: simple and bulk strings as text, integers as numbers, nil as null, arrays nested. */
export type RespValue = string | number | null | RedisErrorReply | RespValue[];

const CRLF = '\r\n';
const WORD = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const FIELD = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

function scalar(template: string, name: string, v: Json | undefined): string {
  if (typeof v !== 'string' && typeof v !== 'number') throw new UserError(`the command ${template} needs "${name}" (a string or number) in the body`);
  return String(v);
}

/** What a command's `{ip:field}` and `{port:name}` stand for: a node's address, a named port's number. */
export interface RedisPlaceholders {
  ip(node: string): string;
  port(name: string): number;
}

/**
 * The command's words from its template and a body: a word that is `{field}` is the field
 * (a string or number, or an array of them for as many words); `{field}` inside a word is
 * filled in; `{ip:field}` is the address of the node the field names, and `{port:name}`
 * the number of the nodes' port of that name (CLUSTER MEET's arguments). A missing field
 * is the caller's error, before anything is sent.
 */
export function redisCommand(template: readonly string[], body: Record<string, Json>, at?: RedisPlaceholders): string[] {
  const shown = template.join(' ');
  const network = (what: string): RedisPlaceholders => {
    if (at === undefined) throw new UserError(`the command ${shown} names ${what}, which only a running cluster knows`);
    return at;
  };
  return template.flatMap((word) => {
    const whole = WORD.exec(word);
    if (whole !== null) {
      const name = whole[1] as string;
      const v = body[name];
      return Array.isArray(v) ? v.map((x) => scalar(shown, name, x)) : [scalar(shown, name, v)];
    }
    return [
      word
        .replace(/\{ip:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => network('a node address').ip(scalar(shown, name, body[name])))
        .replace(/\{port:([A-Za-z0-9._+-]+)\}/g, (_, name: string) => String(network('a port').port(name)))
        .replace(FIELD, (_, name: string) => scalar(shown, name, body[name])),
    ];
  });
}

/** A command as RESP sends it: an array of bulk strings. */
export function encodeCommand(words: readonly string[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${words.length}${CRLF}`)];
  for (const w of words) {
    const b = Buffer.from(w);
    parts.push(Buffer.from(`$${b.length}${CRLF}`), b, Buffer.from(CRLF));
  }
  return Buffer.concat(parts);
}

/** One reply at `at` in `buf`, and where it ends; undefined while the reply is incomplete. Throws on bytes that are not RESP. */
export function decodeReply(buf: Buffer, at = 0): { value: RespValue; end: number } | undefined {
  const eol = buf.indexOf(CRLF, at);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[at] as number);
  const line = buf.subarray(at + 1, eol).toString();
  const next = eol + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new RedisErrorReply(line), end: next };
    case ':':
      return { value: integer(line), end: next };
    case '$': {
      const n = integer(line);
      if (n < 0) return { value: null, end: next };
      if (buf.length < next + n + 2) return undefined;
      return { value: buf.subarray(next, next + n).toString(), end: next + n + 2 };
    }
    case '*': {
      const n = integer(line);
      if (n < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let end = next;
      for (let i = 0; i < n; i++) {
        const item = decodeReply(buf, end);
        if (item === undefined) return undefined;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default:
      throw new Error(`not a RESP reply: ${JSON.stringify(buf.subarray(at, Math.min(eol, at + 40)).toString())}`);
  }
}

function integer(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new Error(`not a RESP integer: ${JSON.stringify(text)}`);
  return Number(text);
}

/** A reply as JSON: errors inside arrays become `{ error }`. */
export function replyJson(v: RespValue): Json {
  if (v instanceof RedisErrorReply) return { error: v.message };
  if (Array.isArray(v)) return v.map(replyJson);
  return v;
}

/** Sends one command and resolves with its reply (an error reply too); rejects on a closed connection, bytes that are not RESP, or the timeout. */
export function redisRequest(req: RedisRequest): Promise<RespValue> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: req.host, port: req.port });
    let buf = Buffer.alloc(0);
    let settled = false;
    const finish = (value?: RespValue, err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(value as RespValue);
    };
    const timer = setTimeout(() => {
      const e = new Error(`no reply within ${req.timeoutMs} ms`);
      e.name = 'TimeoutError';
      finish(undefined, e);
    }, req.timeoutMs);
    sock.on('connect', () => sock.write(encodeCommand(req.command)));
    sock.on('error', (err) => finish(undefined, err));
    sock.on('close', () => finish(undefined, new Error('the server closed the connection')));
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        const reply = decodeReply(buf);
        if (reply !== undefined) finish(reply.value);
      } catch (err) {
        finish(undefined, err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}
