import { strict as assert } from 'node:assert';
import { applyEditBlocks, EditBlockError } from '../../src/core/patch/search-replace';

const file = [
  'export class Lock {',
  '  grant(w) {',
  '    if (ahead.length > 0) continue;',
  "    this.rt.log.info('lock acquired', { key: w.key });",
  '    w.done({ ok: true });',
  '  }',
  '}',
  '',
].join('\n');

function failure(fn: () => unknown): EditBlockError {
  try {
    fn();
  } catch (err) {
    if (err instanceof EditBlockError) return err;
    throw err;
  }
  return assert.fail('expected an EditBlockError');
}

describe('agent: search/replace edit blocks', () => {
  it('applies an exact block', () => {
    const r = applyEditBlocks(file, [{ search: '    w.done({ ok: true });\n', replace: '    w.done({ ok: true, key: w.key });\n' }], 'lock.js');
    assert.match(r.content, /w\.done\(\{ ok: true, key: w\.key \}\);\n {2}\}/);
    assert.deepEqual(r.applied, [{ block: 1, strategy: 'exact', line: 5 }]);
  });

  it('tolerates trailing whitespace and CRLF, and keeps the file\'s line endings', () => {
    const crlf = file.replace(/\n/g, '\r\n');
    const r = applyEditBlocks(crlf, [{ search: '    w.done({ ok: true });   ', replace: '    w.done({ ok: false });' }], 'lock.js');
    assert.equal(r.applied[0]?.strategy, 'trailing-whitespace');
    assert.ok(r.content.includes('    w.done({ ok: false });\r\n  }\r\n'));
  });

  it('matches a block written at another indentation and re-indents the replacement', () => {
    const search = "if (ahead.length > 0) continue;\nthis.rt.log.info('lock acquired', { key: w.key });";
    const replace = "if (ahead.length > 0) continue;\nif (!this.kv.get(w.key)) {\n  w.done({ ok: false });\n  continue;\n}\nthis.rt.log.info('lock acquired', { key: w.key });";
    const r = applyEditBlocks(file, [{ search, replace }], 'lock.js');
    assert.equal(r.applied[0]?.strategy, 'indentation');
    assert.ok(r.content.includes("    if (!this.kv.get(w.key)) {\n      w.done({ ok: false });\n      continue;\n    }\n    this.rt.log.info("));
  });

  it('matches across collapsed whitespace and typographic quotes', () => {
    const r = applyEditBlocks(file, [{ search: "this.rt.log.info(\u2018lock acquired\u2019,  { key: w.key });", replace: "this.rt.log.info('lock granted', { key: w.key });" }], 'lock.js');
    assert.equal(r.applied[0]?.strategy, 'whitespace');
    assert.ok(r.content.includes("    this.rt.log.info('lock granted'"));
  });

  it('refuses an ambiguous block, naming the lines', () => {
    const twice = `${file}${file}`;
    const e = failure(() => applyEditBlocks(twice, [{ search: '    w.done({ ok: true });', replace: 'x' }], 'lock.js'));
    assert.equal(e.problem, 'ambiguous');
    assert.match(e.message, /matches lock\.js in 2 places \(lines 5, 12\)/);
  });

  it('reports a block that matches nothing with the closest region and the first differing line', () => {
    const e = failure(() =>
      applyEditBlocks(file, [{ search: '    w.done({ ok: true });', replace: '    w.done({ ok: 1 });' }, { search: "    this.rt.log.info('lock aquired', { key: w.key });\n    w.done({ ok: true });", replace: '' }], 'lock.js'),
    );
    assert.equal(e.block, 2);
    assert.equal(e.problem, 'no-match');
    assert.match(e.message, /^block 2: SEARCH does not match lock\.js .*closest region is lines 4-5 \(\d+% similar\):\n {4}4\| {5}this\.rt\.log\.info\('lock acquired'/s);
    assert.match(e.message, /SEARCH line 1:\n {2}SEARCH: {5}this\.rt\.log\.info\('lock aquired'/);
  });

  it('says when the replacement is already there', () => {
    const e = failure(() => applyEditBlocks(file, [{ search: '    w.done({ ok: maybe });', replace: '    w.done({ ok: true });' }], 'lock.js'));
    assert.match(e.message, /REPLACE is already there \(line 5\): was this block applied already\?/);
  });

  it('rejects a no-op block and an empty search in a non-empty file, and creates a file from an empty one', () => {
    assert.equal(failure(() => applyEditBlocks(file, [{ search: 'x', replace: 'x' }], 'lock.js')).problem, 'noop');
    assert.equal(failure(() => applyEditBlocks(file, [{ search: '', replace: 'x' }], 'lock.js')).problem, 'empty-search');
    assert.equal(applyEditBlocks('', [{ search: '', replace: 'new file\n' }], 'new.js').content, 'new file\n');
  });
});
