import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import { openWorkspace, resetWorkspaceSource, resolveWorkspace } from '../../src/core/bugs/workspace';
import { UserError } from '../../src/core/errors';
import { hintLadder, hintStage, revealReferenceFix, takeNextHint } from '../../src/core/study/hints';
import { HumanAttempt } from '../../src/core/study/human';
import { DEFAULT_CONSENT_TEXT, normaliseParticipantCode, participantCodeProblem } from '../../src/core/study/participant';
import { appendPractice, readPractice } from '../../src/core/study/practice';
import { catalogProgress, nextBug, workspaceProgress } from '../../src/core/study/progress';
import { ATTEMPTS_FILE, readRecordsFile, workspaceRecordsDir } from '../../src/core/study/store';
import { workspaceDiff } from '../../src/core/verify/verify';
import { buggySource, correctSource, tempDir, writeFiles, writeToyBugSet } from '../support/bugset';
import { diffTrees } from '../../src/core/patch/unified';

/** Practising outside a study: the hint ladder, the reference fix, workspaces as git repositories. */
describe('practice: hints, the reference fix, git workspaces', () => {
  let t: ReturnType<typeof tempDir>;
  let catalog: Catalog;
  let ws: string;
  beforeEach(async () => {
    t = tempDir('ddbench-practice-');
    writeFiles(path.join(t.dir, 'p'), { 'a/src/node.mjs': correctSource, 'b/src/node.mjs': buggySource });
    writeToyBugSet(path.join(t.dir, 'bugs'), diffTrees(path.join(t.dir, 'p', 'a'), path.join(t.dir, 'p', 'b'), ['src']));
    catalog = await loadCatalog(path.join(t.dir, 'bugs'));
    ws = await openWorkspace(catalog, 'toy-off-by-one', path.join(t.dir, 'ws'));
  });
  afterEach(() => t.dispose());

  const startAttempt = (hintsAllowed: boolean) =>
    HumanAttempt.start({
      recordsDir: workspaceRecordsDir(ws),
      bug: { id: 'toy-off-by-one', system: 'toy', tier: 1 },
      participant: 'P-7K2M9Q',
      consent: { text: DEFAULT_CONSENT_TEXT, interactionLog: true },
      agentAllowed: false,
      hintsAllowed,
      startedFromEdits: false,
      toolVersion: '0.1.0',
    });

  it('names each rung of the ladder: where to look first, the fix idea last, the mechanism before it', () => {
    assert.deepEqual([1, 2, 3].map((l) => hintStage(l, 3)), ['where to look', 'mechanism', 'fix idea']);
    assert.deepEqual([1, 2, 3, 4, 5].map((l) => hintStage(l, 5)), ['where to look', 'evidence', 'evidence', 'mechanism', 'fix idea']);
  });

  it('reveals one hint at a time outside an attempt, records each level (never the text) and stops at the last', async () => {
    assert.deepEqual((await hintLadder(ws, catalog)).shown, []);
    const first = await takeNextHint(ws, catalog);
    assert.equal(first.revealed?.level, 1);
    assert.equal(first.revealed?.text, 'look at inc');
    assert.equal(first.during, 'practice');
    await takeNextHint(ws, catalog);
    const third = await takeNextHint(ws, catalog);
    assert.deepEqual(third.shown.map((h) => h.text), ['look at inc', 'compare the counts', 'inc adds two']);
    const past = await takeNextHint(ws, catalog);
    assert.equal(past.revealed, undefined, 'no fourth hint');
    assert.equal(past.shown.length, 3);
    const log = readPractice(ws);
    assert.deepEqual(log.events.map((e) => (e.kind === 'hint' ? e.level : e.kind)), [1, 2, 3]);
    assert.ok(!fs.readFileSync(path.join(ws, '.ddbench', 'practice.jsonl'), 'utf8').includes('look at inc'), 'the log holds levels, not hint text');
  });

  it('during an attempt, refuses hints unless the study allows them, and logs the refusal', async () => {
    const attempt = startAttempt(false);
    await assert.rejects(takeNextHint(ws, catalog), (err: unknown) => err instanceof UserError && /does not allow hints/.test(err.message));
    const lines = readRecordsFile(path.join(workspaceRecordsDir(ws), ATTEMPTS_FILE)).lines;
    assert.ok(lines.some((l) => l.type === 'interaction' && l.attemptId === attempt.id && l.event.kind === 'refused' && l.event.command === 'hint'));
    assert.equal(readPractice(ws).events.length, 0);
  });

  it('during an attempt that allows hints, records each hint in the attempt with its time', async () => {
    const attempt = startAttempt(true);
    const ladder = await takeNextHint(ws, catalog);
    assert.equal(ladder.during, 'attempt');
    assert.equal(ladder.revealed?.level, 1);
    const resumed = HumanAttempt.resume(workspaceRecordsDir(ws));
    assert.equal(resumed?.id, attempt.id);
    assert.deepEqual(resumed?.record.hints.map((h) => h.level), [1]);
    const lines = readRecordsFile(path.join(workspaceRecordsDir(ws), ATTEMPTS_FILE)).lines;
    assert.ok(lines.some((l) => l.type === 'interaction' && l.event.kind === 'hint' && l.event.level === 1));
  });

  it('reveals the reference fix outside attempts only, and logs the reveal', async () => {
    const diff = await revealReferenceFix(ws, catalog);
    assert.match(diff, /^-.*x \+ 2/m);
    assert.match(diff, /^\+.*x \+ 1/m);
    assert.deepEqual(readPractice(ws).events.map((e) => e.kind), ['reference']);
    startAttempt(true);
    await assert.rejects(revealReferenceFix(ws, catalog), /not shown during a study attempt/);
  });

  it("makes the workspace a git repository with one commit of the bug's code, .ddbench ignored", function () {
    if (spawnSync('git', ['--version']).status !== 0) this.skip();
    const log = spawnSync('git', ['log', '--format=%s'], { cwd: ws, encoding: 'utf8' });
    assert.equal(log.stdout.trim(), "toy-off-by-one: the bug's code as opened");
    assert.equal(spawnSync('git', ['status', '--porcelain'], { cwd: ws, encoding: 'utf8' }).stdout, '', 'a clean tree: .ddbench/ is ignored');
    const shown = spawnSync('git', ['show', 'HEAD:src/node.mjs'], { cwd: ws, encoding: 'utf8' }).stdout;
    assert.equal(shown, buggySource, "the commit holds the bug's code, never the fix");
  });

  it("puts the bug's code back after saving the changes as a patch (nothing lost)", async () => {
    fs.writeFileSync(path.join(ws, 'src', 'node.mjs'), correctSource);
    const changes = await workspaceDiff(ws, catalog);
    const saved = resetWorkspaceSource(await resolveWorkspace(ws, catalog), changes);
    assert.ok(saved && fs.readFileSync(saved, 'utf8') === changes);
    assert.equal(fs.readFileSync(path.join(ws, 'src', 'node.mjs'), 'utf8'), buggySource);
    assert.equal(await workspaceDiff(ws, catalog), '');
    assert.equal(resetWorkspaceSource(await resolveWorkspace(ws, catalog), ''), undefined, 'nothing to save, nothing done');
  });

  it('tells not tried, attempted and solved (with the best time) from the workspace, and suggests the next bug', async () => {
    assert.deepEqual(await workspaceProgress(path.join(t.dir, 'nowhere')), { state: 'not-tried', hints: 0 });
    assert.equal((await workspaceProgress(ws)).state, 'not-tried', 'opened, nothing done');
    await takeNextHint(ws, catalog);
    assert.deepEqual(await workspaceProgress(ws), { state: 'attempted', hints: 1 });
    const created = Date.parse(JSON.parse(fs.readFileSync(path.join(ws, '.ddbench', 'workspace.json'), 'utf8')).createdAt);
    appendPractice(ws, { v: 1, at: new Date(created + 90_000).toISOString(), kind: 'verify', verified: false, failing: ['off by one'] });
    assert.equal((await workspaceProgress(ws)).state, 'attempted');
    appendPractice(ws, { v: 1, at: new Date(created + 600_000).toISOString(), kind: 'verify', verified: true, failing: [] });
    assert.deepEqual(await workspaceProgress(ws), { state: 'solved', bestTimeMs: 600_000, hints: 1 });
    // The default workspaces folder has none of this bug; the open workspace elsewhere counts.
    const progress = await catalogProgress(catalog, path.join(t.dir, 'elsewhere'), [ws]);
    assert.equal(progress.get('toy-off-by-one')?.state, 'solved');
    assert.equal(nextBug(catalog, progress), undefined, 'every bug of the toy set is solved');
    assert.equal(nextBug(catalog, new Map())?.id, 'toy-off-by-one');
  });

  it('upper-cases participant codes and explains a bad one in a sentence', () => {
    assert.equal(normaliseParticipantCode(' p-7k2m9q '), 'P-7K2M9Q');
    assert.equal(participantCodeProblem(normaliseParticipantCode('p-7k2m9q')), undefined);
    const problem = participantCodeProblem('PARTICIPANT-7');
    assert.ok(problem && !problem.includes('^') && /looks like P07/.test(problem), problem);
    assert.match(participantCodeProblem('S-9', '^S-[0-9]{3}$') ?? '', /code the researcher gave you/);
  });
});
