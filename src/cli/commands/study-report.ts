import { Option } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { loadCatalog, type Catalog } from '../../core/bugs/catalog';
import { UserError } from '../../core/errors';
import { loadRecords, mergeRecords, type RecordSet } from '../../core/study/collect';
import { bugInfos } from '../../core/study/reference';
import { ddbenchVersion } from '../../core/study/agent';
import { buildReport, type Report } from '../../core/study/report';
import { bugSetHash, environmentOf, readStudyFile, studyHash, type StudyFile } from '../../core/study/study-file';
import { reportCsv } from '../../core/study/report-csv';
import { reportPage } from '../../core/study/report-html';
import type { RecordProblem } from '../../core/study/store';
import { workspaceRecordsDir } from '../../core/study/store';
import { optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, progress, say } from '../output';
import { printReport } from '../study-text';

export const reportOptions = options(
  optionGroup(
    [
      new Option('--records <path...>', 'records folders or files, merged without duplicates (default: ./.ddbench/records)'),
      new Option('--html <file>', 'write the report as one HTML page with charts (works offline)'),
      new Option('--csv <file>', 'write the figures as CSV (one row per bug/tier/overall × group, plus the lift)'),
      new Option('--seed <n>', "seed of the bootstrap intervals (default: the study's, else 20261202; the report states it)"),
      new Option('--study <file>', "report a study file's runs only: records of another study (or of none) are refused unless --any-study"),
      new Option('--any-study', "with --study, count every record, whatever study it came from"),
    ],
    z.object({ records: z.array(z.string()).optional(), html: z.string().optional(), csv: z.string().optional(), seed: z.coerce.number().int().min(0).optional(), study: z.string().optional(), anyStudy: z.boolean().optional() }),
  ),
  outputOptions(),
);
export type ReportOpts = OptionsOf<typeof reportOptions>;

export const mergeOptions = options(
  optionGroup([new Option('--into <file>', 'the merged file (created if missing; running again adds only what is new)').makeOptionMandatory()], z.object({ into: z.string() })),
  outputOptions(),
);

export const checkOptions = outputOptions();

/** `ddbench report`: the comparison of every attempt under the given records folders. */
export async function commandReport(o: ReportOpts): Promise<number> {
  const study = o.study === undefined ? undefined : readStudyFile(o.study);
  const report = await reportFor(o.records?.length ? o.records : [defaultRecords()], { ...(o.seed !== undefined && { seed: o.seed }), ...(study && { study }), anyStudy: o.anyStudy === true });
  writeOutputs(report, o);
  if (o.json) printJson(report);
  else printReport(report);
  return EXIT.ok;
}

/** Loads, warns about bad lines on stderr, and builds the report with the bug set's reference fixes. */
export async function reportFor(paths: readonly string[], o: { seed?: number; study?: StudyFile; anyStudy?: boolean } = {}): Promise<Report> {
  const loaded = loadRecords(paths);
  warnProblems(loaded);
  const hash = o.study === undefined ? undefined : studyHash(o.study);
  const others = hash === undefined ? [] : loaded.attempts.filter((a) => a.studyHash !== hash);
  if (others.length && !o.anyStudy) {
    const hashes = [...new Set(others.map((a) => a.studyHash ?? 'none'))].join(', ');
    throw new UserError(`${others.length} of ${loaded.attempts.length} record(s) are not from study "${o.study!.name}" (${hash}) but from ${hashes}; report them apart, or pass --any-study to count them too`);
  }
  const set = hash === undefined || o.anyStudy ? loaded : { ...loaded, attempts: loaded.attempts.filter((a) => a.studyHash === hash) };
  const catalog = await catalogOrNone();
  return buildReport(set, catalog === undefined ? new Map() : bugInfos(catalog), new Date(), {
    seed: o.seed ?? o.study?.seeds.report,
    provenance: {
      ...(o.study && hash && { study: { name: o.study.name, hash } }),
      toolVersion: ddbenchVersion(),
      ...(catalog && { bugSetHash: bugSetHash(catalog) }),
      environment: environmentOf(),
    },
  });
}

