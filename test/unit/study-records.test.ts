import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadRecords, mergeRecords } from '../../src/core/study/collect';
import { AttemptRecord, SCHEMA_VERSION, StudyLine, type InteractionRecord } from '../../src/core/study/schema';
import { appendRecords, readRecordsFile } from '../../src/core/study/store';
import { parseStudyLine } from '../../src/core/study/versions';
import { agent, human, REF_FIX } from '../support/study-fixtures';

describe('study records: schema, versions, files, merge', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-study-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const v1 = {
    v: 1,
    id: '0b8f7c1e-1111-4c3a-9a55-000000000001',
    bugId: 'raftkv-lock-double-grant',
    actor: { kind: 'agent', model: 'gpt-4o', condition: 'context-augmented' },
    startedAt: '2025-11-01T09:00:00.000Z',
    endedAt: '2025-11-01T09:04:30.000Z',
    verified: true,
    attempts: 2,
    patch: REF_FIX,
    tokens: 4200,
    costUsd: 0.03,
  };

  describe('schema', () => {
    it('round-trips human and agent records through JSON unchanged', () => {
      for (const r of [human('P-7K2M9Q'), agent('gpt-4o', 'symptom-only', { key: 'b|m|symptom-only|0' })]) {
        const back = StudyLine.parse(JSON.parse(JSON.stringify(r)));
        assert.deepEqual(back, r);
        assert.equal(back.v, SCHEMA_VERSION);
      }
    });

    it('refuses a participant code that could be a name, and unknown fields', () => {
      assert.equal(AttemptRecord.safeParse(human('Alice')).success, false, 'no digit: a name, not a code');
      assert.equal(AttemptRecord.safeParse(human('P 07')).success, false, 'no spaces');
      assert.equal(AttemptRecord.safeParse({ ...human('P07'), extra: 1 }).success, false);
    });

    it('upgrades a v1 record to the current version, keeping every fact it had', () => {
      const r = parseStudyLine(v1);
      assert.ok(r.ok);
      assert.equal(r.upgradedFrom, 1);
      const line = r.line;
      assert.equal(line.type, 'attempt');
      if (line.type !== 'attempt') return;
      assert.equal(line.v, SCHEMA_VERSION);
      assert.equal(line.id, v1.id);
      assert.deepEqual(line.bug, { id: v1.bugId });
      assert.deepEqual(line.actor, { kind: 'agent', model: 'gpt-4o', condition: 'context-augmented' });
      assert.equal(line.status, 'verified');
      assert.equal(line.timeToFixMs, 270_000);
      assert.equal(line.attempts, 2);
      assert.equal(line.patch?.diff, REF_FIX);
      assert.deepEqual([line.patch?.added, line.patch?.removed, line.patch?.files], [1, 1, ['src/total.mjs']]);
      assert.equal(line.agent?.tokens, 4200);
      assert.equal(line.agent?.costUsd, 0.03);
      // The upgraded record is a valid current record.
      assert.ok(AttemptRecord.safeParse(line).success);
    });

    it('v1 give-ups and people upgrade too; a bad v1 record is reported', () => {
      const gave = parseStudyLine({ ...v1, actor: { kind: 'human', participant: 'P07' }, verified: false, gaveUp: true, patch: null });
      assert.ok(gave.ok && gave.line.type === 'attempt');
      if (gave.ok && gave.line.type === 'attempt') {
        assert.equal(gave.line.status, 'gave-up');
        assert.equal(gave.line.timeToFixMs, undefined);
        assert.equal(gave.line.patch, null);
      }
      const bad = parseStudyLine({ ...v1, attempts: -1 });
      assert.ok(!bad.ok && bad.kind === 'invalid-record' && /^v1: attempts/.test(bad.message));
    });

    it('reports records of a newer or no version instead of guessing', () => {
      const newer = parseStudyLine({ ...human('P07'), v: SCHEMA_VERSION + 1 });
      assert.ok(!newer.ok && newer.kind === 'newer-version' && /update ddbench/.test(newer.message));
      const none = parseStudyLine({ id: 'x' });
      assert.ok(!none.ok && none.kind === 'unknown-version');
    });
  });

  describe('files', () => {
    it('appends whole lines and reads them back', () => {
      const file = path.join(tmp, 'records', 'a.jsonl');
      const a = human('P01');
      const b = agent('m', 'symptom-only');
      appendRecords(file, [a]);
      appendRecords(file, [b]);
      const text = fs.readFileSync(file, 'utf8');
      assert.equal(text.split('\n').length, 3);
      assert.ok(text.endsWith('\n'));
      const r = readRecordsFile(file);
      assert.deepEqual(r.lines, [a, b]);
      assert.deepEqual(r.problems, []);
    });

    it('never writes a record that breaks the schema', () => {
      const file = path.join(tmp, 'x.jsonl');
      assert.throws(() => appendRecords(file, [{ ...human('P01'), attempts: -3 }]));
      assert.equal(fs.existsSync(file), false);
    });

    it('detects a torn last line, keeps the rest, and the next append starts on a fresh line', () => {
      const file = path.join(tmp, 'torn.jsonl');
      const a = human('P01');
      const b = human('P02');
      appendRecords(file, [a]);
      // A crash mid-write: half of a record, no newline.
      const half = JSON.stringify(b).slice(0, 60);
      fs.appendFileSync(file, half);
      let r = readRecordsFile(file);
      assert.deepEqual(r.lines, [a]);
      assert.equal(r.problems.length, 1);
      assert.deepEqual([r.problems[0]!.line, r.problems[0]!.kind], [2, 'torn']);

      appendRecords(file, [b]);
      r = readRecordsFile(file);
      assert.deepEqual(r.lines, [a, b], 'the record after the torn one is intact');
      assert.equal(r.problems.length, 1);
      assert.deepEqual([r.problems[0]!.line, r.problems[0]!.kind], [2, 'invalid-json']);
      assert.ok(fs.readFileSync(file, 'utf8').includes(half), 'the torn bytes are kept, never truncated away');
    });

    it('reports each corrupt line with its number and reads everything else', () => {
      const file = path.join(tmp, 'bad.jsonl');
      const a = human('P01');
      const c = agent('m', 'context-augmented');
      const lines = [JSON.stringify(a), '{not json', JSON.stringify({ ...human('P02'), status: 'sleeping' }), '', JSON.stringify({ ...human('P03'), v: 99 }), JSON.stringify(c)];
      fs.writeFileSync(file, lines.join('\n') + '\n');
      const r = readRecordsFile(file);
      assert.deepEqual(r.lines, [a, c]);
      assert.deepEqual(
        r.problems.map((p) => [p.line, p.kind]),
        [
          [2, 'invalid-json'],
          [3, 'invalid-record'],
          [5, 'newer-version'],
        ],
      );
      assert.match(r.problems[1]!.message, /status/);
    });

    it('reads v1 and v2 lines side by side', () => {
      const file = path.join(tmp, 'mixed.jsonl');
      fs.writeFileSync(file, `${JSON.stringify(v1)}\n${JSON.stringify(human('P01'))}\n`);
      const r = readRecordsFile(file);
      assert.equal(r.lines.length, 2);
      assert.equal(r.upgraded, 1);
      assert.ok(r.lines.every((l) => l.v === SCHEMA_VERSION));
    });
  });

  describe('merging many machines', () => {
    const interaction = (attemptId: string, seq: number): InteractionRecord => ({
      v: SCHEMA_VERSION,
      type: 'interaction',
      attemptId,
      seq,
      at: '2026-03-02T10:01:00.000Z',
      elapsedMs: 60_000 + seq,
      event: { kind: 'file-open', path: 'src/total.mjs' },
    });

    it('keeps the latest revision of each attempt and each interaction once', () => {
      const start = human('P01', { status: 'in-progress', revision: 0 });
      const end = { ...start, revision: 2, status: 'verified' as const, endedAt: '2026-03-02T10:20:00.000Z', timeToFixMs: 1_200_000 };
      const mid = { ...start, revision: 1 };
      fs.mkdirSync(path.join(tmp, 'm1'));
      fs.mkdirSync(path.join(tmp, 'm2', 'deep'), { recursive: true });
      appendRecords(path.join(tmp, 'm1', 'attempts.jsonl'), [start, interaction(start.id, 0), mid, interaction(start.id, 1), end]);
      // The same file copied to a second machine's folder, and another participant there.
      fs.copyFileSync(path.join(tmp, 'm1', 'attempts.jsonl'), path.join(tmp, 'm2', 'deep', 'copy.jsonl'));
      const other = agent('m', 'symptom-only');
      appendRecords(path.join(tmp, 'm2', 'attempts.jsonl'), [other]);

      const set = loadRecords([path.join(tmp, 'm1'), path.join(tmp, 'm2')]);
      assert.equal(set.files.length, 3);
      assert.deepEqual(set.attempts.map((a) => [a.id, a.revision, a.status]).sort(), [[start.id, 2, 'verified'], [other.id, other.revision, other.status]].sort());
      assert.equal(set.interactions.length, 2);
      assert.deepEqual(set.conflicts, []);
    });

    it('merges into one file idempotently: a second merge of the same sources adds nothing', async () => {
      const a = human('P01');
      const b = human('P02');
      const c = agent('m', 'symptom-only');
      appendRecords(path.join(tmp, 'p1.jsonl'), [a, interaction(a.id, 0)]);
      appendRecords(path.join(tmp, 'p2.jsonl'), [b, c, a]);
      fs.writeFileSync(path.join(tmp, 'v1.jsonl'), JSON.stringify(v1) + '\n{"torn":');
      const target = path.join(tmp, 'out', 'merged.jsonl');

      const first = await mergeRecords(target, [tmp]);
      assert.equal(first.added, 5, 'a, its interaction, b, c and the upgraded v1 record');
      assert.equal(first.duplicates, 1, 'a came twice');
      assert.deepEqual(first.problems.map((p) => p.kind), ['torn']);

      const second = await mergeRecords(target, [tmp]);
      assert.equal(second.added, 0);
      const merged = readRecordsFile(target);
      assert.equal(merged.lines.length, 5);
      assert.ok(merged.lines.every((l) => l.v === SCHEMA_VERSION), 'merged records are written in the current version');
      assert.equal(new Set(merged.lines.map((l) => (l.type === 'attempt' ? l.id : `${l.attemptId}/${l.seq}`))).size, 5);
    });

    it('reports a record whose id and revision clash with different content, keeping the first', () => {
      const a = human('P01');
      appendRecords(path.join(tmp, 'x.jsonl'), [a]);
      appendRecords(path.join(tmp, 'y.jsonl'), [{ ...a, attempts: 7 }]);
      const set = loadRecords([tmp]);
      assert.equal(set.attempts.length, 1);
      assert.equal(set.attempts[0]!.attempts, a.attempts);
      assert.equal(set.conflicts.length, 1);
    });
  });
});
