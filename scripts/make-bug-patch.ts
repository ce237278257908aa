// Writes <bugDir>/bug.patch: the diff that turns the system's correct src/ into the buggy copy.
// Usage: npx tsx scripts/make-bug-patch.ts bugs/<system>/<bug> <folder holding the buggy src/>
import * as fs from 'node:fs';
import * as path from 'node:path';
import { diffTrees } from '../src/core/patch/unified';

const [bugDir, buggyDir] = process.argv.slice(2);
if (!bugDir || !buggyDir) {
  console.error('usage: npx tsx scripts/make-bug-patch.ts bugs/<system>/<bug> <folder holding the buggy src/>');
  process.exit(2);
}
const systemDir = path.dirname(path.resolve(bugDir));
const diff = diffTrees(systemDir, path.resolve(buggyDir), ['src']);
if (!diff) {
  console.error(`no difference between ${systemDir}/src and ${buggyDir}/src`);
  process.exit(1);
}
fs.writeFileSync(path.join(bugDir, 'bug.patch'), diff);
console.log(`wrote ${path.join(bugDir, 'bug.patch')} (${diff.split('\n').length} lines)`);
