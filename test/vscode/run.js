// Runs test/vscode/*.test.ts inside a downloaded VS Code (@vscode/test-electron), for
// machines that can download it; the e2e suite (test/e2e) covers machines that cannot.
// The window opens an empty folder named after the first bug, so Open Bug fills that
// folder in place instead of reloading the window (which would end the test run).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runTests } = require('@vscode/test-electron');
require('tsx/cjs');
const { loadCatalog } = require('../../src/core/bugs/catalog');

async function main() {
  const root = path.resolve(__dirname, '..', '..');
  const catalog = await loadCatalog(path.join(root, 'bugs'));
  const first = catalog.bugs[0];
  if (!first) throw new Error(`no bugs in ${catalog.root}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-vscode-'));
  const workspacesDir = path.join(tmp, 'workspaces');
  const folder = path.join(workspacesDir, first.id);
  fs.mkdirSync(folder, { recursive: true });
  const userDataDir = path.join(tmp, 'user-data');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ 'security.workspace.trust.enabled': false, 'workbench.startupEditor': 'none', 'ddbench.workspacesDir': workspacesDir }),
  );
  try {
    await runTests({
      version: process.env.DDBENCH_VSCODE_VERSION ?? '1.100.0',
      extensionDevelopmentPath: root,
      extensionTestsPath: path.join(__dirname, 'index.js'),
      launchArgs: [folder, '--user-data-dir', userDataDir, '--disable-extensions'],
      extensionTestsEnv: { DDBENCH_TEST_BUG: first.id, DDBENCH_TEST_FOLDER: folder },
    });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
