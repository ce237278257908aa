import { failedCheckLines } from '../../core/verify/checks';
import { Option } from 'commander';
import * as path from 'node:path';
import { z } from 'zod';
import { verificationLines } from '../../core/verify/format';
import { verifyFix, type FixSource } from '../../core/verify/verify';
import { clusterBackendOptions, CONCURRENCY_HELP, isolationOptions, optionGroup, options, outputOptions, simCheckOptions, trialOptions, type OptionsOf } from '../options';
import { EXIT, printJson, say, withInterrupt } from '../output';
import { printFirstFailure, trialProgress } from '../report';
import { checkSimProgress } from '../sim-report';

export const verifyOptions = options(
  optionGroup(
    [new Option('--patch <file>', "unified diff against the bug's original code"), new Option('--reference', "use the bug's own fix (for validating the set)")],
    z
      .object({ patch: z.string().optional(), reference: z.boolean().optional() })
      .refine((o) => !(o.patch !== undefined && o.reference), 'give either --patch FILE or --reference, not both')
      .transform((o): { source: FixSource } => ({ source: o.reference ? { kind: 'reference' } : o.patch !== undefined ? { kind: 'patch', file: path.resolve(o.patch) } : { kind: 'workspace' } })),
  ),
  trialOptions({ trials: "number of seeded trials (default: the bug's)", seed: 'seed of the first trial', concurrency: CONCURRENCY_HELP }),
  simCheckOptions({ seeds: "simulated seeds the fix must pass (default: from the buggy code's failure rate over 100 seeds, N >= ln 0.05 / ln(1-p), at least 100)" }),
  optionGroup([new Option('--fail-fast', 'stop at the first failing check (reproducer, regression checks, simulation) instead of running them all')], z.object({ failFast: z.boolean().optional() })),
  outputOptions(),
  clusterBackendOptions,
  isolationOptions,
);

export async function commandVerify(dir: string, { json, source, ...checks }: OptionsOf<typeof verifyOptions>): Promise<number> {
  return withInterrupt(async (signal) => {
    const r = await verifyFix(dir, source, { ...checks, signal, onTrial: trialProgress(), onSimSeed: json ? undefined : checkSimProgress() });
    if (json) printJson(r);
    else {
      say(`patch: ${r.patch.files.join(', ')}${r.patch.fuzz ? ` (applied with ${r.patch.fuzz} lines of context tolerance)` : ''}`);
      for (const line of verificationLines(r)) say(line);
      await printFirstFailure(r);
      for (const g of r.regression) await printFirstFailure(g);
      for (const line of failedCheckLines(r)) say(line);
      say(r.verified ? `\nVERIFIED: ${r.bugId} is fixed by this patch.` : `\nNOT VERIFIED: ${r.bugId}.`);
      say(`runs: ${r.runDir}`);
    }
    return r.verified ? EXIT.ok : EXIT.failed;
  });
}
