import { z } from 'zod';

/**
 * How a run of submitted code was kept from the rest of the machine, strongest first:
 * a bubblewrap sandbox (private mounts, PID and network namespaces) or a container;
 * Node's permission model alone (files, child processes, workers; the network stays
 * open); nothing.
 */
export const Isolation = z.enum(['bwrap', 'docker', 'node-permission', 'none']);
export type Isolation = z.infer<typeof Isolation>;

const STRENGTH: Record<Isolation, number> = { bwrap: 2, docker: 2, 'node-permission': 1, none: 0 };

/** Whether `got` is at least as strong as `wanted` (bwrap and docker rank alike). */
export function meetsIsolation(got: Isolation, wanted: Isolation): boolean {
  return STRENGTH[got] >= STRENGTH[wanted];
}

/** The weakest of several runs' isolations (unknown ones left out): what a verdict built from all of them can claim. */
export function weakestIsolation(all: readonly (Isolation | undefined)[]): Isolation | undefined {
  return all.reduce<Isolation | undefined>((weakest, i) => (i === undefined || (weakest !== undefined && STRENGTH[weakest] <= STRENGTH[i]) ? weakest : i), undefined);
}
