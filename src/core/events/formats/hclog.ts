import type { EventInput } from '../event';
import { jsonObjectLine } from './json-line';

type Level = NonNullable<EventInput['level']>;

const LEVELS: Record<string, Level> = { trace: 'debug', debug: 'debug', info: 'info', warn: 'warn', error: 'error' };
/** Keys hclog's JSON format writes for itself; the rest are the entry's key/value pairs. */
const OWN_KEYS = new Set(['@level', '@message', '@timestamp', '@module', '@caller']);

/**
 * One line of an hclog JSON log (hashicorp/raft's logger with `JSONFormat`) as an event
 * of `node` at `ts`, or undefined when the line is not an hclog entry. The caller becomes
 * the event's source location, the module (`raft`, `raft.kv`) and the entry's pairs its
 * fields, and the time hclog wrote a field beside them, since the timeline's clock is the
 * harness's.
 */
export function hclogEvent(line: string, node: string, ts: number): EventInput | undefined {
  const entry = jsonObjectLine(line);
  if (entry === undefined) return undefined;
  const msg = entry['@message'];
  const level = entry['@level'];
  if (typeof msg !== 'string' || typeof level !== 'string') return undefined;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) if (!OWN_KEYS.has(k)) fields[k] = v;
  if (typeof entry['@module'] === 'string') fields.module = entry['@module'];
  if (entry['@timestamp'] !== undefined) fields.hclogTs = entry['@timestamp'];
  const caller = typeof entry['@caller'] === 'string' ? /^(.+):(\d+)$/.exec(entry['@caller']) : null;
  return {
    ts,
    node,
    kind: 'log',
    level: LEVELS[level] ?? 'info',
    msg,
    ...(caller && { src: { file: caller[1] as string, line: Number(caller[2]) } }),
    ...(Object.keys(fields).length > 0 && { fields }),
  };
}
