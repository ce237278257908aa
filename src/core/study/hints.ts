import { type Catalog } from '../bugs/catalog';
import { referenceFix, resolveWorkspace } from '../bugs/workspace';
import { UserError } from '../errors';
import { loadRecords } from './collect';
import { HumanAttempt } from './human';
import { appendPractice, hintsTaken, readPractice } from './practice';
import { workspaceRecordsDir } from './store';

/**
 * A bug's hints are a graded ladder (bug.json): where to look, what evidence to read, the
 * mechanism, the fix idea. A person climbs it one rung at a time; every rung taken is
 * recorded — in the attempt's record during a study attempt, else in the workspace's
 * practice log. Hints reach people only: no agent condition shows them.
 */
export type HintStage = 'where to look' | 'evidence' | 'mechanism' | 'fix idea';

export interface Hint {
  /** 1-based. */
  level: number;
  total: number;
  stage: HintStage;
  text: string;
}

export interface HintLadder {
  /** The hints taken so far, in order. */
  shown: Hint[];
  total: number;
  /** The hint this call revealed, if any (none when every hint was already shown). */
  revealed?: Hint;
  during: 'attempt' | 'practice';
}

/** What a rung is for: the first says where to look, the last the fix idea, the one before it the mechanism. */
export function hintStage(level: number, total: number): HintStage {
  if (level === 1) return 'where to look';
  if (level === total) return 'fix idea';
  if (level === total - 1) return 'mechanism';
  return 'evidence';
}

/** The hints taken so far in the workspace, without taking one. */
export async function hintLadder(dir: string, catalog?: Catalog): Promise<HintLadder> {
  return climb(dir, false, catalog);
}

/**
 * Takes the next hint and records it. During a study attempt whose study does not allow
 * hints, the refusal is logged in the attempt and a UserError says so.
 */
export async function takeNextHint(dir: string, catalog?: Catalog): Promise<HintLadder> {
  return climb(dir, true, catalog);
}

async function climb(dir: string, take: boolean, catalog?: Catalog): Promise<HintLadder> {
  const ws = await resolveWorkspace(dir, catalog);
  const hints = ws.bug.manifest.hints;
  const total = hints.length;
  const view = (level: number): Hint => ({ level, total, stage: hintStage(level, total), text: hints[level - 1]! });
  const upTo = (n: number) => Array.from({ length: Math.min(n, total) }, (_, i) => view(i + 1));
  const attempt = HumanAttempt.resume(workspaceRecordsDir(ws.info.dir));
  if (attempt?.active) {
    if (!attempt.hintsAllowed) {
      if (take) attempt.note({ kind: 'refused', command: 'hint' });
      throw new UserError('this study does not allow hints during an attempt (the researcher\'s setting ddbench.study.allowHints); your request is logged');
    }
    const taken = attempt.record.hints.length;
    if (!take || taken >= total) return { shown: upTo(taken), total, during: 'attempt' };
    const level = attempt.hintTaken();
    return { shown: upTo(level), total, revealed: view(level), during: 'attempt' };
  }
  // Outside an attempt, every hint the person has already read counts, in practice or in an ended attempt.
  const taken = hintsTaken(readPractice(ws.info.dir), loadRecords([workspaceRecordsDir(ws.info.dir)]).attempts);
  if (!take || taken >= total) return { shown: upTo(taken), total, during: 'practice' };
  const level = taken + 1;
  appendPractice(ws.info.dir, { v: 1, at: new Date().toISOString(), kind: 'hint', level });
  return { shown: upTo(level), total, revealed: view(level), during: 'practice' };
}

/**
 * The bug's reference fix, for practice only: refused during a study attempt (the
 * comparison after the attempt is the study's way to show it). Each reveal is logged.
 */
export async function revealReferenceFix(dir: string, catalog?: Catalog): Promise<string> {
  const ws = await resolveWorkspace(dir, catalog);
  if (HumanAttempt.resume(workspaceRecordsDir(ws.info.dir))?.active) {
    throw new UserError('the reference fix is not shown during a study attempt; submit a verified fix or give up, then compare with the reference');
  }
  appendPractice(ws.info.dir, { v: 1, at: new Date().toISOString(), kind: 'reference' });
  return referenceFix(ws.bug);
}
