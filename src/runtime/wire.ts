import { z } from 'zod';
import type { Json } from './types';

/**
 * The router protocol: one TCP connection per endpoint (node or client), one JSON
 * object per line, discriminated by `t`.
 *
 *   endpoint -> router: hello, msg
 *   router -> endpoint: welcome (hello accepted), msg, skew (clock offset for rt.now)
 */

export const JsonValue: z.ZodType<Json> = z.json();

export const VectorClockFrame = z.record(z.string(), z.number().int().nonnegative());

export const HelloFrame = z.object({
  t: z.literal('hello'),
  node: z.string().min(1),
  role: z.enum(['node', 'client']),
  /** Port of the node's debug-state endpoint (nodes only). */
  statePort: z.number().int().positive().optional(),
  pid: z.number().int().positive().optional(),
  /** Which incarnation of the node this is (a pid means little inside a container). */
  incarnation: z.number().int().nonnegative().optional(),
});
export type HelloFrame = z.infer<typeof HelloFrame>;

/** A message between endpoints. `msgId` is unique per run and opaque to readers. */
export const MsgFrame = z.object({
  t: z.literal('msg'),
  msgId: z.string().min(1),
  from: z.string().min(1),
  to: z.string().min(1),
  type: z.string().min(1),
  body: JsonValue,
  vc: VectorClockFrame.optional(),
});
export type MsgFrame = z.infer<typeof MsgFrame>;

export const WelcomeFrame = z.object({ t: z.literal('welcome') });

/** Sets (not adds to) the offset in ms the node's `rt.now()` adds to its wall clock. */
export const SkewFrame = z.object({ t: z.literal('skew'), offsetMs: z.number() });
export type SkewFrame = z.infer<typeof SkewFrame>;

export const ToRouterFrame = z.discriminatedUnion('t', [HelloFrame, MsgFrame]);
export type ToRouterFrame = z.infer<typeof ToRouterFrame>;

export const FromRouterFrame = z.discriminatedUnion('t', [WelcomeFrame, MsgFrame, SkewFrame]);
export type FromRouterFrame = z.infer<typeof FromRouterFrame>;

export function encodeFrame(frame: ToRouterFrame | FromRouterFrame): string {
  return JSON.stringify(frame) + '\n';
}

/** Parses one line with `schema`; a bad line yields an error message instead of throwing. */
export function decodeFrame<T>(schema: z.ZodType<T>, line: string): { ok: true; frame: T } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, error: `not JSON: ${line.slice(0, 200)}` };
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? { ok: true, frame: parsed.data } : { ok: false, error: z.prettifyError(parsed.error) };
}
