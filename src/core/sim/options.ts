import { z } from 'zod';

const Range = z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]).refine(([min, max]) => min <= max, 'min must not exceed max');

/**
 * How the simulated world behaves where live runs leave it to the machine. Every
 * range is drawn per occurrence from the run's seed; a shrunk schedule pulls draws
 * to the low end (the fallback).
 */
export const SimOptions = z.strictObject({
  /** Router-to-endpoint latency of each message copy, µs (loopback TCP plus event-loop delay). */
  latencyUs: Range.default([100, 2000]),
  /** How late a node's timer may fire, µs (Node timers fire a little late, never early); the scenario's own sleeps are exact. */
  timerJitterUs: z.number().int().nonnegative().default(1000),
  /** From start or restart to the node's code running, µs (process spawn and module load). */
  spawnDelayUs: Range.default([1000, 50_000]),
  /** How long a reordered message waits for the next one on its link before it goes anyway (the router's default). */
  reorderHoldMs: z.number().nonnegative().default(500),
  /** A run that takes more scheduler steps ends with verdict error: something loops without letting time pass. */
  maxSteps: z.number().int().positive().default(5_000_000),
});
export type SimOptions = z.infer<typeof SimOptions>;
export type SimOptionsInput = z.input<typeof SimOptions>;

export const DEFAULT_SIM_OPTIONS: SimOptions = SimOptions.parse({});

/** Virtual epoch of rt.now(): a fixed instant, so no run depends on when it ran. */
export const SIM_EPOCH_MS = Date.UTC(2025, 0, 1);
