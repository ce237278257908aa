import { Option } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { AGENT_DEFAULTS, endpointFromEnv, Protocol, type AgentSettingsInput } from '../../core/agent/config';
import { findBug, loadCatalog, type Catalog } from '../../core/bugs/catalog';
import { requireInstalled } from '../../core/bugs/upstream-installed';
import { UserError } from '../../core/errors';
import { completedKeys, lockBenchOut, parseShard, planBench, runBench, type Shard } from '../../core/study/bench';
import { agentJobRunner } from '../../core/study/bench-agent';
import { loadRecords } from '../../core/study/collect';
import { Condition } from '../../core/study/schema';
import { readStudyFile, studyBugs, studyHash, type StudyFile } from '../../core/study/study-file';
import { agentBackendOptions, isolationOptions, count, endpointOptions, kindOptions, limitOptions, optionGroup, options, outputOptions, trialOptions, type OptionsOf } from '../options';
import { EXIT, printJson, progress, withInterrupt } from '../output';
import { benchProgressPrinter } from '../progress-bar';
import { printReport } from '../study-text';
import { reportFor, writeOutputs } from './study-report';

export const benchOptions = options(
  optionGroup(
    [
      new Option('--study <file>', 'run the plan a study file writes down (docs/studies.md): it gives the bugs, models and endpoints, conditions, repeats, limits, trials and isolation, and every record carries its hash'),
      new Option('--models <m1,m2>', 'models, comma-separated, as the endpoint names them (required without --study)'),
      new Option('--bugs <id...>', 'bug ids, or all (default: all)'),
      new Option('--conditions <c1,c2>', 'symptom-only and/or context-augmented, comma-separated (default: both)'),
      new Option('--repeats <k>', 'runs of each combination (default: 1)'),
      new Option('--concurrency <c>', 'runs at once').default(1),
      new Option('--shard <i/n>', "run only this machine's share: every n-th run from i (0-based; Kubernetes: $JOB_COMPLETION_INDEX/<completions>)"),
      new Option('--out <dir>', 'records, run workspaces and the report go here').default('ddbench-bench'),
    ],
    z.object({
      study: z.string().optional(),
      models: z.string().optional(),
      bugs: z.array(z.string()).optional(),
      conditions: z.string().optional(),
      repeats: count('--repeats', 1).optional(),
      concurrency: count('--concurrency', 1),
      shard: z.string().optional(),
      out: z.string(),
    }),
  ),
  kindOptions,
  endpointOptions({ baseUrl: `OpenAI-compatible endpoint (default: $${AGENT_DEFAULTS.baseUrlEnv}, else OpenAI)`, apiKeyEnv: `environment variable holding the API key (default: ${AGENT_DEFAULTS.apiKeyEnv})` }),
  trialOptions({ trials: "live trials per verification (default: each bug's)" }),
  limitOptions({ maxSteps: 'model turns per run', maxAttempts: 'submissions verified per run', maxCost: 'cost limit per run in US dollars' }),
  optionGroup([new Option('--protocol <p>', 'auto, tools or text')], z.object({ protocol: z.string().optional() })),
  outputOptions(),
  agentBackendOptions,
  isolationOptions,
);
export type BenchOpts = OptionsOf<typeof benchOptions>;

/**
 * `ddbench bench`: every bug × model × condition × repeat through the agent harness,
 * each run recorded under OUT/records as it ends; rerunning the same command resumes.
 */
export async function commandBench(o: BenchOpts): Promise<number> {
  const catalog = await loadCatalog();
  if (o.study !== undefined) {
    // One place says what the study is: flags that would change its plan are refused, not merged.
    const clash = (['models', 'bugs', 'conditions', 'repeats', 'trials', 'maxSteps', 'maxAttempts', 'maxCost', 'requireIsolation', 'protocol', 'baseUrl', 'apiKeyEnv'] as const).filter((k) => o[k] !== undefined);
    if (clash.length) throw new UserError(`--study gives the plan; leave out ${clash.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} (edit the study file instead)`);
  } else if (o.models === undefined) throw new UserError('give --models (comma-separated), or --study with a study file');
  const study = o.study === undefined ? undefined : readStudyFile(o.study);
  const bugIds = o.bugs ?? ['all'];
  const every = bugIds.length === 1 && bugIds[0] === 'all';
  if (o.kind !== undefined && (study !== undefined || !every)) throw new UserError('--kind narrows --bugs all; a study file or named bugs say which bugs run');
  const bugs = study !== undefined ? studyBugs(study, catalog) : every ? catalog.bugs.filter((b) => o.kind === undefined || b.kind === o.kind).map((b) => b.id) : bugIds.map((id) => findBug(catalog, id).id);
  if (!bugs.length) throw new UserError(`no bugs in ${catalog.root}`);
  requireInstalled(catalog, bugs.map((id) => findBug(catalog, id)));
  const models = study !== undefined ? study.models.map((m) => m.name) : list(o.models ?? '', '--models');
  const conditions = study !== undefined ? study.conditions : list(o.conditions ?? 'symptom-only,context-augmented', '--conditions').map((c) => {
    const parsed = Condition.safeParse(c);
    if (!parsed.success) throw new UserError(`--conditions: "${c}" is not one of ${Condition.options.join(', ')}`);
    return parsed.data;
  });
  const shard = o.shard ? parseShard(o.shard) : undefined;
  const protocol = o.protocol === undefined ? undefined : Protocol.safeParse(o.protocol);
  if (protocol && !protocol.success) throw new UserError(`--protocol: "${o.protocol}" is not one of ${Protocol.options.join(', ')}`);

  const out = path.resolve(o.out);
  const recordsDir = path.join(out, 'records');
  fs.mkdirSync(recordsDir, { recursive: true });
  const release = lockBenchOut(out);
  try {
    return await benchIn(out, recordsDir, o, { catalog, bugs, models, conditions, shard, protocol: protocol?.success ? protocol.data : undefined, study });
  } finally {
    release();
  }
}

