import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Report } from '../../src/core/study/report';
import { appendRecords, readRecordsFile } from '../../src/core/study/store';
import { agent, human } from '../support/study-fixtures';
import { ddbenchFromSource } from '../support/cli';


describe('ddbench report and records (CLI)', function () {
  this.timeout(120_000);
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-study-cli-'));
    appendRecords(path.join(tmp, 'machine-1', 'attempts.jsonl'), [human('P01', { bug: 'raftkv-lock-double-grant' }), agent('m', 'symptom-only', { bug: 'raftkv-lock-double-grant', status: 'not-verified' })]);
    appendRecords(path.join(tmp, 'machine-2', 'attempts.jsonl'), [human('P02', { bug: 'raftkv-lock-double-grant', status: 'gave-up', patch: null }), agent('m', 'context-augmented', { bug: 'raftkv-lock-double-grant' })]);
    fs.appendFileSync(path.join(tmp, 'machine-2', 'attempts.jsonl'), 'garbage\n');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('report: the table on stdout, bad lines on stderr, HTML and CSV files, JSON on request', () => {
    const html = path.join(tmp, 'out', 'report.html');
    const csv = path.join(tmp, 'out', 'report.csv');
    const r = ddbenchFromSource(['report', '--records', 'machine-1', 'machine-2', '--html', html, '--csv', csv], tmp);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^4 finished attempt\(s\) from 2 file\(s\)/);
    assert.match(r.stdout, /people\s+50% \(1\/2\)/);
    assert.match(r.stdout, /m: \+100\.0 pp/);
    assert.match(r.stderr, /machine-2\/attempts\.jsonl:3: invalid-json/);
    assert.match(fs.readFileSync(html, 'utf8'), /<svg /);
    assert.match(fs.readFileSync(csv, 'utf8'), /^scope,bug,tier,group/);

    const json = ddbenchFromSource(['report', '--records', '.', '--json'], tmp);
    const report = Report.parse(JSON.parse(json.stdout));
    assert.equal(report.counted, 4);
    assert.ok(report.bugs[0]?.title, 'bug titles from the bug set');
  });

  it('report without records says where it looked and how to point it elsewhere (exit 2)', () => {
    const r = ddbenchFromSource(['report'], tmp);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no records here .*\.ddbench\/records.*--records DIR/);
  });

  it('records merge is idempotent and exits 1 when it skipped lines, with their count; records check lists bad lines and exits 1', () => {
    const into = path.join(tmp, 'merged', 'all.jsonl');
    const first = ddbenchFromSource(['records', 'merge', 'machine-1', 'machine-2', '--into', into, '--json'], tmp);
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /1 line\(s\) could not be read and were not merged; fix them \(ddbench records check lists them\)/);
    assert.equal((JSON.parse(first.stdout) as { added: number }).added, 4);
    assert.equal(ddbenchFromSource(['records', 'merge', 'machine-1', '--into', path.join(tmp, 'merged', 'one.jsonl')], tmp).code, 0);
    const again = ddbenchFromSource(['records', 'merge', 'machine-1', 'machine-2', '--into', into], tmp);
    assert.match(again.stdout, /^0 record line\(s\) added .* 4 already there/);
    assert.equal(readRecordsFile(into).lines.length, 4);

    const bad = ddbenchFromSource(['records', 'check', 'machine-2'], tmp);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /attempts\.jsonl:3: invalid-json/);
    assert.equal(ddbenchFromSource(['records', 'check', into], tmp).code, 0);
  });
});
