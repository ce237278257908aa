import { Option } from 'commander';
import * as path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../core/errors';
import { formatEvent, trialEvidence } from '../../core/repro/evidence';
import { readScheduleFile } from '../../core/sim/replay';
import { replayWorkspaceSeed } from '../../core/sim/workspace';
import { count, optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, progress, say } from '../output';
import { printShrunk } from '../sim-report';

export const replayOptions = options(
  optionGroup(
    [
      new Option('--seed <s>', 'the seed to replay'),
      new Option('--out <file>', 'write the events here instead'),
      new Option('--scenario <name>', "another of the system's scenarios"),
      new Option('--schedule <file>', 'replay a schedule.json written by an earlier replay (a shrunk one, say)'),
      new Option('--shrink', 'shrink the failing schedule first, then replay the shrunk one'),
    ],
    z.object({ seed: count('--seed', 0).optional(), out: z.string().optional(), scenario: z.string().optional(), schedule: z.string().optional(), shrink: z.boolean().optional() }),
  ),
  outputOptions(),
);
export type ReplayOpts = OptionsOf<typeof replayOptions>;

export async function commandReplay(dir: string, o: ReplayOpts): Promise<number> {
  const schedule = o.schedule === undefined ? undefined : readScheduleFile(path.resolve(o.schedule));
  const seed = o.seed ?? schedule?.seed;
  if (seed === undefined) throw new UserError('give the seed to replay (--seed S) or a schedule file (--schedule FILE)');
  if (schedule && o.seed !== undefined && o.seed !== schedule.seed) throw new UserError(`--seed ${o.seed} disagrees with the schedule's seed ${schedule.seed}`);
  if (o.shrink && !o.json) progress(`shrinking the schedule of seed ${seed} …`);
  const r = await replayWorkspaceSeed(dir, {
    seed,
    scenario: o.scenario ?? schedule?.scenario,
    ...(o.out && { out: path.resolve(o.out) }),
    ...(schedule?.keep && { keep: schedule.keep }),
    ...(schedule?.sim && { sim: schedule.sim }),
    shrink: o.shrink,
  });
  const failed = r.result.verdict !== 'pass';
  if (o.json) {
    printJson(r);
    return failed ? EXIT.failed : EXIT.ok;
  }
  const at = `${(r.result.virtualMs / 1000).toFixed(3)} s virtual`;
  say(`replayed seed ${seed} of ${r.scenario} (${r.bugId})${r.shrunk || schedule?.keep ? ', shrunk schedule' : ''}: ${failed ? `${r.result.verdict.toUpperCase()} at ${at}` : `passed in ${at}`}`);
  if (r.shrunk) printShrunk(r.shrunk);
  if (failed) {
    const v = r.result.violation;
    say(`\nWhere it failed: ${v ? `${v.check} ${JSON.stringify(v.details)}` : (r.result.reason ?? r.result.verdict)}`);
    say('The last events before it:');
    for (const e of r.lastEvents) say(`  ${formatEvent(e)}`);
    const ev = await trialEvidence({ index: 0, scenario: r.scenario, seed, verdict: r.result.verdict, durationMs: r.result.durationMs, eventsFile: r.eventsFile }, 12);
    say('Faults, warnings and harness events:');
    for (const e of ev.events) say(`  ${formatEvent(e)}`);
  }
  say(`\nevents: ${r.eventsFile} (${r.result.events} events, sha256 ${r.digest.slice(0, 16)}…)`);
  say(`schedule: ${r.scheduleFile}`);
  return failed ? EXIT.failed : EXIT.ok;
}
