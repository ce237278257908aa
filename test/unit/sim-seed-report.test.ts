// The editor's "Run Simulated Seeds": reading the request, and the report with each
// failing seed's verdict and reason, on a real bug workspace in simulation.
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import { DEFAULT_SEED_COUNT, describeSeedRun, formatSeedRequest, MAX_SEED_COUNT, parseSeedRequest, runSeedReport } from '../../src/core/sim/seed-report';
import { simulateWorkspace } from '../../src/core/sim/workspace';
import { tempDir } from '../support/bugset';

describe('simulation: the seed report the editor lists', function () {
  this.timeout(5 * 60_000);

  describe('reading "N [from S]"', () => {
    it('takes a count, and a first seed after "from", "@" or a space', () => {
      assert.deepEqual(parseSeedRequest('200'), { seeds: 200, from: 1 });
      assert.deepEqual(parseSeedRequest(' 200 from 5000 '), { seeds: 200, from: 5000 });
      assert.deepEqual(parseSeedRequest('20 FROM 0'), { seeds: 20, from: 0 });
      assert.deepEqual(parseSeedRequest('20 @ 7'), { seeds: 20, from: 7 });
      assert.deepEqual(parseSeedRequest('20 7'), { seeds: 20, from: 7 });
    });

    it('gives the defaults for nothing, and keeps a default first seed for a bare count', () => {
      assert.deepEqual(parseSeedRequest(''), { seeds: DEFAULT_SEED_COUNT, from: 1 });
      assert.deepEqual(parseSeedRequest('  ', { seeds: 30, from: 9 }), { seeds: 30, from: 9 });
      assert.deepEqual(parseSeedRequest('50', { seeds: 30, from: 9 }), { seeds: 50, from: 9 });
    });

    it('says what is wrong instead of guessing', () => {
      for (const bad of ['abc', '20 from', 'from 5', '-5', '2.5', '20 from -3', '20 seeds']) {
        const r = parseSeedRequest(bad);
        assert.ok('error' in r, `${bad} → ${JSON.stringify(r)}`);
        assert.match(r.error, /number of seeds/);
      }
      assert.deepEqual(parseSeedRequest('0'), { error: 'run at least one seed' });
      const tooMany = parseSeedRequest(String(MAX_SEED_COUNT + 1));
      assert.ok('error' in tooMany && /at most/.test(tooMany.error));
      assert.ok('error' in parseSeedRequest(`10 from ${Number.MAX_SAFE_INTEGER}`));
    });

    it('writes a request back as it would be typed', () => {
      for (const text of ['200', '200 from 5000', '1 from 0']) {
        const r = parseSeedRequest(text);
        assert.ok(!('error' in r));
        assert.equal(formatSeedRequest(r), text);
        assert.deepEqual(parseSeedRequest(formatSeedRequest(r)), r);
      }
    });
  });

  describe('running seeds of a workspace', () => {
    const tmp = tempDir('ddbench-seed-report-');
    let ws: string;

    before(async () => {
      ws = await openWorkspace(await loadCatalog(), 'raftkv-lock-double-grant', path.join(tmp.dir, 'ws'));
    });
    after(() => tmp.dispose());

    it('lists every failing seed with its verdict and reason, the same seeds the search reports', async () => {
      const progress: { done: number; total: number; failed: number }[] = [];
      const r = await runSeedReport(ws, { seeds: 6, from: 3, concurrency: 1, onSeed: (p) => progress.push(p) });
      const search = await simulateWorkspace(ws, { seeds: 6, from: 3, concurrency: 1 });
      assert.equal(r.bugId, 'raftkv-lock-double-grant');
      assert.equal(r.scenario, 'lock-waiter-lease-expiry');
      assert.equal(r.seedsRun, 6);
      assert.equal(r.requested, 6);
      assert.equal(r.cancelled, false);
      assert.deepEqual(r.failures.map((f) => f.seed), search.failedSeeds);
      assert.ok(r.failures.length > 0, 'the buggy code fails seeds');
      for (const f of r.failures) {
        assert.equal(f.verdict, 'fail');
        assert.match(f.reason ?? '', /mutual exclusion/);
        assert.ok(f.virtualMs > 0);
      }
      assert.deepEqual(progress.map((p) => p.done), [1, 2, 3, 4, 5, 6]);
      assert.equal(progress.at(-1)?.failed, r.failures.length);
      assert.ok(progress.every((p) => p.total === 6));
      assert.match(describeSeedRun(r), new RegExp(`^6 seeds \\(3\\.\\.8\\): ${r.failures.length} failed \\(`));
      assert.ok(!Number.isNaN(Date.parse(r.endedAt)));
    });

    it('reports a scenario whose seeds all pass as such', async () => {
      const r = await runSeedReport(ws, { seeds: 2, from: 1, scenario: 'failover', concurrency: 1 });
      assert.deepEqual(r.failures, []);
      assert.equal(r.verdicts.pass, 2);
      assert.equal(describeSeedRun(r), '2 seeds (1..2): every seed passed');
    });

    it('stops when cancelled, and says how far it got', async () => {
      const abort = new AbortController();
      const r = await runSeedReport(ws, {
        seeds: 10,
        from: 1,
        concurrency: 1,
        signal: abort.signal,
        onSeed: (p) => {
          if (p.done === 2) abort.abort();
        },
      });
      assert.equal(r.seedsRun, 2);
      assert.equal(r.cancelled, true);
      assert.match(describeSeedRun(r), /^cancelled after 2 seeds \(1\.\.2\) of 10/);
    });
  });
});
