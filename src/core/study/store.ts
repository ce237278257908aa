import * as fs from 'node:fs';
import * as path from 'node:path';
import { DDBENCH_DIR } from '../paths';
import { UserError } from '../errors';
import { redact } from '../secrets';
import { StudyLine } from './schema';
import { parseStudyLine, type LineProblemKind } from './versions';

/**
 * Records files: append-only JSONL. Appends are one write(2) of whole lines on an
 * O_APPEND descriptor, then fsync — the kernel serialises appends to a local file, so
 * concurrent writers never interleave within a line, and a record is on disk before
 * the call returns. A crash mid-write can still leave a torn last line: readers report
 * it and keep every other line, and the next append starts on a fresh line so the torn
 * bytes never swallow a good record. Nothing is ever rewritten or truncated.
 */

/** Where a workspace keeps its records: one file for every attempt made in it. */
export function workspaceRecordsDir(workspaceDir: string): string {
  return path.join(workspaceDir, DDBENCH_DIR, 'records');
}
export const ATTEMPTS_FILE = 'attempts.jsonl';

export interface RecordProblem {
  file: string;
  /** 1-based. */
  line: number;
  kind: LineProblemKind | 'torn' | 'invalid-utf8' | 'utf16';
  message: string;
}

export interface FileRead {
  lines: StudyLine[];
  problems: RecordProblem[];
  /** Lines read from an older schema version and upgraded. */
  upgraded: number;
}

/** Appends records, each checked against the schema first: a bad record is a bug in the writer, never written. */
export function appendRecords(file: string, records: readonly StudyLine[]): void {
  if (records.length === 0) return;
  const text = records.map((r) => redact(JSON.stringify(StudyLine.parse(r)))).join('\n') + '\n';
  const created = !fs.existsSync(file);
  if (created) fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'a+');
  try {
    const buf = Buffer.from(endsMidLine(fd) ? '\n' + text : text, 'utf8');
    for (let off = 0; off < buf.length; ) off += fs.writeSync(fd, buf, off, buf.length - off);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (created) fsyncDir(path.dirname(file));
}

/** Reads a records file line by line; a bad line is reported with its number and skipped, never fatal. */
export function readRecordsFile(file: string): FileRead {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    throw new UserError(`${file}: cannot read records (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const out: FileRead = { lines: [], problems: [], upgraded: 0 };
  if (isUtf16(bytes)) {
    out.problems.push({ file, line: 1, kind: 'utf16', message: 'a UTF-16 file, not UTF-8 JSON lines: convert it (iconv -f UTF-16 -t UTF-8) and read the copy; nothing was read from it' });
    return out;
  }
  const parts = splitLines(bytes);
  const unterminated = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a;
  parts.forEach((rawBytes, i) => {
    let raw: string;
    try {
      raw = STRICT_UTF8.decode(rawBytes);
    } catch {
      out.problems.push({ file, line: i + 1, kind: 'invalid-utf8', message: `invalid UTF-8 at line ${i + 1}: the line is skipped, not repaired; fix or remove its bytes` });
      return;
    }
    const line = raw.replace(/\r$/, '').replace(/^\uFEFF/, '');
    if (!line.trim()) return;
    const isLast = i === parts.length - 1;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      const cutOff = isLast && unterminated;
      out.problems.push({
        file,
        line: i + 1,
        kind: cutOff ? 'torn' : 'invalid-json',
        message: cutOff ? 'incomplete last line: a write was cut off (the process or machine stopped mid-write); every other line is kept' : `not JSON (${(err as Error).message})`,
      });
      return;
    }
    const parsed = parseStudyLine(json);
    if (!parsed.ok) {
      out.problems.push({ file, line: i + 1, kind: parsed.kind, message: parsed.message });
      return;
    }
    out.lines.push(parsed.line);
    if (parsed.upgradedFrom !== undefined) out.upgraded++;
  });
  return out;
}

/** The records files under the given files and folders (folders searched recursively for *.jsonl). */
export function recordFiles(paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const abs = path.resolve(p);
    if (!fs.existsSync(abs)) throw new UserError(`${abs}: no such records file or folder`);
    if (fs.statSync(abs).isFile()) out.add(abs);
    else for (const f of walk(abs)) out.add(f);
  }
  return [...out].sort();
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...walk(p));
    else if (d.isFile() && d.name.endsWith('.jsonl')) out.push(p);
  }
  return out;
}

function endsMidLine(fd: number): boolean {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  fs.readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** Makes a new file's directory entry durable too (not possible on every platform; best effort there). */
function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Windows cannot open a directory for fsync; the file's own fsync is what matters most.
  }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A byte-order mark of UTF-16, or the NUL bytes every other byte that ASCII text in UTF-16 has. */
function isUtf16(bytes: Buffer): boolean {
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) return true;
  const head = bytes.subarray(0, 64);
  return head.length >= 4 && head.filter((b) => b === 0).length >= head.length / 3;
}

function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
    out.push(bytes.subarray(start, nl));
    start = nl + 1;
  }
  out.push(bytes.subarray(start));
  return out;
}
