import * as path from 'node:path';
import { UserError } from '../../core/errors';
import type { LoadOptions } from '../../core/events/load';
import { exportStore, summaryLines, type ExportFormat } from '../../core/events/export';
import { InputFormat } from '../../core/events/store';
import { writeTimelineHtml } from '../../core/timeline/export-html';
import { TimelineModel, type RunSource } from '../../core/timeline/model';
import { loadRun } from '../../core/timeline/runs';
import { EXIT, printJson, say } from '../output';

export interface TimelineOpts {
  html?: string;
  /** [format, out], from `--export chrome|shiviz OUT`. */
  export?: string[];
  compare?: string[];
  format?: string;
  regex?: string;
  delimiter?: string;
  execution?: string;
  title?: string;
  json?: boolean;
}

const EXPORT_FORMATS: readonly ExportFormat[] = ['chrome', 'shiviz'];

function parseExport(values: string[] | undefined): { format: ExportFormat; out: string } | undefined {
  if (values === undefined) return undefined;
  const [format, out, ...extra] = values;
  if (out === undefined || extra.length > 0 || !EXPORT_FORMATS.includes(format as ExportFormat)) {
    throw new UserError(`--export takes a format (${EXPORT_FORMATS.join(' or ')}) and an output file, after the inputs: ddbench timeline RUN --export chrome trace.json`);
  }
  return { format: format as ExportFormat, out };
}

/** The run's picture in numbers: what a person would see first on the timeline. */
function overview(model: TimelineModel): string[] {
  return model.meta().runs.flatMap((run, r) => [
    `${model.meta().runs.length > 1 ? `run ${r === 0 ? 'A' : 'B'}: ` : ''}${run.label}`,
    `  ${run.events} events on ${run.lanes.length} lanes (${run.lanes.map((l) => l.name).join(', ')}); ${run.messages} messages, ${run.dropped} dropped; ${run.faultBands} fault periods`,
    ...run.violations.map((v) => `  violation at ${(v.ts / 1e6).toFixed(3)} s on ${v.node}: ${v.text}`),
    ...(run.badCount > 0 ? [`  ${run.badCount} lines could not be read, e.g. ${run.bad.slice(0, 3).map((b) => `${b.file}:${b.line}: ${b.error}`).join('; ')}`] : []),
  ]);
}

/**
 * `ddbench timeline <inputs...>`: with `--html OUT` a self-contained page of the
 * timeline (optionally comparing with `--compare`); with `--export chrome|shiviz OUT`
 * a trace for Perfetto or ShiViz; with neither, a summary of what the timeline shows.
 */
export async function commandTimeline(inputs: string[], o: TimelineOpts): Promise<number> {
  const exp = parseExport(o.export);
  if (exp !== undefined && o.compare !== undefined) throw new UserError('--compare applies to --html only; export one run at a time');
  if (o.format !== undefined && !(InputFormat as readonly string[]).includes(o.format)) throw new UserError(`--format must be one of ${InputFormat.join(', ')}`);
  const load: LoadOptions = { format: o.format as InputFormat | undefined, regex: o.regex, delimiter: o.delimiter, execution: o.execution };
  const runs: RunSource[] = [await loadRun(inputs, load)];
  if (o.compare !== undefined) runs.push(await loadRun(o.compare, load));
  const title = o.title ?? `DDBench timeline: ${runs.map((r) => r.label).join(' vs ')}`;
  const model = new TimelineModel(runs, { title });
  const result: Record<string, unknown> = { meta: model.meta() };
  if (exp !== undefined) {
    const summary = await exportStore(runs[0].store, exp.format, exp.out);
    result.export = summary;
    if (!o.json) summaryLines(summary).forEach((line) => say(line));
  }
  if (o.html !== undefined) {
    const { bytes } = writeTimelineHtml(runs, o.html, title);
    result.html = { out: path.resolve(o.html), bytes };
    if (!o.json) {
      overview(model).forEach((line) => say(line));
      say(`wrote ${o.html} (${Math.ceil(bytes / 1024)} KB): open it in any browser, offline`);
    }
  }
  if (exp === undefined && o.html === undefined && !o.json) {
    overview(model).forEach((line) => say(line));
    say('(give --html OUT.html for the interactive page, or --export chrome|shiviz OUT for Perfetto or ShiViz)');
  }
  if (o.json) printJson(result);
  return EXIT.ok;
}
