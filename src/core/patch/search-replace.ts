import { echo } from '../echo';

/**
 * Search/replace edit blocks, applied with increasing tolerance (exact, then ignoring
 * trailing whitespace, then indentation, then any whitespace and Unicode look-alike
 * punctuation) but never by similarity: a block that matches nothing, or more than one
 * place, is reported with the closest region so the author can correct it.
 */

export interface EditBlock {
  search: string;
  replace: string;
}

/** How a block was found; later strategies tolerate more. */
export type MatchStrategy = 'exact' | 'trailing-whitespace' | 'indentation' | 'whitespace';

export interface AppliedBlock {
  block: number;
  strategy: MatchStrategy;
  /** First line (1-based) the block replaced. */
  line: number;
}

export type BlockProblem = 'no-match' | 'ambiguous' | 'noop' | 'empty-search';

export class EditBlockError extends Error {
  constructor(
    readonly block: number,
    readonly problem: BlockProblem,
    message: string,
  ) {
    super(message);
    this.name = 'EditBlockError';
  }
}

/**
 * Applies the blocks in order to `content` and returns the new text, or throws an
 * EditBlockError for the first block that cannot be applied (then nothing is applied).
 * An empty search is allowed only for an empty file (creating it).
 */
export function applyEditBlocks(content: string, blocks: readonly EditBlock[], file: string): { content: string; applied: AppliedBlock[] } {
  const eol = content.includes('\r\n') ? '\r\n' : '\n';
  let text = content.replace(/\r\n/g, '\n');
  const applied: AppliedBlock[] = [];
  blocks.forEach((raw, i) => {
    const n = i + 1;
    const block = { search: raw.search.replace(/\r\n/g, '\n'), replace: raw.replace.replace(/\r\n/g, '\n') };
    if (block.search === block.replace) throw new EditBlockError(n, 'noop', `block ${n}: SEARCH and REPLACE are identical, so it changes nothing`);
    if (block.search.trim() === '') {
      if (text.trim() !== '') throw new EditBlockError(n, 'empty-search', `block ${n}: SEARCH is empty; copy the lines to change from ${file} (an empty SEARCH only creates a new file)`);
      text = block.replace;
      applied.push({ block: n, strategy: 'exact', line: 1 });
      return;
    }
    const found = locate(text, block.search);
    // Reported against the file as the author last saw it (nothing is written on a failure).
    if (found.kind === 'none') throw new EditBlockError(n, 'no-match', noMatchMessage(n, file, content.replace(/\r\n/g, '\n'), block));
    if (found.kind === 'many') {
      throw new EditBlockError(n, 'ambiguous', `block ${n}: SEARCH matches ${file} in ${found.lines.length} places (lines ${found.lines.join(', ')}); add surrounding lines to SEARCH so it matches exactly one`);
    }
    const replacement = found.strategy === 'indentation' || found.strategy === 'whitespace' ? reindent(block.search, block.replace, found.matched) : block.replace;
    text = text.slice(0, found.start) + replacement + text.slice(found.end);
    applied.push({ block: n, strategy: found.strategy, line: lineOf(text, found.start) });
  });
  return { content: eol === '\n' ? text : text.replace(/\n/g, eol), applied };
}

type Located =
  | { kind: 'one'; start: number; end: number; strategy: MatchStrategy; matched: string }
  | { kind: 'many'; lines: number[] }
  | { kind: 'none' };

const LINE_STRATEGIES: { strategy: MatchStrategy; norm: (line: string) => string }[] = [
  { strategy: 'trailing-whitespace', norm: (l) => l.trimEnd() },
  { strategy: 'indentation', norm: (l) => l.trim() },
  { strategy: 'whitespace', norm: (l) => normalisePunctuation(l).replace(/\s+/g, ' ').trim() },
];

function locate(text: string, search: string): Located {
  const exact = allIndexes(text, search);
  if (exact.length === 1) return { kind: 'one', start: exact[0]!, end: exact[0]! + search.length, strategy: 'exact', matched: search };
  if (exact.length > 1) return { kind: 'many', lines: exact.map((i) => lineOf(text, i)) };
  const lines = splitLines(text);
  const wanted = trimBlankEnds(search.split('\n'));
  for (const { strategy, norm } of LINE_STRATEGIES) {
    const needle = wanted.map(norm);
    const hits: number[] = [];
    for (let s = 0; s + needle.length <= lines.length; s++) {
      if (needle.every((l, k) => norm(lines[s + k]!.text) === l)) hits.push(s);
    }
    if (hits.length > 1) return { kind: 'many', lines: hits.map((h) => h + 1) };
    if (hits.length === 1) {
      const first = lines[hits[0]!]!;
      const last = lines[hits[0]! + needle.length - 1]!;
      // The match covers whole lines; keep the newline after it unless SEARCH ended with one.
      const end = search.endsWith('\n') ? last.end + 1 : last.end;
      return { kind: 'one', start: first.start, end: Math.min(end, text.length), strategy, matched: text.slice(first.start, last.end) };
    }
  }
  return { kind: 'none' };
}

