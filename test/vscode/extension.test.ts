// The e2e checks (test/e2e) through VS Code's API, inside a downloaded VS Code.
// Started by run.js, which opens the empty folder DDBENCH_TEST_FOLDER named after the bug.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { loadCatalog } from '../../src/core/bugs/catalog';
import type { BugsNode } from '../../src/extension/bugsView';
import { COMMANDS, VIEWS } from '../../src/extension/commands';
import type { DDBenchApi } from '../../src/extension/extension';

const root = path.resolve(__dirname, '..', '..');

describe('DDBench in VS Code (@vscode/test-electron)', () => {
  let api: DDBenchApi;

  before(async () => {
    const extension = vscode.extensions.getExtension<DDBenchApi>('ddbench.ddbench');
    assert.ok(extension, 'the extension under development is installed');
    api = await extension.activate();
  });

  it('registers every command of the table', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(
      Object.values(COMMANDS).map((c) => c.id).filter((id) => !registered.has(id)),
      [],
    );
  });

  it('shows the Bugs and Cluster views', async () => {
    await vscode.commands.executeCommand(`${VIEWS.bugs}.focus`);
    await vscode.commands.executeCommand(`${VIEWS.cluster}.focus`);
  });

  it('lists every bug of the catalogue in the Bugs view', async () => {
    const catalog = await loadCatalog(path.join(root, 'bugs'));
    const shown: string[] = [];
    for (const system of (await api.bugsTree.getChildren()) ?? []) {
      for (const node of (await api.bugsTree.getChildren(system)) ?? []) if (node.kind === 'bug') shown.push(label(node));
    }
    assert.deepEqual(shown.sort(), catalog.bugs.map((b) => b.id).sort());
  });

  it('Open Bug fills the open folder with the bug workspace and shows its issue', async () => {
    const bugId = requiredEnv('DDBENCH_TEST_BUG');
    const folder = requiredEnv('DDBENCH_TEST_FOLDER');
    await vscode.commands.executeCommand(COMMANDS.openBug.id, bugId);
    assert.ok(fs.existsSync(path.join(folder, '.ddbench', 'workspace.json')), 'workspace.json');
    assert.ok(fs.existsSync(path.join(folder, 'ISSUE.md')), 'ISSUE.md');
    await waitFor('the ISSUE.md preview tab', () =>
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.label.includes('ISSUE.md')),
    );
  });

  function label(node: BugsNode): string {
    const item = api.bugsTree.getTreeItem(node);
    const text = item instanceof vscode.TreeItem ? item.label : undefined;
    return typeof text === 'string' ? text : (text?.label ?? '');
  }
});

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run this suite through test/vscode/run.js`);
  return value;
}

async function waitFor(what: string, ok: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