export function writeOutputs(report: Report, o: { html?: string; csv?: string }): void {
  if (o.html) writeFile(o.html, reportPage(report));
  if (o.csv) writeFile(o.csv, reportCsv(report));
}

/** `ddbench records merge`: one file from many machines' records, no duplicates. */
export async function commandRecordsMerge(sources: string[], o: OptionsOf<typeof mergeOptions>): Promise<number> {
  const r = await mergeRecords(path.resolve(o.into), sources);
  for (const p of r.problems) progress(problemLine(p));
  if (o.json) printJson(r);
  else say(`${r.added} record line(s) added to ${path.resolve(o.into)} from ${r.sources.length} file(s); ${r.duplicates} already there${r.problems.length ? `; ${r.problems.length} bad line(s) skipped (listed above)` : ''}${r.conflicts.length ? `; ${r.conflicts.length} conflict(s)` : ''}`);
  // Skipped lines are data the merged file lacks: a script must notice (records check lists them).
  if (r.problems.length) {
    progress(`ddbench: ${r.problems.length} line(s) could not be read and were not merged; fix them (ddbench records check lists them) and merge again`);
    return EXIT.failed;
  }
  return EXIT.ok;
}

/** `ddbench records check`: every line validated; exit 1 if any is bad. */
export function commandRecordsCheck(paths: string[], o: OptionsOf<typeof checkOptions>): number {
  const set = loadRecords(paths.length ? paths : [defaultRecords()]);
  if (o.json) printJson({ files: set.files, attempts: set.attempts.length, interactions: set.interactions.length, upgraded: set.upgraded, problems: set.problems, conflicts: set.conflicts });
  else {
    for (const p of set.problems) say(problemLine(p));
    for (const c of set.conflicts) say(`conflict: attempt ${c.id} revision ${c.revision} differs between ${c.files.join(' and ')} (the first is used)`);
    say(`${set.files.length} file(s): ${set.attempts.length} attempt(s), ${set.interactions.length} interaction(s)${set.upgraded ? `, ${set.upgraded} line(s) from an older schema` : ''}; ${set.problems.length} bad line(s)`);
  }
  return set.problems.length || set.conflicts.length ? EXIT.failed : EXIT.ok;
}

/** The current folder's workspace records, the usual place to run a report from. */
function defaultRecords(): string {
  const dir = workspaceRecordsDir(process.cwd());
  if (!fs.existsSync(dir)) throw new UserError(`no records here (${dir}); pass --records DIR (a workspace's .ddbench/records, a bench --out folder's records, or merged files)`);
  return dir;
}

/** The bug set, for reference fixes and its hash; without one the report still works, with no similarity figures. */
async function catalogOrNone(): Promise<Catalog | undefined> {
  try {
    return await loadCatalog();
  } catch (err) {
    progress(`ddbench: warning: no bug set (${err instanceof Error ? err.message : String(err)}); similarity to the reference fixes is left out`);
    return undefined;
  }
}

function warnProblems(set: RecordSet): void {
  for (const p of set.problems.slice(0, 20)) progress(`ddbench: skipped ${problemLine(p)}`);
  if (set.problems.length > 20) progress(`ddbench: … and ${set.problems.length - 20} more bad lines (ddbench records check lists them)`);
  if (set.conflicts.length) progress(`ddbench: ${set.conflicts.length} record(s) appear twice with different content; the first read is used (ddbench records check lists them)`);
}

function problemLine(p: RecordProblem): string {
  return `${p.file}:${p.line}: ${p.kind}: ${p.message}`;
}

function writeFile(file: string, text: string): void {
  const abs = path.resolve(file);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, text);
  progress(`wrote ${abs}`);
}
