import * as path from 'node:path';
import { loadCatalog } from '../../core/bugs/catalog';
import { defaultWorkspacesDir, openWorkspace } from '../../core/bugs/workspace';
import { EXIT, printJson, say } from '../output';

export async function commandOpen(bugId: string, o: { dir?: string; json?: boolean }): Promise<number> {
  const catalog = await loadCatalog();
  const dir = await openWorkspace(catalog, bugId, o.dir ?? path.join(defaultWorkspacesDir(), bugId));
  if (o.json) printJson({ bug: bugId, dir });
  else say(dir);
  return EXIT.ok;
}
