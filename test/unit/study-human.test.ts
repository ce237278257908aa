import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadRecords } from '../../src/core/study/collect';
import { HumanAttempt, type HumanAttemptStart } from '../../src/core/study/human';
import { consentHash, DEFAULT_CONSENT_TEXT, DEFAULT_PARTICIPANT_PATTERN, generateParticipantCode, participantCodeProblem } from '../../src/core/study/participant';
import type { Verification } from '../../src/core/study/schema';
import { ATTEMPTS_FILE, readRecordsFile } from '../../src/core/study/store';
import { parseStudySettings, STUDY_SETTINGS } from '../../src/extension/studySettings';
import { REF_FIX } from '../support/study-fixtures';

describe("study: a person's attempt (core of the editor flow)", () => {
  let tmp: string;
  let clock: number;
  const now = () => new Date(clock);
  const start = (o: Partial<HumanAttemptStart> = {}) =>
    HumanAttempt.start({
      recordsDir: tmp,
      bug: { id: 'counter-double-add', system: 'counter', tier: 1 },
      participant: 'P-7K2M9Q',
      consent: { text: DEFAULT_CONSENT_TEXT, interactionLog: true },
      agentAllowed: false,
      hintsAllowed: false,
      startedFromEdits: false,
      toolVersion: '0.1.0',
      now,
      ...o,
    });
  const verification = (verified: boolean, elapsedMs: number): Verification => ({
    at: new Date(Date.parse('2026-03-02T10:00:00Z') + elapsedMs).toISOString(),
    elapsedMs,
    verified,
    patch: { files: ['src/total.mjs'], added: 1, removed: 1 },
    reproducer: { scenario: 'add-twice', passed: verified ? 1 : 0, total: 1, trials: [{ seed: 1, verdict: verified ? 'pass' : 'fail' }] },
    regression: [],
  });

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-human-'));
    clock = Date.parse('2026-03-02T10:00:00Z');
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('records start, interactions, a failed and a verified submission, each as it happens', () => {
    const a = start();
    assert.equal(a.record.status, 'in-progress');
    assert.equal(a.record.actor.kind === 'human' && a.record.actor.consent?.textSha256, consentHash(DEFAULT_CONSENT_TEXT));
    clock += 60_000;
    a.note({ kind: 'file-open', path: 'src/total.mjs' });
    a.note({ kind: 'edit', path: 'src/total.mjs', inserted: 12, deleted: 15, changes: 3 });
    clock += 60_000;
    a.submitted(verification(false, 120_000), REF_FIX);
    assert.equal(a.active, true, 'a failed submission does not end the attempt');
    clock += 180_000;
    const done = a.submitted(verification(true, 300_000), REF_FIX);
    assert.deepEqual([done.status, done.attempts, done.timeToFixMs, done.revision], ['verified', 2, 300_000, 2]);
    assert.equal(done.patch?.diff, REF_FIX);
    a.note({ kind: 'file-open', path: 'x' });

    const set = loadRecords([tmp]);
    assert.equal(set.attempts.length, 1);
    assert.deepEqual(set.attempts[0], done);
    assert.deepEqual(
      set.interactions.map((i) => [i.seq, i.event.kind, i.elapsedMs]),
      [
        [0, 'file-open', 60_000],
        [1, 'edit', 60_000],
        [2, 'submit', 120_000],
        [3, 'submit', 300_000],
      ],
      'nothing is logged after the end',
    );
    assert.ok(!fs.readFileSync(path.join(tmp, ATTEMPTS_FILE), 'utf8').includes('return total'.repeat(2)), 'edit content is never logged');
  });

  it('logs no interactions without consent to the log, but records the attempt', () => {
    const a = start({ consent: { text: 'short', interactionLog: false } });
    a.note({ kind: 'file-open', path: 'src/total.mjs' });
    assert.equal(loadRecords([tmp]).interactions.length, 0);
    assert.equal(loadRecords([tmp]).attempts.length, 1);
  });

  it('survives a crash: a new window resumes the attempt, its clock and its log numbering', () => {
    const a = start({ timeLimitMs: 30 * 60_000 });
    a.note({ kind: 'file-open', path: 'src/total.mjs' });
    // The editor dies mid-write of the next line.
    fs.appendFileSync(path.join(tmp, ATTEMPTS_FILE), '{"v":2,"type":"interac');
    clock += 10 * 60_000;
    const b = HumanAttempt.resume(tmp, now);
    assert.ok(b);
    assert.equal(b.id, a.id);
    assert.equal(b.remainingMs(), 20 * 60_000);
    b.note({ kind: 'command', command: 'runReproducer' });
    const ended = b.end('gave-up', '');
    assert.deepEqual([ended.status, ended.patch], ['gave-up', null]);
    const r = readRecordsFile(path.join(tmp, ATTEMPTS_FILE));
    assert.deepEqual(r.problems.map((p) => p.kind), ['invalid-json'], 'the torn line is reported, the rest read');
    assert.deepEqual(loadRecords([tmp]).interactions.map((i) => i.seq), [0, 1]);
    assert.equal(HumanAttempt.resume(tmp, now), undefined, 'nothing in progress any more');
  });

  it('times out, and a late verification stays out of an ended attempt', () => {
    const a = start({ timeLimitMs: 60_000 });
    clock += 61_000;
    assert.equal(a.remainingMs(), 0);
    const ended = a.end('timed-out', REF_FIX);
    assert.deepEqual([ended.status, ended.patch?.added], ['timed-out', 1]);
    const after = a.submitted(verification(true, 70_000), REF_FIX);
    assert.deepEqual([after.status, after.attempts], ['timed-out', 0]);
  });

  it('participant codes: generated ones are valid; names and bad patterns are refused', () => {
    for (let i = 0; i < 50; i++) assert.equal(participantCodeProblem(generateParticipantCode()), undefined);
    assert.equal(participantCodeProblem('P07'), undefined);
    assert.match(participantCodeProblem('Alice') ?? '', /digit/);
    assert.match(participantCodeProblem('Jane Doe 2') ?? '', /letters, digits/);
    assert.match(participantCodeProblem('p07') ?? '', /looks like P07/, 'a sentence, not the regular expression');
    assert.match(participantCodeProblem('P07', '([') ?? '', /not a valid regular expression/);
  });

  it("study settings: package.json's defaults are the code's, and bad values are refused", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, { default?: unknown }> } } };
    const props = pkg.contributes.configuration.properties;
    const defaults = parseStudySettings(() => undefined);
    assert.equal(props[STUDY_SETTINGS.consentText]?.default, DEFAULT_CONSENT_TEXT);
    assert.equal(props[STUDY_SETTINGS.participantCodePattern]?.default, DEFAULT_PARTICIPANT_PATTERN);
    for (const [name, key] of Object.entries(STUDY_SETTINGS)) assert.deepEqual(props[key]?.default, defaults[name as keyof typeof defaults], key);
    assert.equal(parseStudySettings((k) => (k === STUDY_SETTINGS.consentText ? '   ' : undefined)).consentText, DEFAULT_CONSENT_TEXT, 'cleared consent text falls back');
    assert.throws(() => parseStudySettings((k) => (k === STUDY_SETTINGS.timeLimitMinutes ? 0 : undefined)), /ddbench\.study\.timeLimitMinutes/);
  });
});