/** Moves REPLACE by the indentation difference between SEARCH and what it matched. */
function reindent(search: string, replace: string, matched: string): string {
  const want = indentOf(firstNonBlank(matched));
  const had = indentOf(firstNonBlank(search));
  if (want === had) return trimBlankEnds(replace.split('\n')).join('\n') + (search.endsWith('\n') ? '\n' : '');
  const body = trimBlankEnds(replace.split('\n')).map((l) => {
    if (l.trim() === '') return l;
    return l.startsWith(had) ? want + l.slice(had.length) : want + l.trimStart();
  });
  return body.join('\n') + (search.endsWith('\n') ? '\n' : '');
}

function noMatchMessage(n: number, file: string, text: string, block: EditBlock): string {
  const lines = splitLines(text).map((l) => l.text);
  const wanted = trimBlankEnds(block.search.split('\n'));
  const replaceLines = trimBlankEnds(block.replace.split('\n'));
  if (replaceLines.length > 0 && allIndexes(text, replaceLines.join('\n')).length > 0) {
    return `block ${n}: SEARCH does not match ${file}, but REPLACE is already there (line ${lineOf(text, allIndexes(text, replaceLines.join('\n'))[0]!)}): was this block applied already?`;
  }
  const best = closestRegion(lines, wanted);
  if (!best) return `block ${n}: SEARCH does not match ${file}, which is empty or shorter than SEARCH`;
  const shown = lines.slice(best.start, best.start + wanted.length).map((l, k) => `${String(best.start + k + 1).padStart(5)}| ${l}`);
  const firstDiff = wanted.findIndex((l, k) => l.trim() !== (lines[best.start + k] ?? '').trim());
  const detail =
    firstDiff >= 0
      ? `\nThe first line that differs is SEARCH line ${firstDiff + 1}:\n  SEARCH: ${echo(wanted[firstDiff] ?? '')}\n  file:   ${echo(lines[best.start + firstDiff] ?? '(end of file)')}`
      : '';
  return (
    `block ${n}: SEARCH does not match ${file} (not even ignoring whitespace and indentation). ` +
    `The closest region is lines ${best.start + 1}-${best.start + wanted.length} (${Math.round(best.score * 100)}% similar):\n${shown.join('\n')}${detail}\n` +
    'Copy SEARCH from the file exactly (read_file shows the current text); nothing was changed.'
  );
}

/** The window of the file most like SEARCH, line by line (bigram similarity of trimmed lines). */
function closestRegion(lines: string[], wanted: string[]): { start: number; score: number } | undefined {
  if (wanted.length === 0 || lines.length < wanted.length) return undefined;
  const grams = wanted.map((l) => bigrams(l.trim()));
  const fileGrams = lines.map((l) => bigrams(l.trim()));
  let best: { start: number; score: number } | undefined;
  for (let s = 0; s + wanted.length <= lines.length; s++) {
    let sum = 0;
    for (let k = 0; k < wanted.length; k++) sum += dice(grams[k]!, fileGrams[s + k]!);
    const score = sum / wanted.length;
    if (!best || score > best.score) best = { start: s, score };
  }
  return best;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(a: Map<string, number>, b: Map<string, number>): number {
  let total = 0;
  let common = 0;
  for (const v of a.values()) total += v;
  for (const v of b.values()) total += v;
  if (total === 0) return 1;
  for (const [g, v] of a) common += Math.min(v, b.get(g) ?? 0);
  return (2 * common) / total;
}

/** Dashes, curly quotes and odd spaces that models (and word processors) substitute for ASCII. */
function normalisePunctuation(s: string): string {
  return s
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u00A0\u2000-\u200B\u202F\u205F\u3000]/g, ' ');
}

function splitLines(text: string): { text: string; start: number; end: number }[] {
  const out: { text: string; start: number; end: number }[] = [];
  let start = 0;
  for (const line of text.split('\n')) {
    out.push({ text: line, start, end: start + line.length });
    start += line.length + 1;
  }
  if (text.endsWith('\n')) out.pop();
  return out;
}

function trimBlankEnds(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a]!.trim() === '') a++;
  while (b > a && lines[b - 1]!.trim() === '') b--;
  return lines.slice(a, b);
}

function allIndexes(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) out.push(i);
  return out;
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function firstNonBlank(text: string): string {
  return text.split('\n').find((l) => l.trim() !== '') ?? '';
}

function indentOf(line: string): string {
  return /^\s*/.exec(line)![0];
}
