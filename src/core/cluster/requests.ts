import type { Json } from '../../runtime/types';
import type { ClientOperation } from '../bugs/manifest';
import { UserError } from '../errors';
import type { ClusterClient, ClusterControls } from './types';

/**
 * Requests a person types to a running cluster: `<node> <Type> [field=value ...]`, for
 * example `n1 Put key=a value=1`. The system's manifest declares its operations and
 * their fields' types (system.json `client`), so a request is checked before it is sent
 * and a mistake is named in a sentence. The editor's request console and `ddbench up`
 * read the same lines.
 */
export interface ParsedRequest {
  node: string;
  type: string;
  body: Record<string, Json>;
}

/** The request a console offers to complete: the operation's fields with empty values. */
export function requestTemplate(op: ClientOperation, node: string): string {
  return [node, op.type, ...Object.keys(op.args).map((k) => `${k}=`)].join(' ');
}

/** `key, value, lease?` — an operation's fields for a one-line description. */
export function argsLine(op: ClientOperation): string {
  return Object.entries(op.args)
    .map(([k, t]) => `${k}${t.endsWith('?') ? '?' : ''}: ${t.replace(/\?$/, '')}`)
    .join(', ');
}

/** Splits on spaces outside double quotes; `value="a b"` keeps its space. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /(?:[^\s"]+|"(?:[^"\\]|\\.)*")+/g;
  for (const m of line.matchAll(re)) out.push(m[0]);
  return out;
}

function unquote(text: string): string {
  if (!/^".*"$/.test(text)) return text;
  try {
    return JSON.parse(text) as string;
  } catch {
    return text.slice(1, -1);
  }
}

function valueOf(field: string, spec: string, raw: string): Json {
  const type = spec.replace(/\?$/, '');
  const text = raw.startsWith('"') ? unquote(raw) : raw;
  if (type === 'string') return text;
  if (type === 'number') {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new UserError(`${field} is a number; "${text}" is not one`);
    return n;
  }
  if (type === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new UserError(`${field} is true or false, not "${text}"`);
    return text === 'true';
  }
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new UserError(`${field} takes JSON (an object, a list, a number or a quoted string); "${text}" is not JSON`);
  }
}

/**
 * Parses a request line against the system's operations and nodes; a UserError says
 * what is wrong: an unknown node or operation (with the known ones), a field that is
 * missing, unknown or of the wrong type.
 */
export function parseRequest(line: string, ops: readonly ClientOperation[], nodes: readonly string[]): ParsedRequest {
  const [node, type, ...rest] = words(line.trim());
  if (!node) throw new UserError(`type a request: <node> <operation> [field=value ...], e.g. ${ops[0] ? requestTemplate(ops[0], nodes[0] ?? 'n1') : 'n1 Status'}`);
  if (!nodes.includes(node)) throw new UserError(`no node "${node}" in this cluster; its nodes are ${nodes.join(', ')}`);
  if (!type) throw new UserError(`which operation? ${ops.map((o) => o.type).join(', ')}`);
  const op = ops.find((o) => o.type === type) ?? ops.find((o) => o.type.toLowerCase() === type.toLowerCase());
  if (!op) throw new UserError(`"${type}" is not an operation of this system; it has ${ops.map((o) => o.type).join(', ')}`);
  const body: Record<string, Json> = {};
  for (const word of rest) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new UserError(`"${word}" is not field=value (${op.type} takes ${argsLine(op) || 'no fields'})`);
    const field = word.slice(0, eq);
    const spec = op.args[field];
    if (spec === undefined) throw new UserError(`${op.type} has no field "${field}"; it takes ${argsLine(op) || 'no fields'}`);
    const raw = word.slice(eq + 1);
    // An empty value (left from the template) is no value; `field=""` is the empty string.
    if (raw === '') continue;
    body[field] = valueOf(field, spec, raw);
  }
  const missing = Object.entries(op.args)
    .filter(([k, t]) => !t.endsWith('?') && !(k in body))
    .map(([k]) => k);
  if (missing.length > 0) throw new UserError(`${op.type} needs ${missing.join(', ')} (it takes ${argsLine(op)})`);
  return { node, type: op.type, body };
}

/** How long the console waits for a reply before saying so. */
export const REQUEST_TIMEOUT_MS = 5000;

export interface RequestOutcome {
  request: ParsedRequest;
  /** The reply's body, or undefined when none came in time. */
  reply?: Json;
  error?: string;
  ms: number;
}

/**
 * A person's requests to a running cluster, sent through the router as the client
 * `console`, so each request and reply is a message on the timeline like any other.
 */
export class RequestConsole {
  private client: Promise<ClusterClient> | undefined;

  constructor(
    private readonly cluster: Pick<ClusterControls, 'client'>,
    private readonly ops: readonly ClientOperation[],
    private readonly nodes: readonly string[],
  ) {}

  /** Parses the line (a UserError for a bad one, nothing sent) and sends it. */
  async send(line: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<RequestOutcome> {
    const request = parseRequest(line, this.ops, this.nodes);
    this.client ??= this.cluster.client('console');
    const client = await this.client;
    const started = performance.now();
    try {
      const reply = await client.request(request.node, request.type, request.body, timeoutMs);
      return { request, reply, ms: Math.round(performance.now() - started) };
    } catch (err) {
      return { request, error: err instanceof Error ? err.message : String(err), ms: Math.round(performance.now() - started) };
    }
  }

  close(): void {
    void this.client?.then((c) => c.close(), () => undefined);
    this.client = undefined;
  }
}
