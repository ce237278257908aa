import { UserError } from '../errors';
import { causality, type ClockIssue } from './causality';
import { writeChromeTrace } from './formats/chrome';
import { writeShiviz } from './formats/shiviz';
import { loadTimeline, type LoadOptions } from './load';
import type { BadRecord, EventStore, SourceReport } from './store';

export type ExportFormat = 'chrome' | 'shiviz';

/** Problems listed in a summary; the counts cover all of them. */
const LISTED = 20;

export interface ExportSummary {
  format: ExportFormat;
  out: string;
  events: number;
  /** Message arrows written (Chrome export). */
  flows: number;
  sources: SourceReport[];
  badCount: number;
  /** The first bad lines. */
  bad: BadRecord[];
  clockIssueCount: number;
  /** The first clock inconsistencies. */
  clockIssues: ClockIssue[];
}

/** Writes a loaded store in `format` to `out` (streaming; `out` appears only when complete). An empty store is refused: a trace of nothing looks like a quiet run. */
export async function exportStore(store: EventStore, format: ExportFormat, out: string): Promise<ExportSummary> {
  if (store.size === 0) {
    throw new UserError(`nothing to export: ${store.sources.map((s) => `${s.file} (${s.format})`).join(', ') || 'the inputs'} hold no events; ${out} was not written`);
  }
  let flows = 0;
  if (format === 'chrome') flows = await writeChromeTrace(store, out);
  else await writeShiviz(store, out);
  const hb = causality(store);
  return {
    format,
    out,
    events: store.size,
    flows,
    sources: [...store.sources],
    badCount: store.badCount,
    bad: store.bad.slice(0, LISTED),
    clockIssueCount: hb.issueCount,
    clockIssues: hb.issues.slice(0, LISTED),
  };
}

/**
 * `ddbench timeline <inputs...> --export chrome|shiviz OUT`: inputs are a workspace
 * (its latest run), a run or trial folder, or files in any readable format.
 */
export async function exportTimeline(inputs: readonly string[], format: ExportFormat, out: string, opts: LoadOptions = {}): Promise<ExportSummary> {
  return exportStore(await loadTimeline(inputs, opts), format, out);
}

/** The summary as lines for a terminal: what was read, what was written, and every problem's line and reason. */
export function summaryLines(s: ExportSummary): string[] {
  const lines = s.sources.map(
    (src) =>
      `read ${src.file} (${src.format}): ${src.events} events` +
      (src.duplicates > 0 ? `, ${src.duplicates} router records already in the events` : '') +
      (src.bad > 0 ? `, ${src.bad} bad lines` : '') +
      src.notes.map((note) => `\n  note: ${note}`).join(''),
  );
  lines.push(`wrote ${s.events} events${s.format === 'chrome' ? ` and ${s.flows} message arrows` : ''} to ${s.out} (${s.format === 'chrome' ? 'open it in https://ui.perfetto.dev' : 'open it in ShiViz'})`);
  for (const bad of s.bad) lines.push(`bad line ${bad.file}:${bad.line}: ${bad.error}`);
  if (s.badCount > s.bad.length) lines.push(`… and ${s.badCount - s.bad.length} more bad lines`);
  for (const issue of s.clockIssues) lines.push(`clock: ${issue.message}`);
  if (s.clockIssueCount > s.clockIssues.length) lines.push(`… and ${s.clockIssueCount - s.clockIssues.length} more clock issues`);
  return lines;
}
