// Loaded by VS Code's extension host: runs the suite's TypeScript files with mocha.
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');
require('tsx/cjs');

exports.run = async function run() {
  const mocha = new Mocha({ ui: 'bdd', timeout: 120_000, color: true });
  for (const file of fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.ts'))) mocha.addFile(path.join(__dirname, file));
  await new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
};
