import { UserError } from '../../errors';
import type { SourceSink } from '../build';
import { EventKind, type Level } from '../event';
import { forEachLine } from '../lines';
import { isEventRecord, whyNotEventRecord, type EventRecord } from '../record';
import { FLAG_SYNTHETIC_TIME } from '../store';

/** ShiViz's default parser: an event line, then a `host {"host":n,...}` line. */
export const SHIVIZ_DEFAULT_REGEX = '(?<event>.*)\\n(?<host>\\S*) (?<clock>{.*})';

/** Groups with a meaning; every other named group becomes a field, as in ShiViz. */
const RESERVED = new Set(['host', 'event', 'clock', 'ts', 'time', 'level', 'kind', 'msgId', 'peer', 'ddbench']);
/** A record may span at most this many lines (a regex with more `\n` is refused). */
const MAX_RECORD_LINES = 64;

export interface TextLogOptions {
  /** The parser regex with named groups (JavaScript syntax, as ShiViz's). */
  regex: string;
  /** ShiViz's execution delimiter regex: a matching line starts a new execution. */
  delimiter?: string;
  /** Which execution to read when the log holds several: its label or 1-based number. Default: the first. */
  execution?: string | number;
  /** Lines at the top that are not log (a ShiViz file's regex and delimiter lines). */
  headerLines?: number;
}

export interface CompiledLogRegex {
  regex: RegExp;
  /** How many lines one record can span. */
  lines: number;
  source: string;
}

/** Compiles a user's log regex, or says what is wrong with it. */
export function compileLogRegex(source: string): CompiledLogRegex {
  let regex: RegExp;
  try {
    // 'm' as ShiViz uses it; 'y' so a record must start where the previous one ended.
    regex = new RegExp(source, 'my');
  } catch (err) {
    throw new UserError(`the log regex ${JSON.stringify(source)} is not a valid JavaScript regular expression: ${(err as Error).message}`);
  }
  const names = [...source.matchAll(/\(\?<([A-Za-z_$][\w$]*)>/g)].map((m) => m[1]);
  const missing = ['host', 'event'].filter((name) => !names.includes(name));
  if (missing.length > 0 && !names.includes('ddbench')) {
    throw new UserError(
      `the log regex needs the named groups host (the node) and event (the message)${missing.length === 1 ? `; ${missing[0]} is missing` : ''}, and clock for a vector clock like {"n1":3}; ` +
        `it has ${names.length === 0 ? 'no named groups' : names.join(', ')}. Example: ^(?<host>\\S+) (?<clock>\\{.*?\\}) (?<event>.*)$`,
    );
  }
  const lines = source.split('\\n').length;
  if (lines > MAX_RECORD_LINES) throw new UserError(`the log regex spans ${lines} lines; at most ${MAX_RECORD_LINES} are supported`);
  return { regex, lines, source };
}

function compileDelimiter(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new UserError(`the execution delimiter ${JSON.stringify(source)} is not a valid JavaScript regular expression: ${(err as Error).message}`);
  }
}

