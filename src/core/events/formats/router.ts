import { z } from 'zod';
import type { SourceSink } from '../build';
import { VectorClock } from '../event';
import { forEachLine } from '../lines';
import type { EventRecord } from '../record';

const Action = z.enum(['recv', 'deliver', 'drop', 'duplicate', 'delay', 'reorder']);
type Action = z.infer<typeof Action>;
const ACTIONS: ReadonlySet<unknown> = new Set(Action.options);

/** One line of router.jsonl (core/cluster/router.ts writes them): a step of one message. */
const RouterRecord = z.looseObject({
  ts: z.number(),
  action: Action,
  msgId: z.string(),
  from: z.string(),
  to: z.string(),
  type: z.string(),
  vc: VectorClock.optional(),
});
type RouterRecord = z.infer<typeof RouterRecord>;

/** Same as RouterRecord.safeParse(value).success without zod's cost per line; zod explains the failures. */
function isRouterRecord(value: unknown): value is RouterRecord {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.ts === 'number' &&
    ACTIONS.has(v.action) &&
    typeof v.msgId === 'string' &&
    typeof v.from === 'string' &&
    typeof v.to === 'string' &&
    typeof v.type === 'string' &&
    (v.vc === undefined || VectorClock.safeParse(v.vc).success)
  );
}

/**
 * The event a router step stands for. The router sees a message when the sender
 * hands it over (`recv`: the send) and when it passes it on (`deliver`: the
 * receive), so on its own router.jsonl gives the ground-truth message arrows; its
 * faults are the same events the router also emits into events.jsonl.
 */
function toRecord(r: RouterRecord): EventRecord {
  const { ts, action, msgId, from, to, type, vc, body, ...extra } = r;
  if (action === 'recv') return { ts, node: from, kind: 'send', msg: type, msgId, peer: to, ...(vc && { vc }), fields: { body } };
  if (action === 'deliver') return { ts, node: to, kind: 'recv', msg: type, msgId, peer: from, ...(Object.keys(extra).length > 0 && { fields: extra }) };
  return { ts, node: 'router', kind: 'fault', level: action === 'drop' ? 'warn' : 'info', msg: action, msgId, peer: to, fields: { from, to, type, ...extra } };
}

function step(action: Action): 'send' | 'recv' | 'fault' {
  return action === 'recv' ? 'send' : action === 'deliver' ? 'recv' : 'fault';
}

/** Reads router.jsonl, leaving out steps the event files read before already show. */
export async function readRouterJsonl(file: string, sink: SourceSink): Promise<void> {
  await forEachLine(file, (line, lineNo) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      sink.bad(lineNo, `not JSON (${(err as Error).message}); expected one router record per line`);
      return;
    }
    if (!isRouterRecord(value)) {
      const parsed = RouterRecord.safeParse(value);
      const why = parsed.success ? 'unexpected shape' : parsed.error.issues.map((i) => `${i.path.join('.') || 'record'}: ${i.message}`).join('; ');
      sink.bad(lineNo, `not a router record (${why}); expected {"ts":…,"action":"recv|deliver|drop|duplicate|delay|reorder","msgId":…,"from":…,"to":…,"type":…}`);
      return;
    }
    if (sink.seenInEvents(step(value.action), value.msgId)) return;
    const record = toRecord(value);
    sink.add(record, JSON.stringify(record), lineNo);
  });
}
