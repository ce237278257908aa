import * as path from 'node:path';
import type { BugEntry, SystemEntry } from '../bugs/catalog';
import { faultProfile, tierOf, type FaultProfile } from '../bugs/fault-profile';
import { readEventsFile } from '../events/read';
import { replaySeed, simulateSeeds } from '../sim/sandboxed';
import { withScratch } from './scratch';

/** Seeds searched for a failing run of the buggy code; a bug that fails this rarely fails validation anyway. */
const PROFILE_SEEDS = 100;

export interface MeasuredFaults {
  /** The failing seed the profile comes from: the first from seed 1. */
  seed: number;
  faults: FaultProfile;
  tier: 1 | 2 | 3;
}

/**
 * What the bug needs to show: the faults of the first failing simulated run of its
 * reproducer on the buggy code, and the tier they give. Undefined when no seed fails.
 */
export async function measureFaults(system: SystemEntry, bug: BugEntry, buggyDir: string): Promise<MeasuredFaults | undefined> {
  const scenario = bug.manifest.reproducer.scenario;
  const search = await simulateSeeds(system, buggyDir, scenario, { seeds: PROFILE_SEEDS, from: 1, stopAtFirstFailure: true });
  const seed = search.firstFailingSeed;
  if (seed === undefined) return undefined;
  return withScratch(async (runDir) => {
    const eventsFile = path.join(runDir, 'events.jsonl');
    await replaySeed(system, buggyDir, scenario, seed, { eventsFile });
    const faults = faultProfile((await readEventsFile(eventsFile)).events);
    return { seed, faults, tier: tierOf(faults) };
  });
}

/** What is wrong with a bug's declared tier and fault profile, measured on its failing run. */
export function faultProblems(bug: BugEntry, measured: MeasuredFaults | undefined): string[] {
  if (measured === undefined) return [];
  const problems: string[] = [];
  const declared = bug.manifest.faults.join(', ') || 'none';
  const got = measured.faults.join(', ') || 'none';
  if (declared !== got) problems.push(`bug.json's faults are [${declared}], but the failing run (seed ${measured.seed}) injects [${got}]`);
  if (bug.manifest.tier !== measured.tier) problems.push(`tier ${bug.manifest.tier} declared, but the failing run's faults [${got}] give tier ${measured.tier}`);
  return problems;
}
