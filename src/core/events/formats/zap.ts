import type { EventInput } from '../event';
import { jsonObjectLine } from './json-line';

type Level = NonNullable<EventInput['level']>;

const LEVELS: Record<string, Level> = { debug: 'debug', info: 'info', warn: 'warn', error: 'error', dpanic: 'error', panic: 'error', fatal: 'error' };
/** Keys zap's production encoder writes for itself; the rest are the entry's fields. */
const OWN_KEYS = new Set(['level', 'ts', 'caller', 'msg', 'logger', 'stacktrace']);

/**
 * One line of a zap JSON log (etcd's `--logger zap`) as an event of `node` at `ts`, or
 * undefined when the line is not a zap entry. The caller (`raft/raft.go:923`) becomes the
 * event's source location, the entry's own fields its fields, and the time zap wrote
 * (`ts`) a field beside them, since the timeline's clock is the harness's.
 */
export function zapEvent(line: string, node: string, ts: number): EventInput | undefined {
  const entry = jsonObjectLine(line);
  if (entry === undefined) return undefined;
  if (typeof entry.msg !== 'string' || typeof entry.level !== 'string') return undefined;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) if (!OWN_KEYS.has(k)) fields[k] = v;
  if (entry.ts !== undefined) fields.zapTs = entry.ts;
  if (typeof entry.logger === 'string') fields.logger = entry.logger;
  const caller = typeof entry.caller === 'string' ? /^(.+):(\d+)$/.exec(entry.caller) : null;
  return {
    ts,
    node,
    kind: 'log',
    level: LEVELS[entry.level] ?? 'info',
    msg: entry.msg,
    ...(caller && { src: { file: caller[1] as string, line: Number(caller[2]) } }),
    ...(Object.keys(fields).length > 0 && { fields }),
  };
}
