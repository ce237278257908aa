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
  fs.writeFileSync(readme, text);
  console.log(`${catalog.bugs.length} bugs from ${catalog.systems.length} systems written to the README`);
})();
