import { strict as assert } from 'node:assert';
import { loadCatalog, type Catalog } from '../../src/core/bugs/catalog';

/**
 * The bugs whose reference fix has no upstream fix to cite (status unsourced) or follows a
 * rewrite rather than a patch (status redesign). Each says in `differs` what is missing; a
 * new entry here is a decision for whoever owns the set, not a default.
 */
const WITHOUT_UPSTREAM_PATCH: Record<string, 'redesign' | 'unsourced'> = {
  'replset-majority-ack-stepdown': 'unsourced',
};

/** N-grams of this many words shared by a note and a late hint count as the note giving the hint away. */
const NGRAM = 8;

function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9#.\-_/]+/g, ' ')
    .replace(/(?<!\w)[.\-_/]+|[.\-_/]+(?!\w)/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

function ngrams(text: string, n: number): Set<string> {
  const w = words(text);
  const out = new Set<string>();
  for (let i = 0; i + n <= w.length; i++) out.add(w.slice(i, i + n).join(' '));
  return out;
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?;:])\s+/)
    .map((s) => words(s).join(' '))
    .filter((s) => s.split(' ').length >= 3);
}

/** What a note shares with a hint: whole sentences, or runs of NGRAM words. */
function shared(note: string, hint: string): string[] {
  const hintSentences = new Set(sentences(hint));
  const hintGrams = ngrams(hint, NGRAM);
  return [...sentences(note).filter((s) => hintSentences.has(s)), ...[...ngrams(note, NGRAM)].filter((g) => hintGrams.has(g))];
}

describe('bug set: provenance, hint ladders and investigation notes', () => {
  let catalog: Catalog;
  before(async () => {
    catalog = await loadCatalog();
    assert.deepEqual(catalog.problems, []);
  });

  it('names, for every bug, the upstream issue and fix, its status and a one-line mechanism', () => {
    for (const b of catalog.bugs) {
      const u = b.modelledAfter;
      assert.ok(u.fix.ref && u.fix.url && u.fix.summary, `${b.id}: no upstream fix`);
      assert.ok(u.mechanism && !u.mechanism.includes('\n'), `${b.id}: no one-line mechanism`);
      assert.ok(['fixed', 'open', 'unmerged', 'redesign', 'unsourced'].includes(u.status), `${b.id}: status ${u.status}`);
      if (u.status === 'redesign' || u.status === 'unsourced') assert.ok(u.differs, `${b.id}: a ${u.status} fix says what is missing`);
    }
    const without = Object.fromEntries(catalog.bugs.flatMap((b) => (b.modelledAfter.status === 'redesign' || b.modelledAfter.status === 'unsourced' ? [[b.id, b.modelledAfter.status]] : [])));
    assert.deepEqual(without, WITHOUT_UPSTREAM_PATCH, 'a bug without an upstream patch to follow is a decision: list it here');
  });

  it('gives every bug a ladder of 3 to 5 hints, the last one naming the fix', () => {
    for (const b of catalog.bugs) {
      const { hints } = b.manifest;
      assert.ok(hints.length >= 3 && hints.length <= 5, `${b.id}: ${hints.length} hints`);
      assert.equal(new Set(hints).size, hints.length, `${b.id}: a hint repeats`);
    }
  });

  it(`keeps every investigation note clear of the last two hints (no shared sentence, no ${NGRAM}-word run)`, () => {
    const leaks: string[] = [];
    for (const b of catalog.bugs) {
      const late = b.manifest.hints.slice(-2);
      for (const note of b.manifest.context.notes) {
        for (const hint of late) for (const s of shared(note, hint)) leaks.push(`${b.id}: note "${note}" shares "${s}" with a hint`);
      }
    }
    assert.deepEqual(leaks, []);
  });

  it('finds a shared sentence and a shared run of words (the check can fail)', () => {
    const hint = 'Record the expire time even when the endpoint is not in the ring. Then evict it.';
    assert.deepEqual(shared('Look at the state. Then evict it.', hint), ['then evict it']);
    assert.deepEqual(shared('Why would a node record the expire time even when the endpoint is gone?', hint), [
      'record the expire time even when the endpoint',
      'the expire time even when the endpoint is',
    ]);
    assert.deepEqual(shared('Compare the gossip entries of n1 and n2 at the end.', hint), []);
  });
});
