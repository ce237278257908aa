import { Option } from 'commander';
import { z } from 'zod';
import { bugTableMarkdown } from '../../core/bugs/bug-table';
import { loadCatalog } from '../../core/bugs/catalog';
import { upstreamMissing } from '../../core/bugs/upstream-installed';
import { optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, say } from '../output';

export const bugsOptions = options(
  outputOptions(),
  optionGroup([new Option('--markdown', "the README's bug table (id, system, upstream reference, tier, faults, categories)")], z.object({ markdown: z.boolean().optional() })),
);

export async function commandBugs(o: OptionsOf<typeof bugsOptions>): Promise<number> {
  const catalog = await loadCatalog();
  if (o.markdown) say(bugTableMarkdown(catalog));
  else if (o.json) {
    printJson({
      root: catalog.root,
      bugs: catalog.bugs.map((b) => ({ id: b.id, kind: b.kind, title: b.title, system: b.system, tier: b.tier, difficulty: b.difficulty, faults: b.manifest.faults, categories: b.categories, modelledAfter: b.modelledAfter })),
      problems: catalog.problems,
    });
  } else {
    const rows = catalog.bugs.map((b) => [b.id, b.kind === 'upstream' ? `${b.system} (real)` : b.system, `${b.tier} (${b.difficulty})`, b.manifest.faults.join(',') || 'none', b.categories.join(','), `${b.modelledAfter.id}`, b.title]);
    const head = ['BUG', 'SYSTEM', 'TIER', 'FAULTS', 'CATEGORIES', 'UPSTREAM', 'TITLE'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const fmt = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
    say(fmt(head));
    for (const r of rows) say(fmt(r));
    const upstream = catalog.systems.filter((s) => s.kind === 'upstream');
    const pilot = catalog.bugs.filter((b) => b.kind === 'upstream').length;
    say(`\n${catalog.bugs.length - pilot} miniature bugs from ${catalog.systems.length - upstream.length} systems, and ${pilot} in the real code of ${upstream.length} upstream system(s), in ${catalog.root}`);
    for (const s of upstream) {
      const missing = upstreamMissing(s);
      if (missing !== undefined) say(`note: ${missing}`);
    }
    for (const p of catalog.problems) say(`problem: ${p}`);
  }
  return catalog.problems.length ? EXIT.failed : EXIT.ok;
}
