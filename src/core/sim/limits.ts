import { z } from 'zod';

/**
 * What one simulated seed may spend. A seed runs on virtual time, far faster than
 * the real time its scenario allows, so a seed that takes longer in real time than
 * the scenario's whole budget (timeoutMs, at least MIN_SEED_WALL_MS) is stuck in a
 * loop that never yields; one that needs more heap than SEED_HEAP_MB leaks without
 * bound. Either ends with verdict timeout.
 */
export const SeedLimits = z.strictObject({
  /** Real ms one seed may run (both runs of it, with checkDeterminism, get this each). */
  wallMs: z.number().int().positive().optional(),
  /** The worker's V8 heap (old generation), MB. */
  heapMb: z.number().int().positive().optional(),
});
export type SeedLimits = z.infer<typeof SeedLimits>;

export const MIN_SEED_WALL_MS = 10_000;
export const SEED_HEAP_MB = 512;
/** The sandboxed child's own heap: it holds results, and for shrink and replay it runs the seeds itself. */
export const CHILD_HEAP_MB = 1024;
/** Real ms the child has to load the scenario and say it is ready. */
export const CHILD_START_MS = 60_000;

/** A seed's real-time budget for a scenario of `timeoutMs` virtual ms. */
export function seedWallMs(timeoutMs: number, limits: SeedLimits | undefined): number {
  return limits?.wallMs ?? Math.max(MIN_SEED_WALL_MS, timeoutMs);
}

export function seedHeapMb(limits: SeedLimits | undefined): number {
  return limits?.heapMb ?? SEED_HEAP_MB;
}
