import { Option } from 'commander';
import * as path from 'node:path';
import { z } from 'zod';
import { loadCatalog } from '../../core/bugs/catalog';
import { defaultWorkspacesDir, openWorkspace } from '../../core/bugs/workspace';
import { optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, say } from '../output';

export const openOptions = options(
  optionGroup([new Option('--dir <dir>', 'folder to create (default: ~/ddbench-workspaces/<bug>, or $DDBENCH_WORKSPACES/<bug>)')], z.object({ dir: z.string().optional() })),
  outputOptions(),
);

export async function commandOpen(bugId: string, o: OptionsOf<typeof openOptions>): Promise<number> {
  const catalog = await loadCatalog();
  const dir = await openWorkspace(catalog, bugId, o.dir ?? path.join(defaultWorkspacesDir(), bugId));
  if (o.json) printJson({ bug: bugId, dir });
  else say(dir);
  return EXIT.ok;
}