/** The vector clock in a clock group, or why it is not one. */
function parseClockText(text: string): { vc: Record<string, number> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // TLA+ and some loggers escape the quotes; ShiViz accepts that too.
    try {
      value = JSON.parse(text.replace(/\\"/g, '"'));
    } catch {
      return { error: `the clock ${JSON.stringify(text)} is not JSON (${(err as Error).message}); expected an object of counters like {"n1":3,"n2":1}` };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { error: `the clock ${JSON.stringify(text)} is not an object; expected counters like {"n1":3,"n2":1}` };
  }
  const vc: Record<string, number> = {};
  for (const [host, count] of Object.entries(value)) {
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
      return { error: `the clock ${JSON.stringify(text)} has ${JSON.stringify(host)}: ${JSON.stringify(count)}; every counter must be a whole number >= 0` };
    }
    // ShiViz drops zero entries: a host never heard of and a host at 0 are the same.
    if (count > 0) vc[host] = count;
  }
  return { vc };
}

const LEVEL_WORDS: Record<string, Level> = {
  trace: 'debug',
  debug: 'debug',
  fine: 'debug',
  finer: 'debug',
  finest: 'debug',
  info: 'info',
  notice: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  err: 'error',
  severe: 'error',
  fatal: 'error',
  critical: 'error',
  crit: 'error',
};

function levelFromWord(word: string): Level | undefined {
  return LEVEL_WORDS[word.trim().toLowerCase()];
}

/**
 * A date or time as epoch microseconds (NaN when it is none). log4j's default layout
 * writes `2024-01-02 10:11:12,345`, which `Date.parse` rejects for the comma; and
 * `Date.parse` drops digits past the millisecond, which distributed logs (ShiViz's
 * examples among them) have, so those are added back.
 */
function parseDateUs(text: string): number {
  const seconds = /(\d:\d\d)[.,](\d+)/.exec(text);
  const ms = Date.parse(seconds === null ? text : text.replace(seconds[0], `${seconds[1]}.${seconds[2]}`));
  const belowMs = seconds === null ? 0 : Number(seconds[2].padEnd(6, '0').slice(3, 6));
  return ms * 1000 + belowMs;
}

/**
 * The epoch microseconds of a `date` group, or undefined when it does not look like a
 * date or time: `Date.parse` takes a bare "7" for a year, so a calendar date or a clock
 * time must be in the text.
 */
function dateGroupUs(text: string): number | undefined {
  if (!/\d{4}-\d\d-\d\d|\d\d?\/\d\d?\/\d{2,4}|\d:\d\d/.test(text)) return undefined;
  const us = parseDateUs(text);
  return Number.isFinite(us) ? us : undefined;
}

type Groups = Record<string, string | undefined>;

/** Turns one match into an event record, or says why it cannot. */
function recordOf(groups: Groups, ordinal: number, sink: SourceSink): { record: EventRecord; flags: number; raw?: string } | { error: string } {
  if (groups.ddbench !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(groups.ddbench);
    } catch (err) {
      return { error: `the ddbench group is not JSON (${(err as Error).message})` };
    }
    return isEventRecord(value) ? { record: value, flags: 0, raw: groups.ddbench } : { error: `the ddbench group: ${whyNotEventRecord(value)}` };
  }
  const host = groups.host ?? '';
  if (host === '') return { error: 'the host group matched nothing; every event needs the node it happened on' };
  const record: EventRecord = { ts: ordinal, node: host, kind: 'log', msg: groups.event ?? '' };
  let flags = FLAG_SYNTHETIC_TIME;
  if (groups.clock !== undefined) {
    const clock = parseClockText(groups.clock);
    if ('error' in clock) return clock;
    record.vc = clock.vc;
  }
  if (groups.ts !== undefined) {
    const ts = Number(groups.ts);
    if (groups.ts.trim() === '' || !Number.isFinite(ts)) return { error: `the ts group ${JSON.stringify(groups.ts)} is not a number (microseconds); use a time group for dates` };
    record.ts = ts;
    flags = 0;
  } else if (groups.time !== undefined) {
    const asNumber = Number(groups.time);
    const us = groups.time.trim() !== '' && Number.isFinite(asNumber) ? asNumber * 1000 : parseDateUs(groups.time);
    if (!Number.isFinite(us)) return { error: `the time group ${JSON.stringify(groups.time)} is not a date or time (ISO 8601, or epoch milliseconds)` };
    record.ts = sink.fromEpoch(us);
    flags = 0;
  }
  // ShiViz's own examples name their time group `date`; it is the time only when it reads as one, else it stays a field.
  const dateUs = groups.ts === undefined && groups.time === undefined && groups.date !== undefined ? dateGroupUs(groups.date) : undefined;
  if (dateUs !== undefined) {
    record.ts = sink.fromEpoch(dateUs);
    flags = 0;
  }
  const fields: Record<string, string> = {};
  if (groups.level !== undefined) {
    const level = levelFromWord(groups.level);
    if (level !== undefined) record.level = level;
    else fields.level = groups.level;
  }
  if (groups.kind !== undefined) {
    const kind = EventKind.safeParse(groups.kind);
    if (!kind.success) return { error: `the kind group ${JSON.stringify(groups.kind)} is not one of ${EventKind.options.join(', ')}` };
    record.kind = kind.data;
  }
  if (groups.msgId) record.msgId = groups.msgId;
  if (groups.peer) record.peer = groups.peer;
  for (const [name, value] of Object.entries(groups)) {
    if (value !== undefined && !RESERVED.has(name) && !(name === 'date' && dateUs !== undefined)) fields[name] = value;
  }
  if (Object.keys(fields).length > 0) record.fields = fields;
  return { record, flags };
}

