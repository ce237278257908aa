import { Command } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agentOptions, commandAgent } from './commands/agent';
import { benchOptions, commandBench } from './commands/bench';
import { bugsOptions, commandBugs } from './commands/bugs';
import { commandDemo, demoOptions } from './commands/demo';
import { commandDiff } from './commands/diff';
import { commandHint, hintOptions } from './commands/hint';
import { commandOpen, openOptions } from './commands/open';
import { commandReplay, replayOptions } from './commands/replay';
import { commandRepro, reproOptions } from './commands/repro';
import { commandSetup, setupOptions } from './commands/setup';
import { commandSim, simOptions } from './commands/sim';
import { checkOptions, commandRecordsCheck, commandRecordsMerge, commandReport, mergeOptions, reportOptions } from './commands/study-report';
import { commandTimeline, timelineOptions } from './commands/timeline';
import { commandUp, upOptions } from './commands/up';
import { commandValidate, validateOptions } from './commands/validate';
import { commandVerify, verifyOptions } from './commands/verify';
import { packageRoot } from '../core/paths';
import { withOptions, options } from './options';
import { EXIT, EXIT_HELP } from './output';

const version = (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;

// Each command's options are declared and parsed with zod beside it (cli/options.ts has the groups they share).
const program = new Command('ddbench')
  .description('Practise, study and demo the repair of distributed-system bugs.')
  .version(version)
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText('after', EXIT_HELP)
  // Usage errors exit 2, like every other input a user can fix; help and version exit 0.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT.usage));

withOptions(program.command('bugs').description('list the bug set'), bugsOptions, (o) => commandBugs(o));

withOptions(
  program
    .command('open')
    .description('materialise a bug workspace (its buggy source, ISSUE.md and .ddbench/) and print its path')
    .argument('<bug>', 'bug id (see `ddbench bugs`)'),
  openOptions,
  (o, bug: string) => commandOpen(bug, o),
);

withOptions(
  program
    .command('up')
    .description('launch the cluster of a bug or workspace, show its nodes and live events; Ctrl-C stops it cleanly')
    .argument('<bug|dir>', 'a bug id (opens or reuses its default workspace) or a workspace folder'),
  upOptions,
  (o, target: string) => commandUp(target, o),
);

withOptions(
  program
    .command('repro')
    .description("run the bug's reproducer against the workspace's code; exit 0 when every trial passes, 1 when any fails")
    .argument('<dir>', 'workspace folder'),
  reproOptions,
  (o, dir: string) => commandRepro(dir, o),
);

withOptions(
  program
    .command('verify')
    .description("apply a fix to a scratch copy of the bug's code (never the workspace) and run the reproducer and regression checks")
    .argument('<dir>', 'workspace folder')
    .addHelpText('after', "\nWith neither --patch nor --reference, the workspace's own changes (as `ddbench diff` prints them) are verified."),
  verifyOptions,
  (o, dir: string) => commandVerify(dir, o),
);

withOptions(
  program
    .command('setup')
    .description('upstream: install what the real upstream systems need (Debian packages with their sources, the sandbox) and build them once (needs root); image: build the ddbench CLI image on the Docker engine without a registry (deploy/README.md)')
    .argument('<what>', 'what to set up: upstream or image'),
  setupOptions,
  (o, what: string) => commandSetup(what, o),
);

withOptions(
  program
    .command('diff')
    .description("print the workspace's changes to the bug's original code as a unified diff")
    .argument('<dir>', 'workspace folder'),
  options(),
  (_o, dir: string) => commandDiff(dir),
);

withOptions(
  program
    .command('hint')
    .description("take the next hint of the bug's graded ladder (where to look, evidence, mechanism, fix idea); each hint taken is recorded")
    .argument('<dir>', 'workspace folder'),
  hintOptions,
  (o, dir: string) => commandHint(dir, o),
);

withOptions(
  program
    .command('validate')
    .description('check bugs of the set: the reproducer fails on the buggy code in >=90% of trials and passes on the fix in 100%; under simulation the buggy code fails and the fix passes every seed')
    .argument('[bug...]', 'bug ids (default: all)'),
  validateOptions,
  (o, bugs: string[]) => commandValidate(bugs, o),
);

withOptions(
  program
    .command('sim')
    .description("run the bug's reproducer over many seeds in simulation (one process, virtual time) against the workspace's code; exit 1 if any seed fails")
    .argument('<dir>', 'workspace folder'),
  simOptions,
  (o, dir: string) => commandSim(dir, o),
);

withOptions(
  program
    .command('replay')
    .description("replay one simulated seed: write its events (for the timeline) under the workspace's .ddbench/runs/replay-seed-S/ and print where it failed; exit 1 if it failed")
    .argument('<dir>', 'workspace folder'),
  replayOptions,
  (o, dir: string) => commandReplay(dir, o),
);

withOptions(
  program
    .command('timeline')
    .description('the timeline of a run: a self-contained HTML page (--html), a Chrome/Perfetto or ShiViz trace (--export), or a summary')
    .argument('<input...>', 'a workspace (its latest run), a run or trial folder, or event/log files (events, router, OTLP, Jaeger or Zipkin JSON, Chrome trace, ShiViz or text logs)'),
  timelineOptions,
  (o, inputs: string[]) => commandTimeline(inputs, o),
);

withOptions(
  program
    .command('report')
    .description('compare attempts, by people and agents, from study records: pass rates with 95% Wilson intervals, time to fix, submissions, patch size and similarity to the reference fix, tokens and cost, per bug, tier and group; the context lift and the spread across models'),
  reportOptions,
  (o) => commandReport(o),
);

const records = program.command('records').description("study records: merge many machines' files into one, check every line");
withOptions(
  records
    .command('merge')
    .description('append to one file every record of the sources it lacks (each attempt revision and interaction once; older schema versions upgraded)')
    .argument('<source...>', 'records files or folders (searched for *.jsonl)'),
  mergeOptions,
  (o, sources: string[]) => commandRecordsMerge(sources, o),
);
withOptions(
  records
    .command('check')
    .description('validate every line; list torn, corrupt and too-new lines with their numbers; exit 1 if any')
    .argument('[path...]', 'records files or folders (default: ./.ddbench/records)'),
  checkOptions,
  (o, paths: string[]) => commandRecordsCheck(paths, o),
);

withOptions(
  program
    .command('bench')
    .description('batch evaluation: every bug × model × condition × repeat through the agent harness, each run in its own workspace and recorded as it ends; rerun to resume (recorded runs are skipped); ends with the report'),
  benchOptions,
  (o) => commandBench(o),
);

withOptions(
  program.command('demo').description('the main job on a fresh machine: open the first bug, show its failing reproducer with evidence, verify the reference fix'),
  demoOptions,
  (o) => commandDemo(o),
);

withOptions(
  program
    .command('agent')
    .description('an LLM agent investigates the bug, proposes patches and submits them for verification (on a scratch copy, never the workspace) until one is verified or a limit is reached; exit 0 when a patch was verified')
    .argument('<bug|dir>', 'a bug id (opens or reuses its default workspace) or a workspace folder'),
  agentOptions,
  (o, target: string) => commandAgent(target, o),
);

// A reader that stopped (`ddbench timeline … | head`) is not an error: the rest of the output is dropped and the command still finishes (and cleans up).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
});

program.parseAsync(process.argv);
