import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BugEntry, Catalog } from '../bugs/catalog';
import { runsDir } from '../bugs/runs';
import { isWorkspace, readWorkspace } from '../bugs/workspace';
import { loadRecords } from './collect';
import { hintsTaken, readPractice } from './practice';
import { workspaceRecordsDir } from './store';

/**
 * Where a person stands on a bug, read from its workspace: not tried (no workspace, or
 * nothing done in it), attempted (a run, a hint, a verification or an attempt), or solved
 * (a verified fix, in a study attempt or in practice), with the best time to a fix.
 */
export type BugState = 'not-tried' | 'attempted' | 'solved';

export interface BugProgress {
  state: BugState;
  /** The fastest verified fix: an attempt's time to fix, or in practice the time from opening the workspace. */
  bestTimeMs?: number;
  /** The most hints taken in the workspace (practice or any attempt). */
  hints: number;
}

const NOT_TRIED: BugProgress = { state: 'not-tried', hints: 0 };

export async function workspaceProgress(dir: string): Promise<BugProgress> {
  if (!isWorkspace(dir)) return NOT_TRIED;
  const info = await readWorkspace(dir);
  const attempts = loadRecords([workspaceRecordsDir(dir)]).attempts;
  const practice = readPractice(dir);
  const times = attempts.flatMap((a) => (a.status === 'verified' && a.timeToFixMs !== undefined ? [a.timeToFixMs] : []));
  const firstVerified = practice.events.find((e) => e.kind === 'verify' && e.verified);
  if (firstVerified) times.push(Math.max(0, Date.parse(firstVerified.at) - Date.parse(info.createdAt)));
  const hints = hintsTaken(practice, attempts);
  if (times.length > 0) return { state: 'solved', bestTimeMs: Math.min(...times), hints };
  const ran = fs.existsSync(runsDir(dir)) && fs.readdirSync(runsDir(dir)).length > 0;
  const touched = ran || attempts.length > 0 || practice.events.length > 0;
  return touched ? { state: 'attempted', hints } : NOT_TRIED;
}

/** Each bug's progress from its workspace under `workspacesDir` (`<dir>/<bug id>`, where `open` puts it), and from `extra` workspaces (the open one). */
export async function catalogProgress(catalog: Catalog, workspacesDir: string, extra: readonly string[] = []): Promise<Map<string, BugProgress>> {
  const out = new Map<string, BugProgress>();
  const dirs = new Map<string, string[]>();
  for (const bug of catalog.bugs) dirs.set(bug.id, [path.join(workspacesDir, bug.id)]);
  for (const dir of extra) {
    const info = await readWorkspace(dir).catch(() => undefined);
    if (info) dirs.get(info.bugId)?.push(dir);
  }
  for (const [id, candidates] of dirs) {
    const all = await Promise.all([...new Set(candidates)].map((d) => workspaceProgress(d).catch(() => NOT_TRIED)));
    out.set(id, all.reduce(better, NOT_TRIED));
  }
  return out;
}

const RANK: Record<BugState, number> = { 'not-tried': 0, attempted: 1, solved: 2 };

function better(a: BugProgress, b: BugProgress): BugProgress {
  if (RANK[a.state] !== RANK[b.state]) return RANK[a.state] > RANK[b.state] ? a : b;
  const times = [a.bestTimeMs, b.bestTimeMs].filter((t): t is number => t !== undefined);
  return { state: a.state, hints: Math.max(a.hints, b.hints), ...(times.length > 0 && { bestTimeMs: Math.min(...times) }) };
}

/**
 * The bug to practise next: for a newcomer with nothing solved, the set's starter bug;
 * then the lowest tier not yet solved, an attempted one before a fresh one of the same
 * tier, then the set's order (system, then id).
 */
export function nextBug(catalog: Catalog, progress: ReadonlyMap<string, BugProgress>): BugEntry | undefined {
  // Practice runs on the miniatures; the real upstream bugs need a set-up step and are picked by name.
  const open = catalog.bugs.filter((b) => b.kind === 'miniature' && progress.get(b.id)?.state !== 'solved');
  const starter = open.find((b) => b.manifest.starter);
  if (starter && !catalog.bugs.some((b) => progress.get(b.id)?.state === 'solved')) return starter;
  const attemptedFirst = (b: BugEntry) => (progress.get(b.id)?.state === 'attempted' ? 0 : 1);
  return [...open].sort((a, b) => a.tier - b.tier || attemptedFirst(a) - attemptedFirst(b) || a.system.localeCompare(b.system) || a.id.localeCompare(b.id))[0];
}
