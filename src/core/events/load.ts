import * as fs from 'node:fs';
import * as path from 'node:path';
import { DDBENCH_DIR } from '../paths';
import { UserError } from '../errors';
import { EventStoreBuilder, type SourceSink } from './build';
import { detectFormat } from './detect';
import { readChromeTrace } from './formats/chrome';
import { readEventsJsonl } from './formats/events-jsonl';
import { readJaegerJson } from './formats/jaeger';
import { readOtlpJson } from './formats/otlp';
import { readZipkinJson } from './formats/zipkin';
import { readRouterJsonl } from './formats/router';
import { guessShivizLayout, readShivizHeader } from './formats/shiviz';
import { readTextLog, SHIVIZ_DEFAULT_REGEX } from './formats/text';
import type { EventStore, InputFormat, SourceReport } from './store';

export interface LoadOptions {
  /** Read every file given directly as this format instead of detecting it. */
  format?: InputFormat;
  /** Regex for plain-text logs (named groups host, event, clock, ts|time, level, ...); overrides a ShiViz file's own. */
  regex?: string;
  /** ShiViz execution delimiter regex (a matching line starts a new execution). */
  delimiter?: string;
  /** Which execution of a multi-execution ShiViz log to read (label or 1-based number). */
  execution?: string | number;
  /** The Unix time (µs) timeline time 0 stands for, for absolute times (OTLP, dates in text logs). Default: the first one met. */
  epochOriginUs?: number;
}

/** One file to read, and how. */
export interface TimelineInput {
  file: string;
  format?: InputFormat;
  /** Said in the source's report (for example which run a folder stood for). */
  note?: string;
}

const EVENTS_FILE = 'events.jsonl';
const ROUTER_FILE = 'router.jsonl';

/** A run folder's files: its events, and the router's records when present. */
function runFiles(dir: string, note?: string): TimelineInput[] {
  const files: TimelineInput[] = [{ file: path.join(dir, EVENTS_FILE), format: 'events', ...(note !== undefined && { note }) }];
  const router = path.join(dir, ROUTER_FILE);
  if (fs.existsSync(router)) files.push({ file: router, format: 'router' });
  return files;
}

/** The folder with the newest events.jsonl at most `depth` levels below `root`. */
function latestRun(root: string, depth: number): string | undefined {
  let best: { dir: string; mtime: number } | undefined;
  const visit = (dir: string, level: number): void => {
    const events = path.join(dir, EVENTS_FILE);
    if (fs.existsSync(events)) {
      const mtime = fs.statSync(events).mtimeMs;
      if (best === undefined || mtime > best.mtime) best = { dir, mtime };
    }
    if (level === depth) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) visit(path.join(dir, entry.name), level + 1);
  };
  visit(root, 0);
  return best?.dir;
}

/**
 * What the inputs stand for: a file is read as it is; a run or trial folder means
 * its events.jsonl (and router.jsonl); a workspace means its latest run; any other
 * folder means the latest run below it.
 */
export function resolveInputs(inputs: readonly string[]): TimelineInput[] {
  if (inputs.length === 0) throw new UserError('no input: give a workspace, a run folder, or event/log files');
  const out: TimelineInput[] = [];
  for (const input of inputs) {
    if (!fs.existsSync(input)) throw new UserError(`${input} does not exist`);
    if (!fs.statSync(input).isDirectory()) {
      out.push({ file: input });
      continue;
    }
    if (fs.existsSync(path.join(input, EVENTS_FILE))) {
      out.push(...runFiles(input));
      continue;
    }
    const runs = path.join(input, DDBENCH_DIR, 'runs');
    const latest = fs.existsSync(runs) ? latestRun(runs, 3) : latestRun(input, 2);
    if (latest === undefined) {
      throw new UserError(
        fs.existsSync(runs)
          ? `the workspace ${input} has no runs yet: launch its cluster or run its reproducer first`
          : `no ${EVENTS_FILE} in ${input} or below it: give a workspace, a run folder, or event/log files`,
      );
    }
    out.push(...runFiles(latest, `the latest run under ${input}: ${path.relative(input, latest) || '.'}`));
  }
  return out;
}

