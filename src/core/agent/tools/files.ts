import { z } from 'zod';
import { compilePattern, type Pattern } from '../../events/pattern';
import { truncateMiddle } from '../budget';
import { ToolError } from '../scratch';
import { defineTool, MAX_OUTPUT_CHARS } from './types';
import { echo } from '../../echo';

const MAX_READ_LINES = 400;
const MAX_LINE_CHARS = 400;

export const listFiles = defineTool({
  name: 'list_files',
  description: 'List the files of the repository (or of one folder of it), with their line counts.',
  args: z.strictObject({ path: z.string().default('').describe('folder relative to the repository root; empty for all') }),
  async run({ path }, { scratch }) {
    const files = scratch.files(path);
    const rows = files.map((f) => `${f}  (${lineCount(scratch.read(f))} lines)`);
    return { output: truncateMiddle(rows.join('\n') || '(no files)', MAX_OUTPUT_CHARS, 'list a sub-folder') };
  },
});

export const readFile = defineTool({
  name: 'read_file',
  description: `Read a file with line numbers, at most ${MAX_READ_LINES} lines at a time; give start_line/end_line for a range.`,
  args: z.strictObject({
    path: z.string().min(1),
    start_line: z.number().int().min(1).default(1),
    end_line: z.number().int().min(1).optional(),
  }),
  async run({ path, start_line, end_line }, { scratch }) {
    const lines = splitLines(scratch.read(path));
    if (lines.length === 0) return { output: `${path} is empty` };
    if (start_line > lines.length) throw new ToolError(`${path} has ${lines.length} lines; start_line ${start_line} is past the end`);
    const last = Math.min(lines.length, end_line ?? lines.length, start_line + MAX_READ_LINES - 1);
    if (last < start_line) throw new ToolError(`end_line ${end_line} is before start_line ${start_line}`);
    const body = lines.slice(start_line - 1, last).map((l, k) => `${String(start_line + k).padStart(5)}| ${clip(l)}`);
    const more = last < lines.length ? `\n[lines ${start_line}-${last} of ${lines.length}; read from start_line ${last + 1} for more]` : '';
    return { output: truncateMiddle(`${path} (lines ${start_line}-${last} of ${lines.length})\n${body.join('\n')}${more}`, MAX_OUTPUT_CHARS, 'read a narrower range') };
  },
});

export const search = defineTool({
  name: 'search',
  description: 'Search the repository for a regular expression (RE2 syntax: no lookaround or backreferences); prints file:line: text for each matching line.',
  args: z.strictObject({
    pattern: z.string().min(1).max(500),
    path: z.string().default('').describe('file or folder to search; empty for all'),
    case_sensitive: z.boolean().default(false),
    max_results: z.number().int().min(1).max(200).default(50),
  }),
  async run({ pattern, path, case_sensitive, max_results }, { scratch }) {
    let re: Pattern;
    try {
      re = compilePattern(pattern, case_sensitive ? '' : 'i');
    } catch (err) {
      throw new ToolError(`pattern: ${echo((err as Error).message, 300)}`);
    }
    const files = scratch.files(path).map((f) => ({ file: f, lines: splitLines(scratch.read(f)).map(clip) }));
    const hits = matchLines(files, re, max_results + 1);
    if (hits.length === 0) return { output: `no line matches /${pattern}/ in ${path || 'the repository'}` };
    const shown = hits.slice(0, max_results).map((h) => `${h.file}:${h.line}: ${h.text.trim()}`);
    const more = hits.length > max_results ? `\n[more than ${max_results} matches; narrow the pattern or the path]` : '';
    return { output: truncateMiddle(shown.join('\n') + more, MAX_OUTPUT_CHARS, 'narrow the pattern') };
  },
});

function matchLines(files: { file: string; lines: string[] }[], re: Pattern, limit: number): { file: string; line: number; text: string }[] {
  const out: { file: string; line: number; text: string }[] = [];
  for (const f of files) {
    for (const [i, text] of f.lines.entries()) {
      if (!re.test(text)) continue;
      out.push({ file: f.file, line: i + 1, text });
      if (out.length >= limit) return out;
    }
  }
  return out;
}

function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function lineCount(text: string): number {
  return splitLines(text).length;
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} [... ${line.length - MAX_LINE_CHARS} more characters]` : line;
}
