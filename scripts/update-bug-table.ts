// Rewrites the README's bug table (between its bug-table markers) from the catalogue.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bugTableMarkdown } from '../src/core/bugs/bug-table';
import { loadCatalog } from '../src/core/bugs/catalog';

void (async () => {
  const readme = path.join(__dirname, '..', 'README.md');
  const catalog = await loadCatalog();
  const text = fs.readFileSync(readme, 'utf8');
  const block = /(<!-- bug-table:start -->\n)[\s\S]*?(\n<!-- bug-table:end -->)/;
  if (!block.test(text)) throw new Error('README.md has no bug-table markers');
  fs.writeFileSync(readme, text.replace(block, (_, start: string, end: string) => `${start}${bugTableMarkdown(catalog)}${end}`));
  console.log(`${catalog.bugs.length} bugs from ${catalog.systems.length} systems written to the README`);
})();
