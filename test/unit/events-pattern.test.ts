import { strict as assert } from 'node:assert';
import { compilePattern, PatternError, substringPattern } from '../../src/core/events/pattern';

describe('events: user patterns (linear-time regex)', () => {
  it('returns for a catastrophic pattern against a long near-match instead of backtracking', () => {
    const text = `${'a'.repeat(200_000)}b`;
    assert.equal(compilePattern('(a+)+$').test(text), false);
    assert.equal(compilePattern('(a+)+b$').test(text), true);
    assert.equal(compilePattern('^(a|aa)*$').test(text), false);
  });

  it('honours the i, m and s flags and ignores g and y', () => {
    assert.ok(compilePattern('leader', 'i').test('New LEADER elected'));
    assert.ok(!compilePattern('leader').test('New LEADER elected'));
    assert.ok(compilePattern('^b$', 'm').test('a\nb\nc'));
    assert.ok(!compilePattern('^b$').test('a\nb\nc'));
    assert.ok(compilePattern('a.b', 's').test('a\nb'));
    const g = compilePattern('x', 'gy');
    assert.ok(g.test('x') && g.test('x'), 'no lastIndex state between tests');
  });

  it('names the construct the engine does not support', () => {
    const refused = (source: string, why: RegExp) => assert.throws(() => compilePattern(source), (e: unknown) => e instanceof PatternError && why.test(e.message));
    refused('(a)\\1', /uses backreferences/);
    refused('(?<n>a)\\k<n>', /uses backreferences/);
    assert.ok(compilePattern('\\\\k<').test('\\k<'), 'an escaped backslash before k< is no backreference');
    refused('foo(?=bar)', /uses lookahead/);
    refused('(?<!x)y', /uses lookbehind/);
    refused('[', /not a valid regular expression.*missing closing \]/);
    assert.throws(() => compilePattern('a', 'q'), /unknown regular expression flag "q"/);
  });

  it('accepts the JavaScript syntax models write', () => {
    assert.ok(compilePattern('\\u0041\\/x').test('A/x'));
    assert.ok(compilePattern('(?<name>\\w+)-\\d{2,}').test('lease-42'));
    assert.ok(compilePattern('\\.then\\(').test('p.then(f)'));
  });

  it('matches a substring literally and case-insensitively', () => {
    assert.ok(substringPattern('A+(b)').test('xa+(B)y'));
    assert.ok(!substringPattern('a+').test('aaa'));
  });
});
