// Study files: a plan written down once. Defaults fill in, the hash is the same however
// the file is laid out, bad files name their fields, keys cannot be written in, and a
// selection picks the bugs the set has.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { UserError } from '../../src/core/errors';
import { DEFAULT_REPORT_SEED } from '../../src/core/study/report';
import { bugSetHash, readStudyFile, studyBugs, studyHash, StudyFile } from '../../src/core/study/study-file';
import { tempDir } from '../support/bugset';

describe('study: study files', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir('ddbench-study-file-')));
  afterEach(() => t.dispose());
  const write = (name: string, value: unknown) => {
    const file = path.join(t.dir, name);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
    return file;
  };

  it('fills in defaults, round-trips, and hashes alike whatever the key order or layout', () => {
    const a = readStudyFile(write('a.json', { v: 1, name: 'pilot', bugs: ['b1'], models: [{ name: 'm', apiKeyEnv: 'KEY_A' }] }));
    assert.deepEqual(a.conditions, ['symptom-only', 'context-augmented']);
    assert.equal(a.repeats, 1);
    assert.deepEqual(a.seeds, { report: DEFAULT_REPORT_SEED });
    const b = readStudyFile(write('b.json', JSON.stringify({ models: [{ apiKeyEnv: 'KEY_A', name: 'm' }], bugs: ['b1'], name: 'pilot', v: 1, repeats: 1 })));
    assert.equal(studyHash(a), studyHash(b));
    assert.match(studyHash(a), /^[0-9a-f]{16}$/);
    const back = readStudyFile(write('c.json', StudyFile.parse(a)));
    assert.equal(studyHash(back), studyHash(a), 'written back and read again: the same study');
    assert.notEqual(studyHash({ ...a, repeats: 2 }), studyHash(a));
  });

  it('refuses a bad file naming its fields, another version, and a key written into it', () => {
    const reject = (value: unknown, pattern: RegExp) => assert.throws(() => readStudyFile(write('x.json', value)), (err: Error) => err instanceof UserError && pattern.test(err.message));
    reject('{not json', /not a study file/);
    reject({ v: 2, name: 'x', bugs: 'all', models: [{ name: 'm' }] }, /only study files of version 1/);
    reject({ v: 1, name: 'x', bugs: 'all', models: [] }, /models:/);
    reject({ v: 1, name: 'x', bugs: 'all', models: [{ name: 'm', apiKey: 'sk-secret' }] }, /models\.0: .*apiKey/);
    reject({ v: 1, name: 'x', bugs: 'all', models: [{ name: 'm', apiKeyEnv: 'sk-live key' }] }, /an environment variable name/);
    reject({ v: 1, name: 'x', bugs: 'all', models: [{ name: 'm' }], conditions: ['with-hints'] }, /conditions\.0/);
  });

  it('selects the bugs of the set by id, kind, tier, category or system, and says when none or an unknown one is named', async () => {
    const catalog = await loadCatalog();
    const base = { v: 1 as const, name: 's', models: [{ name: 'm' }], conditions: ['symptom-only' as const], repeats: 1, limits: {}, seeds: { report: 1 } };
    assert.equal(studyBugs({ ...base, bugs: 'all' }, catalog).length, catalog.bugs.length);
    const tier3 = studyBugs({ ...base, bugs: { tiers: [3] } }, catalog);
    assert.ok(tier3.length > 0 && tier3.every((id) => catalog.bugs.find((b) => b.id === id)?.tier === 3));
    const pilot = studyBugs({ ...base, bugs: { kinds: ['upstream'] } }, catalog);
    assert.ok(pilot.includes('etcd-revision-behind-compaction') && pilot.every((id) => catalog.bugs.find((b) => b.id === id)?.kind === 'upstream'));
    const minTier2 = studyBugs({ ...base, bugs: { kinds: ['miniature'], tiers: [2] } }, catalog);
    assert.ok(minTier2.length > 0 && !minTier2.includes('etcd-revision-behind-compaction'));
    const raft = studyBugs({ ...base, bugs: { systems: ['raftkv'], categories: ['lease'] } }, catalog);
    assert.ok(raft.length > 0 && raft.every((id) => id.startsWith('raftkv-')));
    assert.throws(() => studyBugs({ ...base, bugs: ['no-such-bug'] }, catalog), /the set does not have: no-such-bug/);
    assert.throws(() => studyBugs({ ...base, bugs: { systems: ['nothing'] } }, catalog), /matches no bug/);
    assert.match(bugSetHash(catalog), /^[0-9a-f]{16}$/);
    assert.equal(bugSetHash(catalog), bugSetHash(catalog));
  });
});
