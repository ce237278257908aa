import { Command, Option } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandAgent, type AgentOpts } from './commands/agent';
import { commandBugs } from './commands/bugs';
import { commandDemo } from './commands/demo';
import { commandDiff } from './commands/diff';
import { commandOpen } from './commands/open';
import { commandReplay, type ReplayOpts } from './commands/replay';
import { commandRepro } from './commands/repro';
import { commandSim, type SimOpts } from './commands/sim';
import { commandTimeline, type TimelineOpts } from './commands/timeline';
import { commandUp } from './commands/up';
import { commandValidate, type ValidateOpts } from './commands/validate';
import { commandVerify, type VerifyOpts } from './commands/verify';
import { commandBench, parseUsd, type BenchOpts } from './commands/bench';
import { commandRecordsCheck, commandRecordsMerge, commandReport, type ReportOpts } from './commands/study-report';
import { packageRoot } from '../core/paths';
import { withBackendOptions } from './backend';
import { EXIT, parseCount, parseNumber, runCommand, type RunOpts } from './output';

const version = (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;

const program = new Command('ddbench')
  .description('Practise, study and demo the repair of distributed-system bugs.')
  .version(version)
  .showHelpAfterError('(run with --help for usage)')
  // Usage errors exit 2, like every other input a user can fix; help and version exit 0.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT.usage));

program
  .command('bugs')
  .description('list the bug set')
  .option('--json', 'machine-readable output')
  .option('--markdown', "the README's bug table (id, system, upstream reference, tier, categories)")
  .action((o: { json?: boolean; markdown?: boolean }) => runCommand(() => commandBugs(o)));

program
  .command('open')
  .description('materialise a bug workspace (its buggy source, ISSUE.md and .ddbench/) and print its path')
  .argument('<bug>', 'bug id (see `ddbench bugs`)')
  .option('--dir <dir>', 'folder to create (default: ~/ddbench-workspaces/<bug>, or $DDBENCH_WORKSPACES/<bug>)')
  .option('--json', 'machine-readable output')
  .action((bug: string, o: { dir?: string; json?: boolean }) => runCommand(() => commandOpen(bug, o)));

program
  .command('up')
  .description('launch the cluster of a bug or workspace, show its nodes and live events; Ctrl-C stops it cleanly')
  .argument('<bug|dir>', 'a bug id (opens or reuses its default workspace) or a workspace folder')
  .option('--seed <n>', 'seed for the nodes and router', parseCount('--seed', 0))
  .option('--inspect', 'start each node with the Node.js inspector on a free port')
  .option('--quiet', 'do not print live events')
  .action((target: string, o: { seed?: number; inspect?: boolean; quiet?: boolean }) => runCommand(() => commandUp(target, o)));

program
  .command('repro')
  .description("run the bug's reproducer against the workspace's code; exit 0 when every trial passes, 1 when any fails")
  .argument('<dir>', 'workspace folder')
  .option('--trials <n>', "number of seeded trials (default: the bug's)", parseCount('--trials', 1))
  .option('--seed <n>', 'seed of the first trial; trial i uses seed+i', parseCount('--seed', 0))
  .option('--concurrency <n>', 'trials, and simulated seeds, at once (default: number of cores)', parseCount('--concurrency', 1))
  .option('--seeds <n>', 'simulated seeds after the live trials (default: 100)', parseCount('--seeds', 1))
  .option('--no-sim', 'live trials only, no simulated seeds')
  .option('--json', 'machine-readable output')
  .action((dir: string, o: RunOpts) => runCommand(() => commandRepro(dir, o)));

program
  .command('verify')
  .description("apply a fix to a scratch copy of the bug's code (never the workspace) and run the reproducer and regression checks")
  .argument('<dir>', 'workspace folder')
  .option('--patch <file>', 'unified diff against the bug\'s original code')
  .option('--reference', "use the bug's own fix (for validating the set)")
  .option('--trials <n>', "number of seeded trials (default: the bug's)", parseCount('--trials', 1))
  .option('--seed <n>', 'seed of the first trial', parseCount('--seed', 0))
  .option('--concurrency <n>', 'trials, and simulated seeds, at once (default: number of cores)', parseCount('--concurrency', 1))
  .option('--seeds <n>', "simulated seeds the fix must pass (default: from the buggy code's failure rate over 100 seeds, N >= ln 0.05 / ln(1-p), at least 100)", parseCount('--seeds', 1))
  .option('--no-sim', 'live trials only, no simulated seeds')
  .option('--fail-fast', 'stop at the first failing check (reproducer, regression checks, simulation) instead of running them all')
  .option('--json', 'machine-readable output')
  .addHelpText('after', '\nWith neither --patch nor --reference, the workspace\'s own changes (as `ddbench diff` prints them) are verified.')
  .action((dir: string, o: RunOpts & VerifyOpts) => runCommand(() => commandVerify(dir, o)));

program
  .command('diff')
  .description("print the workspace's changes to the bug's original code as a unified diff")
  .argument('<dir>', 'workspace folder')
  .action((dir: string) => runCommand(() => commandDiff(dir)));

program
  .command('validate')
  .description('check bugs of the set: the reproducer fails on the buggy code in >=90% of trials and passes on the fix in 100%; under simulation the buggy code fails and the fix passes every seed')
  .argument('[bug...]', 'bug ids (default: all)')
  .option('--trials <n>', "trials per code version (default: each bug's)", parseCount('--trials', 1))
  .option('--seed <n>', 'seed of the first trial', parseCount('--seed', 0))
  .option('--concurrency <n>', 'trials, and simulated seeds, at once (default: number of cores)', parseCount('--concurrency', 1))
  .option('--keep-runs <dir>', 'keep every trial\'s events under this folder')
  .option('--seeds <n>', "simulated seeds the fix must pass (default: at least 1000, more if the buggy code's failure rate calls for it)", parseCount('--seeds', 1))
  .option('--buggy-seeds <n>', 'simulated seeds that measure the buggy code\'s failure rate (default: 200)', parseCount('--buggy-seeds', 1))
  .option('--regression-trials <n>', 'live trials of each regression check on each code version (default: 1)', parseCount('--regression-trials', 1))
  .option('--no-sim', 'live trials only, no simulated seeds')
  .option('--json', 'machine-readable output')
  .action((bugs: string[], o: RunOpts & ValidateOpts) => runCommand(() => commandValidate(bugs, o)));

program
  .command('sim')
  .description("run the bug's reproducer over many seeds in simulation (one process, virtual time) against the workspace's code; exit 1 if any seed fails")
  .argument('<dir>', 'workspace folder')
  .option('--seeds <n>', 'number of seeds (default: 100)', parseCount('--seeds', 1))
  .option('--from <s>', 'first seed (default: 1)', parseCount('--from', 0))
  .option('--stop-at-first', 'stop at the first failing seed')
  .option('--scenario <name>', "another of the system's scenarios (a regression check, say)")
  .option('--check-determinism', 'run every seed twice and compare the events byte for byte')
  .option('--shrink', 'shrink the first failing seed to the scheduler decisions that matter')
  .option('--concurrency <n>', 'seeds at once, in worker threads (default: number of cores)', parseCount('--concurrency', 1))
  .option('--json', 'machine-readable output')
  .action((dir: string, o: SimOpts) => runCommand(() => commandSim(dir, o)));

program
  .command('replay')
  .description("replay one simulated seed: write its events (for the timeline) under the workspace's .ddbench/runs/replay-seed-S/ and print where it failed; exit 1 if it failed")
  .argument('<dir>', 'workspace folder')
  .option('--seed <s>', 'the seed to replay', parseCount('--seed', 0))
  .option('--out <file>', 'write the events here instead')
  .option('--scenario <name>', "another of the system's scenarios")
  .option('--schedule <file>', 'replay a schedule.json written by an earlier replay (a shrunk one, say)')
  .option('--shrink', 'shrink the failing schedule first, then replay the shrunk one')
  .option('--json', 'machine-readable output')
  .action((dir: string, o: ReplayOpts) => runCommand(() => commandReplay(dir, o)));

program
  .command('timeline')
  .description('the timeline of a run: a self-contained HTML page (--html), a Chrome/Perfetto or ShiViz trace (--export), or a summary')
  .argument('<input...>', 'a workspace (its latest run), a run or trial folder, or event/log files (events, router, OTLP JSON, Chrome trace, ShiViz or text logs)')
  .option('--html <out>', 'write the interactive timeline as one HTML file that opens offline in any browser')
  .option('--export <format-and-out...>', 'write the events for another tool: chrome OUT (Perfetto) or shiviz OUT')
  .option('--compare <input...>', 'a second run shown aligned below the first, with where it first diverges (--html)')
  .option('--format <format>', 'read every file as this format instead of detecting it (events, router, text, shiviz, otlp, chrome)')
  .option('--regex <regex>', 'regex with named groups (host, event, clock, ts, level) for plain-text logs')
  .option('--delimiter <regex>', 'ShiViz execution delimiter (a matching line starts a new execution)')
  .option('--execution <label>', 'which execution of a multi-execution ShiViz log to read')
  .option('--title <title>', 'title of the HTML page')
  .option('--json', 'machine-readable output')
  .action((inputs: string[], o: TimelineOpts) => runCommand(() => commandTimeline(inputs, o)));

program
  .command('report')
  .description('compare attempts, by people and agents, from study records: pass rates with 95% Wilson intervals, time to fix, submissions, patch size and similarity to the reference fix, tokens and cost, per bug, tier and group; the context lift and the spread across models')
  .option('--records <path...>', 'records folders or files, merged without duplicates (default: ./.ddbench/records)')
  .option('--html <file>', 'write the report as one HTML page with charts (works offline)')
  .option('--csv <file>', 'write the figures as CSV (one row per bug/tier/overall × group, plus the lift)')
  .option('--json', 'machine-readable output')
  .action((o: ReportOpts) => runCommand(() => commandReport(o)));

const records = program.command('records').description('study records: merge many machines\' files into one, check every line');
records
  .command('merge')
  .description('append to one file every record of the sources it lacks (each attempt revision and interaction once; older schema versions upgraded)')
  .argument('<source...>', 'records files or folders (searched for *.jsonl)')
  .requiredOption('--into <file>', 'the merged file (created if missing; running again adds only what is new)')
  .option('--json', 'machine-readable output')
  .action((sources: string[], o: { into: string; json?: boolean }) => runCommand(async () => commandRecordsMerge(sources, o)));
records
  .command('check')
  .description('validate every line; list torn, corrupt and too-new lines with their numbers; exit 1 if any')
  .argument('[path...]', 'records files or folders (default: ./.ddbench/records)')
  .option('--json', 'machine-readable output')
  .action((paths: string[], o: { json?: boolean }) => runCommand(async () => commandRecordsCheck(paths, o)));

program
  .command('bench')
  .description('batch evaluation: every bug × model × condition × repeat through the agent harness, each run in its own workspace and recorded as it ends; rerun to resume (recorded runs are skipped); ends with the report')
  .requiredOption('--models <m1,m2>', 'models, comma-separated, as the endpoint names them')
  .option('--bugs <id...>', "bug ids, or all", ['all'])
  .option('--conditions <c1,c2>', 'symptom-only and/or context-augmented, comma-separated', 'symptom-only,context-augmented')
  .option('--repeats <k>', 'runs of each combination', parseCount('--repeats', 1), 1)
  .option('--concurrency <c>', 'runs at once', parseCount('--concurrency', 1), 1)
  .option('--shard <i/n>', "run only this machine's share: every n-th run from i (0-based; Kubernetes: $JOB_COMPLETION_INDEX/<completions>)")
  .option('--out <dir>', 'records, run workspaces and the report go here', 'ddbench-bench')
  .option('--base-url <url>', 'OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, else OpenAI)')
  .option('--api-key-env <name>', 'environment variable holding the API key (default: OPENAI_API_KEY)')
  .option('--trials <n>', "live trials per verification (default: each bug's)", parseCount('--trials', 1))
  .option('--max-steps <n>', 'model turns per run', parseCount('--max-steps', 1))
  .option('--max-attempts <n>', 'submissions verified per run', parseCount('--max-attempts', 1))
  .option('--max-cost <usd>', 'cost limit per run in US dollars', parseUsd)
  .option('--protocol <p>', 'auto, tools or text')
  .option('--json', 'machine-readable output')
  .action((o: BenchOpts) => runCommand(() => commandBench(o, version)));

program
  .command('demo')
  .description('the main job on a fresh machine: open the first bug, show its failing reproducer with evidence, verify the reference fix')
  .option('--trials <n>', 'trials per step', parseCount('--trials', 1))
  .action((o: { trials?: number }) => runCommand(() => commandDemo(o)));

program
  .command('agent')
  .description('an LLM agent investigates the bug, proposes patches and submits them for verification (on a scratch copy, never the workspace) until one is verified or a limit is reached; exit 0 when a patch was verified')
  .argument('<bug|dir>', 'a bug id (opens or reuses its default workspace) or a workspace folder')
  .requiredOption('--model <name>', 'model name as the endpoint knows it (gpt-4o, qwen2.5-coder:32b, ...)')
  .option('--base-url <url>', 'OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or https://api.openai.com/v1)')
  .option('--api-key-env <name>', 'environment variable holding the API key (default: OPENAI_API_KEY)')
  .addOption(new Option('--condition <c>', 'what the agent is given').choices(['symptom-only', 'context-augmented']).default('symptom-only'))
  .addOption(new Option('--protocol <p>', 'tool calling, the text-action protocol, or tools with a fallback to text').choices(['auto', 'tools', 'text']).default('auto'))
  .option('--max-steps <n>', 'model turns (default 40)', parseCount('--max-steps', 1))
  .option('--max-attempts <n>', 'submissions (default 3)', parseCount('--max-attempts', 1))
  .option('--max-tokens <n>', 'prompt + completion tokens (default 1000000)', parseCount('--max-tokens', 1))
  .option('--max-cost <usd>', 'US dollars, from the price table (default 2)', parseNumber('--max-cost', 0))
  .option('--max-minutes <m>', 'wall-clock time (default 30)', parseNumber('--max-minutes', 0.02))
  .option('--trials <n>', "live reproducer trials per verification (default: the bug's)", parseCount('--trials', 1))
  .option('--regression-trials <n>', 'trials of each regression check per verification (default 2)', parseCount('--regression-trials', 1))
  .option('--temperature <t>', 'sampling temperature (default: the endpoint\'s)', parseNumber('--temperature', 0))
  .option('--timeout <s>', 'seconds without a byte from the endpoint before a request fails (default 120)', parseNumber('--timeout', 0.1))
  .option('--evidence-budget <tokens>', 'tokens of evidence (context bundle and evidence tools) per run (default 40000)', parseCount('--evidence-budget', 1000))
  .option('--prices <file>', 'JSON price table: {"model": {"input": USD/1M tokens, "output": ..., "cachedInput": ...}}')
  .option('--json', 'machine-readable result (verified, attempts, steps, tokens, patch, trajectory, ...)')
  .action((target: string, o: AgentOpts) => runCommand(() => commandAgent(target, o)));

// Every command that runs live clusters can run them in containers instead (cli/backend.ts).
for (const name of ['up', 'repro', 'verify', 'validate', 'agent', 'bench']) {
  const command = program.commands.find((c) => c.name() === name);
  // The agent's settings carry the backend and image; the limits come from system.json there.
  if (command !== undefined) withBackendOptions(command, { limits: name !== 'agent' && name !== 'bench' });
}

program.parseAsync(process.argv);
