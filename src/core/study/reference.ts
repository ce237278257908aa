import * as path from 'node:path';
import { findBug, findSystem, type Catalog } from '../bugs/catalog';
import { materialiseBuggySource, referenceFix } from '../bugs/workspace';
import { applyUnifiedDiff, changedFiles } from '../patch/unified';
import type { BugInfo } from './report';

/** What a report needs of every bug in the set. */
export function bugInfos(catalog: Catalog): Map<string, BugInfo> {
  return new Map(catalog.bugs.map((b) => [b.id, { system: b.system, tier: b.tier, title: b.title, referenceFix: referenceFix(b), kind: b.kind, ...(b.manifest.twin !== undefined && { twin: b.manifest.twin }) }]));
}

export interface ReferenceComparison {
  /** Files either patch touches, with both versions materialised under `dir`. */
  files: { path: string; reference: string; theirs: string }[];
  dir: string;
}

/**
 * Both fixes applied to the bug's code, side by side under `dir`, so a person can
 * compare their patch with the reference after their attempt (never during one —
 * the caller checks).
 */
export function materialiseComparison(catalog: Catalog, bugId: string, theirPatch: string, dir: string): ReferenceComparison {
  const bug = findBug(catalog, bugId);
  const system = findSystem(catalog, bug.system);
  const refDir = path.join(dir, 'reference');
  const theirsDir = path.join(dir, 'yours');
  const reference = referenceFix(bug);
  materialiseBuggySource(system, bug, refDir);
  materialiseBuggySource(system, bug, theirsDir);
  applyUnifiedDiff(refDir, reference);
  if (theirPatch.trim()) applyUnifiedDiff(theirsDir, theirPatch);
  const files = [...new Set([...changedFiles(reference), ...(theirPatch.trim() ? changedFiles(theirPatch) : [])])].sort();
  return { dir, files: files.map((f) => ({ path: f, reference: path.join(refDir, f), theirs: path.join(theirsDir, f) })) };
}