async function readInput(input: TimelineInput, format: InputFormat, sink: SourceSink, opts: LoadOptions): Promise<void> {
  switch (format) {
    case 'events':
      return readEventsJsonl(input.file, sink);
    case 'router':
      return readRouterJsonl(input.file, sink);
    case 'otlp':
      return readOtlpJson(input.file, sink, sink.label);
    case 'chrome':
      return readChromeTrace(input.file, sink);
    case 'jaeger':
      return readJaegerJson(input.file, sink);
    case 'zipkin':
      return readZipkinJson(input.file, sink);
    case 'shiviz': {
      const header = readShivizHeader(input.file);
      const layout = header ?? (opts.regex === undefined ? guessShivizLayout(input.file) : undefined);
      return readTextLog(input.file, sink, {
        regex: opts.regex ?? layout?.regex ?? SHIVIZ_DEFAULT_REGEX,
        delimiter: opts.delimiter ?? layout?.delimiter,
        execution: opts.execution,
        headerLines: header === undefined ? 0 : 2,
      });
    }
    case 'text':
      if (opts.regex === undefined) throw new UserError(`${input.file} is read as a plain-text log, which needs a regex with named groups host and event (and clock for vector clocks)`);
      return readTextLog(input.file, sink, { regex: opts.regex, delimiter: opts.delimiter, execution: opts.execution });
  }
}

const FORMAT_NAMES: Record<InputFormat, string> = {
  events: 'DDBench events JSONL',
  router: 'router records',
  text: 'a plain-text log',
  shiviz: 'a ShiViz log',
  otlp: 'OTLP JSON',
  chrome: 'a Chrome trace',
  jaeger: 'Jaeger JSON',
  zipkin: 'Zipkin v2 JSON',
};

/** What to try instead when a file read as `format` gave no events. */
function remedy(format: InputFormat, opts: LoadOptions): string {
  switch (format) {
    case 'text':
    case 'shiviz':
      return opts.execution === undefined
        ? 'check that the regex matches whole records (named groups host and event, clock for vector clocks)'
        : 'check that the regex matches whole records and that the chosen execution holds some';
    case 'chrome':
      return "if this is a text log, give a regex (--regex '^(?<host>\\S+) (?<event>.*)$'); a Chrome trace needs events with ph, ts and pid";
    case 'otlp':
      return 'OTLP JSON needs resourceSpans or resourceLogs with spans or log records';
    case 'jaeger':
      return 'Jaeger JSON needs traces with spans (traceID, spanID, operationName, startTime)';
    case 'zipkin':
      return 'Zipkin v2 JSON needs spans with traceId, id and timestamp';
    default:
      return "if this is a text log, give a regex (--regex '^(?<host>\\S+) (?<event>.*)$'), or choose the format (--format events, router, text, shiviz, otlp, chrome, jaeger, zipkin)";
  }
}

/**
 * A non-empty file that gave no events was misread or is not a timeline: saying so
 * beats an empty picture that looks like a quiet run. Router files are exempt (every
 * record may already be in the events), and so are empty files (a live run that has
 * not logged yet).
 */
function checkNotEmpty(source: SourceReport, store: EventStore, opts: LoadOptions): void {
  if (source.events > 0 || source.format === 'router' || fs.statSync(source.file).size === 0) return;
  const bad = store.bad.find((b) => b.file === source.file);
  const why = source.bad > 0 && bad !== undefined ? ` (${source.bad} unreadable, e.g. line ${bad.line}: ${bad.error})` : '';
  const notes = source.notes.length > 0 ? `; ${source.notes.join('; ')}` : '';
  throw new UserError(`${source.file}: read as ${FORMAT_NAMES[source.format]}: no events${why}${notes}; ${remedy(source.format, opts)}`);
}

/**
 * Reads the inputs (see resolveInputs) into one event store. Bad lines are in the
 * store's report, never fatal, unless a non-empty file gave no event at all.
 * Router records are read last, so the steps that the event files already show are
 * known and not added twice.
 */
export async function loadTimeline(inputs: readonly string[], opts: LoadOptions = {}): Promise<EventStore> {
  const builder = new EventStoreBuilder(opts.epochOriginUs);
  const typed = resolveInputs(inputs).map((input) => ({ ...input, format: input.format ?? opts.format ?? detectFormat(input.file, opts.regex !== undefined) }));
  for (const input of [...typed.filter((i) => i.format !== 'router'), ...typed.filter((i) => i.format === 'router')]) {
    const sink = builder.source(input.file, input.format);
    if (input.note !== undefined) sink.note(input.note);
    await readInput(input, input.format, sink, opts);
  }
  const store = builder.build();
  for (const source of store.sources) checkNotEmpty(source, store, opts);
  return store;
}
