import { Option } from 'commander';
import * as path from 'node:path';
import { z } from 'zod';
import type { LoadOptions } from '../../core/events/load';
import { exportStore, summaryLines, type ExportFormat } from '../../core/events/export';
import { InputFormat } from '../../core/events/store';
import { writeTimelineHtml } from '../../core/timeline/export-html';
import { TimelineModel, type RunSource } from '../../core/timeline/model';
import { loadExecutions, loadRun } from '../../core/timeline/runs';
import { MAX_RUNS, runLetter } from '../../core/timeline/protocol';
import { optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, say } from '../output';

const EXPORT_FORMATS = ['chrome', 'shiviz'] as const satisfies readonly ExportFormat[];

/** `--export chrome|shiviz OUT`: a format and an output file. */
const ExportArgs = z
  .array(z.string())
  .refine((v) => v.length === 2 && (EXPORT_FORMATS as readonly string[]).includes(v[0]!), `--export takes a format (${EXPORT_FORMATS.join(' or ')}) and an output file, after the inputs: ddbench timeline RUN --export chrome trace.json`)
  .transform(([format, out]) => ({ format: format as ExportFormat, out: out! }));

export const timelineOptions = options(
  optionGroup(
    [
      new Option('--html <out>', 'write the interactive timeline as one HTML file that opens offline in any browser'),
      new Option('--export <format-and-out...>', 'write the events for another tool: chrome OUT (Perfetto) or shiviz OUT'),
      new Option('--compare <input...>', 'a second run shown aligned below the first, with where it first diverges (--html)'),
      new Option('--format <format>', 'read every file as this format instead of detecting it (events, router, text, shiviz, otlp, chrome, jaeger, zipkin)'),
      new Option('--regex <regex>', 'regex with named groups (host, event, clock, ts, level) for plain-text logs'),
      new Option('--delimiter <regex>', 'ShiViz execution delimiter (a matching line starts a new execution)'),
      new Option('--execution <label-or-number>', 'which execution of a multi-execution ShiViz log to read: its label, or its number from 1; repeat it to show several side by side').argParser((v: string, previous: string[] | undefined) => [...(previous ?? []), v]),
      new Option('--title <title>', 'title of the HTML page'),
    ],
    z
      .object({
        html: z.string().optional(),
        export: ExportArgs.optional(),
        compare: z.array(z.string()).optional(),
        format: z.enum(InputFormat, { error: `--format must be one of ${InputFormat.join(', ')}` }).optional(),
        regex: z.string().optional(),
        delimiter: z.string().optional(),
        // Digits are a position: labels come from the delimiter's trace group, and a number is what a person counts.
        execution: z
          .array(z.string().transform((v) => (/^[0-9]+$/.test(v) ? Number(v) : v)))
          .max(MAX_RUNS, `--execution: at most ${MAX_RUNS} executions side by side`)
          .optional(),
        title: z.string().optional(),
      })
      .refine((o) => o.export === undefined || o.compare === undefined, '--compare applies to --html only; export one run at a time')
      .refine((o) => (o.execution?.length ?? 0) < 2 || (o.compare === undefined && o.export === undefined), 'executions side by side are already a comparison: leave out --compare and --export'),
  ),
  outputOptions(),
);
export type TimelineOpts = OptionsOf<typeof timelineOptions>;

/** The run's picture in numbers: what a person would see first on the timeline. */
function overview(model: TimelineModel): string[] {
  return model.meta().runs.flatMap((run, r) => [
    `${model.meta().runs.length > 1 ? `run ${runLetter(r)}: ` : ''}${run.label}`,
    `  ${run.events} events on ${run.lanes.length} lanes (${run.lanes.map((l) => l.name).join(', ')}); ${run.messages} messages, ${run.dropped} dropped${run.impliedEdges > 0 ? `; ${run.impliedEdges} edges from vector clocks or cross-service spans` : ''}; ${run.faultBands} fault periods`,
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
  const exp = o.export;
  const load: LoadOptions = { format: o.format, regex: o.regex, delimiter: o.delimiter, execution: o.execution?.[0] };
  const runs: RunSource[] = o.execution !== undefined && o.execution.length > 1 ? await loadExecutions(inputs, load, o.execution) : [await loadRun(inputs, load)];
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
