// Rewrites the README's systems and bug tables (between their markers) from the catalogue.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bugTableMarkdown, systemTableMarkdown } from '../src/core/bugs/bug-table';
import { loadCatalog } from '../src/core/bugs/catalog';

void (async () => {
  const readme = path.join(__dirname, '..', 'README.md');
  const catalog = await loadCatalog();
  let text = fs.readFileSync(readme, 'utf8');
  for (const [name, table] of [['systems-table', systemTableMarkdown(catalog)], ['bug-table', bugTableMarkdown(catalog)]] as const) {
    const block = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(\\n<!-- ${name}:end -->)`);
    if (!block.test(text)) throw new Error(`README.md has no ${name} markers`);
    text = text.replace(block, (_, start: string, end: string) => `${start}${table}${end}`);
  }
  // The prose count ("46 bugs in them (14 of tier 1, 26 of tier\n2, 6 of tier 3") follows the tables.
  // The sentence counts the miniatures; the pilot tier's bugs in real code are named apart.
  const miniatures = catalog.bugs.filter((b) => b.kind === 'miniature');
  const tiers = [1, 2, 3].map((t) => miniatures.filter((b) => b.manifest.tier === t).length);
  const count = /\d+ bugs in them \(\d+ of tier 1, \d+ of tier\s+2, \d+ of tier 3/;
  if (!count.test(text)) throw new Error('README.md has no "N bugs in them (… of tier 1, … of tier 2, … of tier 3" sentence');
  text = text.replace(count, (m) => m.replace(/^\d+/, String(miniatures.length)).replace(/\d+ of tier 1/, `${tiers[0]} of tier 1`).replace(/\d+ of tier(\s+)2/, `${tiers[1]} of tier$12`).replace(/\d+ of tier 3/, `${tiers[2]} of tier 3`));
  fs.writeFileSync(readme, text);
  console.log(`${catalog.bugs.length} bugs from ${catalog.systems.length} systems written to the README`);
})();
