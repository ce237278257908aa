import type { EventInput } from '../event';

type Level = NonNullable<EventInput['level']>;

const LEVELS: Record<string, Level> = { TRC: 'debug', DBG: 'debug', INF: 'info', WRN: 'warn', ERR: 'error', FTL: 'error' };
/** `[pid] 2022/12/20 10:00:00.123456 [INF] message` (nats-server's default text logger). */
const LINE = /^\[(\d+)\] (\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\.\d+) \[(TRC|DBG|INF|WRN|ERR|FTL)\] (.*)$/;
/** A Raft node's lines: `RAFT [<peer> - <group>] ...`; a connection's: `<addr> - <kind>:<id> - ...`. */
const RAFT = /^RAFT \[([^\s\]]+) - ([^\]]+)\] /;
const CONN = /^(\S+:\d+) - (cid|rid|lid|gid|wid|mid):(\d+) - /;

/**
 * One line of nats-server's text log as an event of `node` at `ts`, or undefined when the
 * line is not one. The level tag becomes the level; a Raft node's peer id and group
 * (`S-R3M-...` a stream's, `C-R3M-...` a consumer's, `_meta_` the cluster's) and a
 * connection's address and id become fields; the time the server wrote is a field beside
 * them, since the timeline's clock is the harness's.
 */
export function natsEvent(line: string, node: string, ts: number): EventInput | undefined {
  const m = LINE.exec(line);
  if (m === null) return undefined;
  const msg = m[4] as string;
  const fields: Record<string, unknown> = { natsTs: m[2], pid: Number(m[1]) };
  const raft = RAFT.exec(msg);
  if (raft !== null) {
    fields.raftPeer = raft[1];
    fields.raftGroup = raft[2];
  }
  const conn = raft === null ? CONN.exec(msg) : null;
  if (conn !== null) {
    fields.remote = conn[1];
    fields.conn = `${conn[2]}:${conn[3]}`;
  }
  return { ts, node, kind: 'log', level: LEVELS[m[3] as string] ?? 'info', msg, fields };
}