async function benchIn(out: string, recordsDir: string, o: BenchOpts, plan: { catalog: Catalog; bugs: string[]; models: string[]; conditions: Condition[]; shard: Shard | undefined; protocol: Protocol | undefined; study: StudyFile | undefined }): Promise<number> {
  const { catalog, bugs, models, conditions, shard, protocol, study } = plan;
  const repeats = study?.repeats ?? o.repeats ?? 1;
  const jobs = planBench({ bugs, models, conditions, repeats, shard });
  const hash = study === undefined ? undefined : studyHash(study);
  const completed = completedKeys(loadRecords([recordsDir]), hash);
  const trials = study?.trials ?? o.trials;
  const isolation = study?.isolation ?? o.requireIsolation;
  const limits = study?.limits ?? { ...(o.maxSteps !== undefined && { maxSteps: o.maxSteps }), ...(o.maxAttempts !== undefined && { maxAttempts: o.maxAttempts }), ...(o.maxCost !== undefined && { maxCostUsd: o.maxCost }) };
  const settings: Omit<AgentSettingsInput, 'model' | 'condition' | 'baseUrl'> = {
    ...(protocol && { protocol }),
    ...(trials !== undefined && { trials }),
    ...(o.backend !== undefined && { backend: o.backend }),
    ...(o.dockerImage !== undefined && { dockerImage: o.dockerImage }),
    ...(isolation !== undefined && { requireIsolation: isolation }),
    limits,
  };
  const endpoint = endpointsOf(o, study);
  progress(`bench: ${jobs.length} run(s)${shard ? ` in shard ${shard.index}/${shard.count}` : ''} (${bugs.length} bug(s) × ${models.length} model(s) × ${conditions.length} condition(s) × ${repeats}${shard ? ', this shard’s share' : ''})${study ? ` of study "${study.name}" (${hash})` : ''}; ${jobs.filter((j) => completed.has(j.key)).length} already recorded; records: ${recordsDir}`);

  return withInterrupt(async (signal) => {
    const summary = await runBench({
      jobs,
      completed,
      concurrency: o.concurrency,
      runJob: agentJobRunner({ catalog, outDir: out, recordsFile: path.join(recordsDir, recordsFileName(shard)), endpoint, ...(hash !== undefined && { studyHash: hash }), settings }),
      onProgress: benchProgressPrinter(),
      signal,
    });
    if (summary.interrupted) {
      progress(`bench: interrupted after ${summary.ran} run(s) this time; nothing finished is lost — rerun the same command to resume`);
      return EXIT.failed;
    }
    const report = await reportFor([recordsDir], study === undefined ? {} : { study });
    writeOutputs(report, { html: path.join(out, 'report.html'), csv: path.join(out, 'report.csv') });
    fs.writeFileSync(path.join(out, 'report.json'), JSON.stringify(report, null, 2) + '\n');
    if (o.json) printJson({ ...summary, out, report });
    else printReport(report);
    return EXIT.ok;
  });
}

/** Each model's endpoint: the study's (a key from the variable it names), else the flags' and environment's for all. */
function endpointsOf(o: BenchOpts, study: StudyFile | undefined): (model: string) => { baseUrl: string; apiKey?: string; protocol?: Protocol } {
  const shared = endpointFromEnv(o);
  if (study === undefined) return () => ({ baseUrl: shared.baseUrl, ...(shared.apiKey !== undefined && { apiKey: shared.apiKey }) });
  // Read once, up front: a missing key is an error before any run starts.
  const byModel = new Map(
    study.models.map((m) => {
      const e = m.apiKeyEnv === undefined ? shared : endpointFromEnv({ apiKeyEnv: m.apiKeyEnv, ...(m.baseUrl !== undefined && { baseUrl: m.baseUrl }) });
      return [m.name, { baseUrl: m.baseUrl ?? e.baseUrl, ...(e.apiKey !== undefined && { apiKey: e.apiKey }), ...(m.protocol !== undefined && { protocol: m.protocol }) }] as const;
    }),
  );
  return (model) => byModel.get(model) ?? { baseUrl: shared.baseUrl };
}

/** One file per shard, so machines sharing a volume never append to the same file. */
function recordsFileName(shard: Shard | undefined): string {
  return shard ? `bench-shard-${shard.index}-of-${shard.count}.jsonl` : 'bench.jsonl';
}

function list(text: string, flag: string): string[] {
  const items = [...new Set(text.split(',').map((s) => s.trim()).filter(Boolean))];
  if (!items.length) throw new UserError(`${flag}: give at least one, comma-separated`);
  return items;
}