/**
 * Reads a plain-text log through a regex with named groups, the way ShiViz does but
 * streaming: a record starts on a line (at its start, or further in, as ShiViz's
 * search finds it after stray characters); lines no record covers (banners, stack
 * traces) are skipped as ShiViz skips them, but counted in a note with the first of
 * them, and when nothing matches at all the first is reported as a bad line. With a
 * delimiter, one execution is read (`loadExecutions` reads several, to show side
 * by side).
 */
export async function readTextLog(file: string, sink: SourceSink, opts: TextLogOptions): Promise<void> {
  const parser = compileLogRegex(opts.regex);
  const delimiter = opts.delimiter ? compileDelimiter(opts.delimiter) : undefined;
  const pending: { text: string; lineNo: number }[] = [];
  // The same regex unanchored: a record may begin after stray characters on its first line.
  const search = new RegExp(parser.source, 'm');
  let skipped = 0;
  let firstSkipped: { lineNo: number; why: string } | undefined;
  /** Labels of the executions met so far; the one being read is the last. */
  const executions: string[] = [];
  let ordinal = 0;

  const isChosen = (): boolean => {
    const wanted = opts.execution ?? 1;
    return typeof wanted === 'number' ? executions.length === wanted : executions[executions.length - 1] === wanted;
  };

  /** Matches a record at the first pending line, or reports that line; false when more lines are needed. */
  const matchFirst = (final: boolean): boolean => {
    const window = pending.slice(0, parser.lines);
    if (!final && window.length < parser.lines) return false;
    const text = window.map((l) => l.text).join('\n');
    parser.regex.lastIndex = 0;
    let m = parser.regex.exec(text);
    if (m === null || m[0] === '') {
      m = search.exec(text);
      if (m !== null && m.index > window[0].text.length) m = null;
    }
    if (m === null || m[0] === '') {
      const first = pending.shift();
      if (first !== undefined) {
        skipped++;
        const shape = parser.lines > 1 ? ` (a record is ${parser.lines} lines)` : '';
        firstSkipped ??= { lineNo: first.lineNo, why: `does not match the log regex${shape} /${parser.source}/ — line: ${JSON.stringify(first.text.slice(0, 120))}` };
      }
      return true;
    }
    const start = pending[0].lineNo;
    pending.splice(0, text.slice(0, m.index + m[0].length).split('\n').length);
    const parsed = recordOf(m.groups ?? {}, ++ordinal, sink);
    if ('error' in parsed) sink.bad(start, parsed.error);
    else sink.add(parsed.record, parsed.raw ?? JSON.stringify(parsed.record), start, parsed.flags);
    return true;
  };

  const drain = (): void => {
    while (pending.length > 0 && matchFirst(true));
  };

  const header = opts.headerLines ?? 0;
  await forEachLine(file, (text, lineNo) => {
    if (lineNo <= header || text.trim() === '') return;
    const boundary = delimiter?.exec(text);
    if (boundary) {
      drain();
      executions.push(boundary.groups?.trace ?? `#${executions.length + 1}`);
      return;
    }
    if (executions.length === 0) executions.push('');
    if (!isChosen()) return;
    pending.push({ text, lineNo });
    while (pending.length >= parser.lines && matchFirst(false));
  });
  drain();
  if (firstSkipped !== undefined) {
    if (ordinal === 0) sink.bad(firstSkipped.lineNo, firstSkipped.why);
    else sink.note(`${skipped} line(s) matched no record and were skipped, as ShiViz skips them; the first, line ${firstSkipped.lineNo}, ${firstSkipped.why}`);
  }
  const names = executions.map((label, i) => `${i + 1}${label === '' ? '' : ` (${label})`}`).join(', ');
  const wanted = opts.execution;
  // A missing execution would read as an empty log; naming the ones there are is the fix.
  if (wanted !== undefined && !(typeof wanted === 'number' ? wanted >= 1 && wanted <= executions.length : executions.includes(wanted))) {
    const which = typeof wanted === 'number' ? `no execution ${wanted} (numbers start at 1)` : `no execution labelled ${JSON.stringify(wanted)}`;
    throw new UserError(`${file} has ${which}; it holds ${executions.length === 0 ? 'no executions' : `${executions.length}: ${names}`}${delimiter === undefined ? ' (without a delimiter the log is one execution)' : ''}`);
  }
  if (executions.length > 1) sink.executions(executions.map((label, i) => label || `#${i + 1}`));
  if (executions.length > 1 || wanted !== undefined) {
    sink.note(`the log holds ${executions.length} execution(s): ${names}; read ${JSON.stringify(opts.execution ?? 1)} (choose with the execution option, a label or a number; several are shown side by side)`);
  }
}
