import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { AttemptRecord, InteractionRecord, StudyLine } from './schema';
import { appendRecords, readRecordsFile, recordFiles, type RecordProblem } from './store';
import { acquireLockWaiting } from '../lock-file';

/**
 * Records from many files (one per participant, machine or shard) as one set. An
 * attempt's identity is its id, and its state its highest revision; an interaction's
 * identity is (attemptId, seq). So the same file read twice, or copied between
 * machines and merged again, adds nothing.
 */
export interface RecordSet {
  /** The latest revision of each attempt, oldest start first. */
  attempts: AttemptRecord[];
  interactions: InteractionRecord[];
  problems: RecordProblem[];
  files: string[];
  upgraded: number;
  /** Lines with the same identity as another but different content; the first one read is kept. */
  conflicts: { id: string; revision: number; files: string[] }[];
}

class Collector {
  private readonly attempts = new Map<string, Map<number, { record: AttemptRecord; file: string }>>();
  private readonly interactions = new Map<string, InteractionRecord>();
  readonly conflicts: RecordSet['conflicts'] = [];

  /** Adds a line; false when its identity was already there (a duplicate, or a conflict). */
  add(line: StudyLine, file: string): boolean {
    if (line.type === 'interaction') {
      const key = `${line.attemptId}\u0000${line.seq}`;
      if (this.interactions.has(key)) return false;
      this.interactions.set(key, line);
      return true;
    }
    let revisions = this.attempts.get(line.id);
    if (!revisions) this.attempts.set(line.id, (revisions = new Map()));
    const seen = revisions.get(line.revision);
    if (seen) {
      if (!isDeepStrictEqual(seen.record, line)) this.conflicts.push({ id: line.id, revision: line.revision, files: [seen.file, file] });
      return false;
    }
    revisions.set(line.revision, { record: line, file });
    return true;
  }

  latest(): AttemptRecord[] {
    const out: AttemptRecord[] = [];
    for (const revisions of this.attempts.values()) {
      const top = Math.max(...revisions.keys());
      out.push(revisions.get(top)!.record);
    }
    return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id.localeCompare(b.id));
  }

  interactionList(): InteractionRecord[] {
    return [...this.interactions.values()].sort((a, b) => a.attemptId.localeCompare(b.attemptId) || a.seq - b.seq);
  }
}

/** Reads every records file under `paths` (files, or folders searched for *.jsonl). */
export function loadRecords(paths: readonly string[]): RecordSet {
  const files = recordFiles(paths);
  const c = new Collector();
  const problems: RecordProblem[] = [];
  let upgraded = 0;
  for (const file of files) {
    const r = readRecordsFile(file);
    problems.push(...r.problems);
    upgraded += r.upgraded;
    for (const line of r.lines) c.add(line, file);
  }
  return { attempts: c.latest(), interactions: c.interactionList(), problems, files, upgraded, conflicts: c.conflicts };
}

export interface MergeResult {
  /** Lines appended to the target. */
  added: number;
  /** Lines the target already had (or that came twice from the sources). */
  duplicates: number;
  problems: RecordProblem[];
  conflicts: RecordSet['conflicts'];
  sources: string[];
}

/**
 * Imports records into one file: everything in `sources` the target lacks is appended
 * (upgraded to the current schema), every revision and interaction kept. Running it
 * again with the same sources adds nothing.
 */
export async function mergeRecords(target: string, sources: readonly string[]): Promise<MergeResult> {
  // One merge into a file at a time: two at once would both append every line the file lacks.
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const release = await acquireLockWaiting(`${target}.lock`, (pid) => `another merge into ${target} is running (pid ${pid})`);
  try {
    return mergeLocked(target, sources);
  } finally {
    release();
  }
}

function mergeLocked(target: string, sources: readonly string[]): MergeResult {
  const c = new Collector();
  const targetProblems = fs.existsSync(target) ? readInto(c, target) : [];
  const files = recordFiles(sources).filter((f) => f !== target);
  const fresh: StudyLine[] = [];
  const problems = [...targetProblems];
  let duplicates = 0;
  for (const file of files) {
    const r = readRecordsFile(file);
    problems.push(...r.problems);
    for (const line of r.lines) {
      if (c.add(line, file)) fresh.push(line);
      else duplicates++;
    }
  }
  appendRecords(target, fresh);
  return { added: fresh.length, duplicates, problems, conflicts: c.conflicts, sources: files };
}

function readInto(c: Collector, file: string): RecordProblem[] {
  const r = readRecordsFile(file);
  for (const line of r.lines) c.add(line, file);
  return r.problems;
}
