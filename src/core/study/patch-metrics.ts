import { parsePatch } from 'diff';

/** Size of a unified diff: the files it touches and its changed lines. */
export interface PatchStat {
  files: string[];
  added: number;
  removed: number;
}

export function patchStat(diff: string): PatchStat {
  const files: string[] = [];
  let added = 0;
  let removed = 0;
  for (const p of safeParse(diff)) {
    files.push(fileOf(p.oldFileName, p.newFileName));
    for (const h of p.hunks) {
      for (const l of h.lines) {
        if (l.startsWith('+')) added++;
        else if (l.startsWith('-')) removed++;
      }
    }
  }
  return { files, added, removed };
}

/**
 * Similarity of a patch to the reference fix: the Jaccard index of their changed
 * lines, |A ∩ B| / |A ∪ B|, where a patch's set holds one entry per added or removed
 * line, keyed by file, direction and the line's text with whitespace collapsed (so
 * re-indentation does not count as a difference, and hunk positions do not matter).
 * 1 means the same change, 0 nothing in common. Two empty patches count as 1.
 */
export function patchSimilarity(a: string, b: string): number {
  const sa = changedLineSet(a);
  const sb = changedLineSet(b);
  if (sa.size === 0 && sb.size === 0) return 1;
  let both = 0;
  for (const x of sa) if (sb.has(x)) both++;
  return both / (sa.size + sb.size - both);
}

function changedLineSet(diff: string): Set<string> {
  const out = new Set<string>();
  for (const p of safeParse(diff)) {
    const file = fileOf(p.oldFileName, p.newFileName);
    for (const h of p.hunks) {
      for (const l of h.lines) {
        if (!l.startsWith('+') && !l.startsWith('-')) continue;
        const text = l.slice(1).trim().replace(/\s+/g, ' ');
        if (text) out.add(`${file}\u0000${l[0]}\u0000${text}`);
      }
    }
  }
  return out;
}

/** A record's patch is data from disk: a diff that does not parse counts as empty, never as a crash. */
function safeParse(diff: string): ReturnType<typeof parsePatch> {
  if (!diff.trim()) return [];
  try {
    return parsePatch(diff).filter((p) => p.hunks.length > 0);
  } catch {
    return [];
  }
}

function fileOf(oldName: string | undefined, newName: string | undefined): string {
  const strip = (n: string | undefined) => (n ?? '').trim().split('\t')[0]!.replace(/^[ab]\//, '');
  const n = strip(newName);
  return n && n !== '/dev/null' ? n : strip(oldName);
}
