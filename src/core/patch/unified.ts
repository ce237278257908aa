import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyPatch, createTwoFilesPatch, parsePatch, reversePatch, type StructuredPatch } from 'diff';
import { UserError } from '../errors';
import { listFiles } from './tree';

/**
 * A unified diff turning the files under `beforeDir` into those under `afterDir`, paths
 * relative to both (git style `a/` and `b/` prefixes). Only the listed `roots` are compared.
 */
export function diffTrees(beforeDir: string, afterDir: string, roots: readonly string[], exclude: readonly string[] = []): string {
  const files = new Set<string>();
  for (const r of roots) {
    for (const f of listFiles(path.join(beforeDir, r), exclude)) files.add(`${r}/${f}`);
    for (const f of listFiles(path.join(afterDir, r), exclude)) files.add(`${r}/${f}`);
  }
  let out = '';
  for (const rel of [...files].sort()) {
    const before = readIfExists(path.join(beforeDir, rel));
    const after = readIfExists(path.join(afterDir, rel));
    if (before === after) continue;
    const patch = createTwoFilesPatch(
      before === undefined ? '/dev/null' : `a/${rel}`,
      after === undefined ? '/dev/null' : `b/${rel}`,
      before ?? '',
      after ?? '',
      undefined,
      undefined,
      { context: 3 },
    );
    out += patch.replace(/^=+\n/m, '');
  }
  return out;
}

export interface AppliedPatch {
  files: string[];
  /** Context-line mismatches that had to be tolerated (0 = applied exactly). */
  fuzz: number;
}

const MAX_FUZZ = 3;

/**
 * Applies a unified diff to the files under `dir`, trying exact context first and then
 * increasing tolerance (as SWE-bench's harness does). Nothing is written unless every file applies.
 */
export function applyUnifiedDiff(dir: string, diffText: string, name = 'patch'): AppliedPatch {
  const patches = parseDiff(diffText, name);
  const results: { file: string; content: string | null }[] = [];
  let worstFuzz = 0;
  for (const p of patches) {
    const rel = targetPath(p, name);
    const abs = safeJoin(dir, rel, name);
    const deleting = stripPrefix(p.newFileName) === '/dev/null';
    const creating = stripPrefix(p.oldFileName) === '/dev/null';
    const current = creating ? '' : readIfExists(abs);
    if (current === undefined) throw new UserError(`${name}: ${rel}: file does not exist in ${dir}`);
    let applied: string | false = false;
    let fuzz = 0;
    for (; fuzz <= MAX_FUZZ && applied === false; fuzz++) applied = applyPatch(current, p, { fuzzFactor: fuzz });
    if (applied === false) {
      const first = p.hunks[0];
      throw new UserError(`${name}: ${rel}: hunk at line ${first?.oldStart ?? '?'} does not match the file (even with ${MAX_FUZZ} context lines of tolerance)`);
    }
    worstFuzz = Math.max(worstFuzz, fuzz - 1);
    results.push({ file: rel, content: deleting ? null : applied });
  }
  for (const r of results) {
    const abs = path.join(dir, r.file);
    if (r.content === null) fs.rmSync(abs, { force: true });
    else {
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, r.content);
    }
  }
  return { files: results.map((r) => r.file), fuzz: worstFuzz };
}

/** The diff that undoes `diffText` (the reference fix is the reverse of a bug's patch). */
export function reverseUnifiedDiff(diffText: string): string {
  return parseDiff(diffText)
    .map((p) => reversePatch(p))
    .map((p) => formatStructured(p))
    .join('');
}

export function changedFiles(diffText: string, name = 'patch'): string[] {
  return parseDiff(diffText, name).map((p) => targetPath(p, name));
}

/** `git diff --binary` and plain `git diff` of a binary file; neither carries text hunks. */
const BINARY = /^(GIT binary patch|Binary files .* differ)$/m;

/** `name` says which patch in messages ("patch", or "patch FILE"). */
function parseDiff(diffText: string, name = 'patch'): StructuredPatch[] {
  const binary = BINARY.exec(diffText);
  if (binary) throw new UserError(`${name}: binary patches are not supported ("${binary[0]}"); give a text unified diff of the source (ddbench diff prints one)`);
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(diffText);
  } catch (err) {
    throw new UserError(`${name}: not a unified diff (${(err as Error).message})`);
  }
  patches = patches.filter((p) => p.hunks.length > 0 || p.oldFileName || p.newFileName);
  if (patches.length === 0) throw new UserError(`${name}: the diff is empty`);
  return patches;
}

function formatStructured(p: StructuredPatch): string {
  const lines = [`--- ${p.oldFileName}`, `+++ ${p.newFileName}`];
  for (const h of p.hunks) {
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines);
  }
  return lines.join('\n') + '\n';
}

function targetPath(p: StructuredPatch, patchName: string): string {
  const name = stripPrefix(p.newFileName) === '/dev/null' ? stripPrefix(p.oldFileName) : stripPrefix(p.newFileName);
  if (!name || name === '/dev/null') throw new UserError(`${patchName}: a file section names no file`);
  return name;
}

function stripPrefix(name: string | undefined): string {
  if (!name) return '';
  const n = name.trim().split('\t')[0] ?? '';
  return n === '/dev/null' ? n : n.replace(/^[ab]\//, '');
}

/** Patches may only touch files inside the folder they are applied to. */
function safeJoin(dir: string, rel: string, name: string): string {
  const abs = path.resolve(dir, rel);
  if (!abs.startsWith(path.resolve(dir) + path.sep)) throw new UserError(`${name}: ${rel} is outside the workspace`);
  return abs;
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
