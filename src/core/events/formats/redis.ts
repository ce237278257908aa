import type { EventInput } from '../event';

type Level = NonNullable<EventInput['level']>;

/** redis-server's level marks: `.` debug, `-` verbose, `*` notice, `#` warning. */
const LEVELS: Record<string, Level> = { '.': 'debug', '-': 'debug', '*': 'info', '#': 'warn' };
/**
 * The process's role mark: a master, a replica, a forked child (RDB, AOF), a sentinel. The
 * server's first lines, before it knows its own pid, carry the child's mark too.
 */
const ROLES: Record<string, string> = { M: 'master', S: 'replica', C: 'child', X: 'sentinel' };
/** `pid:role dd Mon yyyy hh:mm:ss.mmm <level> message` (redis-server's log, serverLogRaw). */
const LINE = /^(\d+):([MSCX]) (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) ([.\-*#]) (.*)$/;
/** `pid:signal-handler (unix time) message`: what the server writes from its signal handler. */
const SIGNAL = /^(\d+):signal-handler \((\d+)\) (.*)$/;
/** A cluster node's id: forty hex digits. */
const NODE_ID = /\b[0-9a-f]{40}\b/g;

/**
 * One line of redis-server's log as an event of `node` at `ts`, or undefined when the
 * line is not one (the start-up logo, a crash report's lines). The level mark becomes
 * the level; the process's role (master, replica, child, sentinel), its pid and the time
 * the server wrote are fields (a signal handler's lines, a warning each, carry the Unix
 * time it wrote instead), and so are the cluster node ids the line names, in order,
 * so a failover's lines can be followed across nodes.
 */
export function redisEvent(line: string, node: string, ts: number): EventInput | undefined {
  const m = LINE.exec(line);
  if (m === null) {
    const sig = SIGNAL.exec(line);
    return sig === null ? undefined : { ts, node, kind: 'log', level: 'warn', msg: sig[3] as string, fields: { redisTs: Number(sig[2]), pid: Number(sig[1]), role: 'signal-handler' } };
  }
  const msg = m[5] as string;
  const fields: Record<string, unknown> = { redisTs: m[3], pid: Number(m[1]), role: ROLES[m[2] as string] };
  const ids = msg.match(NODE_ID);
  if (ids !== null) fields.clusterNodes = ids;
  return { ts, node, kind: 'log', level: LEVELS[m[4] as string] ?? 'info', msg, fields };
}
