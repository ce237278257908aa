// The pilot tier's systems in the live tests: what stops one running on this machine,
// and a scratch copy of its source to run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCatalog, type SystemEntry } from '../../src/core/bugs/catalog';
import type { Cluster } from '../../src/core/cluster/types';
import { copySystemParts } from '../../src/core/bugs/workspace';
import { bwrapProgram } from '../../src/core/sandbox/isolation';
import type { Json } from '../../src/runtime/types';

/** Why the pilot systems cannot run here, or undefined when they can; `missing` names those not set up. */
export function whyUpstreamCannotRun(missing: readonly string[]): string | undefined {
  if (process.getuid?.() !== 0) return 'the run network needs root';
  if (bwrapProgram() === undefined) return 'bubblewrap is not available';
  if (missing.length > 0) return `${missing.join(', ')} not set up (run \`ddbench setup upstream\`)`;
  return undefined;
}

/**
 * Skips the suite, saying why, where it cannot run — and fails it in CI, which runs
 * `ddbench setup upstream` first.
 */
export function skipUnlessRunnable(ctx: Mocha.Context, why: string | undefined): void {
  if (why === undefined) return;
  if (process.env.CI) throw new Error(`CI runs \`ddbench setup upstream\` first, yet ${why}`);
  ctx.skip();
}

/** The pilot system `id`, with its source (and host program) copied as `src/` into a fresh scratch folder (the caller removes it). */
export async function upstreamScratch(ctx: Mocha.Context, id: string): Promise<{ system: SystemEntry; tmp: string }> {
  const system = (await loadCatalog()).systems.find((s) => s.kind === 'upstream' && s.id === id);
  const tree = system?.manifest.upstream?.tree;
  skipUnlessRunnable(ctx, system === undefined ? `bugs/upstream/${id}/system.json is missing` : whyUpstreamCannotRun(tree !== undefined && fs.existsSync(tree) ? [] : [id]));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `ddbench-upstream-${id}-`));
  copySystemParts(system!, tmp);
  return { system: system!, tmp };
}

/** A JSON value as an object, or an empty one: replies are read field by field. */
export function obj(v: Json | undefined): Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
}

/** Polls `fn` until it gives a value (a throw counts as none yet); fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** After a stopped cluster of real binaries: no node has a pid, no process runs from the run's folder, and its network namespace is gone. */
export function assertNothingLeft(cluster: Cluster, runDir: string, netns: string | undefined): void {
  assert.deepEqual(cluster.nodes().map((n) => n.pid).filter((p) => p !== undefined), []);
  const left = execFileSync('ps', ['-eo', 'args']).toString().split('\n').filter((l) => l.includes(runDir));
  assert.deepEqual(left, []);
  if (netns !== undefined) assert.ok(!execFileSync('ip', ['netns', 'list']).toString().includes(netns), `${netns} was not removed`);
}
