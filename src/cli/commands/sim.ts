import { Option } from 'commander';
import { z } from 'zod';
import { UserError } from '../../core/errors';
import { shrinkWorkspaceSeed, simulateWorkspace } from '../../core/sim/workspace';
import { count, optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, progress, say, withInterrupt } from '../output';
import { printShrunk, simProgress } from '../sim-report';

export const simOptions = options(
  optionGroup(
    [
      new Option('--seeds <n>', 'number of seeds (default: 100)'),
      new Option('--from <s>', 'first seed (default: 1)'),
      new Option('--stop-at-first', 'stop at the first failing seed'),
      new Option('--scenario <name>', "another of the system's scenarios (a regression check, say)"),
      new Option('--check-determinism', 'run every seed twice and compare the events byte for byte'),
      new Option('--shrink', 'shrink the first failing seed to the scheduler decisions that matter'),
      new Option('--concurrency <n>', 'seeds at once, in worker threads (default: number of cores)'),
    ],
    z.object({
      seeds: count('--seeds', 1).optional(),
      from: count('--from', 0).optional(),
      stopAtFirst: z.boolean().optional(),
      scenario: z.string().optional(),
      checkDeterminism: z.boolean().optional(),
      shrink: z.boolean().optional(),
      concurrency: count('--concurrency', 1).optional(),
    }),
  ),
  outputOptions(),
);
export type SimOpts = OptionsOf<typeof simOptions>;

export const DEFAULT_CLI_SEEDS = 100;

export async function commandSim(dir: string, o: SimOpts): Promise<number> {
  return withInterrupt(async (signal) => {
    const r = await simulateWorkspace(dir, {
      seeds: o.seeds ?? DEFAULT_CLI_SEEDS,
      from: o.from,
      stopAtFirstFailure: o.stopAtFirst,
      scenario: o.scenario,
      checkDeterminism: o.checkDeterminism,
      concurrency: o.concurrency,
      signal,
      onSeed: o.json ? undefined : simProgress('code'),
    });
    let shrunk;
    if (o.shrink && r.firstFailingSeed !== undefined) {
      if (!o.json) progress(`shrinking the schedule of seed ${r.firstFailingSeed} …`);
      shrunk = await shrinkWorkspaceSeed(dir, r.firstFailingSeed, { scenario: o.scenario, signal });
    }
    if (o.json) printJson({ ...r, ...(shrunk && { shrunk }) });
    else {
      const last = r.from + r.seedsRun - 1;
      say(`simulated ${r.scenario} of ${r.bugId} in ${r.dir}`);
      say(`  seeds run: ${r.seedsRun} (${r.from}..${last})`);
      say(`  failed seeds: ${r.failedSeeds.length}${r.failedSeeds.length ? ` (${(r.failureRate * 100).toFixed(1)}%): ${r.failedSeeds.slice(0, 30).join(', ')}${r.failedSeeds.length > 30 ? ', …' : ''}` : ''}`);
      if (r.firstFailure) say(`  first failing seed: ${r.firstFailure.seed} — ${r.firstFailure.verdict}: ${r.firstFailure.reason ?? ''}`);
      say(`  seeds per second: ${r.seedsPerSecond.toFixed(1)}`);
      say(`  isolation: ${r.isolation} (docs/security.md)`);
      if (o.checkDeterminism) say(`  determinism: ${r.nondeterministicSeeds.length === 0 ? 'every seed ran twice with byte-identical events' : `seeds ${r.nondeterministicSeeds.join(', ')} gave different events on a second run`}`);
      if (shrunk) printShrunk(shrunk);
      if (r.firstFailingSeed !== undefined) say(`\nreplay it: ddbench replay ${r.dir} --seed ${r.firstFailingSeed}${o.scenario ? ` --scenario ${o.scenario}` : ''}`);
    }
    if (r.nondeterministicSeeds.length > 0) throw new UserError(`the simulation is not deterministic for seeds ${r.nondeterministicSeeds.join(', ')}: the system or scenario depends on something outside rt (module-level state, Math.random, Date.now, real timers or I/O)`);
    return r.failedSeeds.length === 0 && r.seedsRun > 0 ? EXIT.ok : EXIT.failed;
  });
}
