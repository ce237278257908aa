import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCatalog } from '../../core/bugs/catalog';
import { openWorkspace } from '../../core/bugs/workspace';
import { UserError } from '../../core/errors';
import { runReproducer } from '../../core/verify/reproduce';
import { verifyFix } from '../../core/verify/verify';
import { reproducerLines, verificationLines } from '../../core/verify/format';
import { trialOptions, type OptionsOf } from '../options';
import { EXIT, say, withInterrupt } from '../output';
import { printFirstFailure, trialProgress } from '../report';

export const demoOptions = trialOptions({ trials: 'trials per step' });

/** The main job on a fresh machine, with nothing configured. */
export async function commandDemo(o: OptionsOf<typeof demoOptions>): Promise<number> {
  const trials = o.trials ?? 3;
  const catalog = await loadCatalog();
  const bug = catalog.bugs.filter((b) => b.kind === 'miniature').sort((a, b) => a.tier - b.tier || a.id.localeCompare(b.id))[0];
  if (!bug) throw new UserError(`the bug set at ${catalog.root} has no bugs`);
  const dir = await openWorkspace(catalog, bug.id, fs.mkdtempSync(path.join(os.tmpdir(), `ddbench-demo-${bug.id}-`)));
  say(`1. Opened ${bug.id}: ${bug.title}`);
  say(`   modelled after ${bug.modelledAfter.project} ${bug.modelledAfter.id} (${bug.modelledAfter.url}), tier ${bug.tier}`);
  say(`   workspace: ${dir}`);
  const issue = fs.readFileSync(path.join(dir, 'ISSUE.md'), 'utf8').split('\n').slice(0, 12);
  for (const line of issue) say(`   | ${line}`);

  return withInterrupt(async (signal) => {
    say(`\n2. Running the reproducer on the buggy code (${trials} seeded trials, each a real 3-node cluster, then simulated seeds)…`);
    const repro = await runReproducer(dir, { trials, signal, onTrial: trialProgress('   ') });
    for (const line of reproducerLines('buggy code', repro)) say(`   ${line}`);
    await printFirstFailure(repro, 10);
    if (signal.aborted) return EXIT.failed;

    say(`\n3. Verifying the bug's reference fix on a scratch copy (${trials} trials + regression checks)…`);
    const fix = await verifyFix(dir, { kind: 'reference' }, { trials, signal, onTrial: trialProgress('   ') });
    for (const line of verificationLines(fix, 'fixed code')) say(`   ${line}`);
    say(fix.verified ? '   VERIFIED: the reference fix passes every trial and every simulated seed.' : '   NOT VERIFIED: the reference fix failed; see the runs above.');

    say('\nWhat to try next:');
    say(`  ddbench up ${dir}            # launch the cluster and watch its events`);
    if (repro.sim?.firstFailingSeed !== undefined) say(`  ddbench replay ${dir} --seed ${repro.sim.firstFailingSeed}   # replay a failing seed exactly, events for the timeline`);
    say(`  code ${dir}                  # open it in VS Code with the DDBench extension`);
    say(`  # edit ${path.join(dir, 'src')}, then:`);
    say(`  ddbench verify ${dir}        # verify your own fix (your changes, on a scratch copy)`);
    say('  ddbench bugs                 # the whole bug set');
    const reproduced = repro.failed > 0;
    return reproduced && fix.verified ? EXIT.ok : EXIT.failed;
  });
}
