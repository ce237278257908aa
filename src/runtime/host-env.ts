import path from 'node:path';
import { z } from 'zod';
import { JsonValue } from './wire';

const absolutePath = (what: string) => z.string().refine((p) => path.isAbsolute(p), `${what} must be an absolute path`);

const jsonObject = z.string().transform((text, ctx) => {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
    return z.NEVER;
  }
  const parsed = z.record(z.string(), JsonValue).safeParse(raw);
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
    return z.NEVER;
  }
  return parsed.data;
});

const hostPort = z
  .string()
  .regex(/^[^:]+:\d+$/, 'must be host:port')
  .transform((s) => {
    const colon = s.lastIndexOf(':');
    return { host: s.slice(0, colon), port: Number(s.slice(colon + 1)) };
  });

/** A socket address: `host:port`, or `unix:<path>` for a Unix socket (a named pipe on Windows). */
const endpoint = z.union([
  z.string().startsWith('unix:').transform((s) => ({ path: s.slice('unix:'.length) })).pipe(z.object({ path: z.string().min(1, 'needs a socket path after unix:') })),
  hostPort,
]);
export type Endpoint = { path: string } | { host: string; port: number };

const count = z.string().regex(/^\d+$/, 'must be a non-negative integer').transform(Number);

/** The environment the cluster gives a live host; see process-cluster.ts for the writer. */
export const HostEnv = z
  .object({
    DDBENCH_NODE_ID: z.string().min(1),
    DDBENCH_NODES: z
      .string()
      .transform((s) => s.split(',').map((n) => n.trim()).filter((n) => n.length > 0))
      .pipe(z.array(z.string()).min(1, 'must list at least one node')),
    DDBENCH_ROUTER: endpoint,
    /** Where the state endpoint listens: a Unix socket the harness gave the sandbox, or a port a container publishes. */
    DDBENCH_STATE_LISTEN: endpoint.default({ host: '127.0.0.1', port: 0 }),
    DDBENCH_ENTRY: absolutePath('DDBENCH_ENTRY'),
    DDBENCH_CONFIG: jsonObject.default({}),
    DDBENCH_DATA_DIR: absolutePath('DDBENCH_DATA_DIR'),
    DDBENCH_SEED: z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number),
    DDBENCH_T0: z.string().transform(Number).pipe(z.number().positive('must be epoch milliseconds')),
    DDBENCH_SRC_ROOT: absolutePath('DDBENCH_SRC_ROOT'),
    DDBENCH_INCARNATION: count.default(0),
    DDBENCH_VC_START: count.default(0),
  })
  .refine((env) => env.DDBENCH_NODES.includes(env.DDBENCH_NODE_ID), {
    message: 'DDBENCH_NODES must include DDBENCH_NODE_ID',
    path: ['DDBENCH_NODES'],
  });
export type HostEnv = z.infer<typeof HostEnv>;

export function parseHostEnv(env: NodeJS.ProcessEnv): { ok: true; env: HostEnv } | { ok: false; error: string } {
  const parsed = HostEnv.safeParse(env);
  return parsed.success ? { ok: true, env: parsed.data } : { ok: false, error: z.prettifyError(parsed.error) };
}
