import * as path from 'node:path';
import { UserError } from '../../core/errors';
import { verifyFix, type FixSource } from '../../core/verify/verify';
import { backendOptions, type BackendOpts } from '../backend';
import { EXIT, printJson, progress, say, withInterrupt, type RunOpts } from '../output';
import { printFirstFailure, summaryLine, trialLine } from '../report';
import { checkSimProgress, simVerificationLines } from '../sim-report';

export interface VerifyOpts {
  patch?: string;
  reference?: boolean;
  failFast?: boolean;
}

export async function commandVerify(dir: string, o: RunOpts & BackendOpts & VerifyOpts): Promise<number> {
  if (o.patch && o.reference) throw new UserError('give either --patch FILE or --reference, not both');
  const source: FixSource = o.reference ? { kind: 'reference' } : o.patch ? { kind: 'patch', file: path.resolve(o.patch) } : { kind: 'workspace' };
  return withInterrupt(async (signal) => {
    const r = await verifyFix(dir, source, {
      backend: backendOptions(o),
      trials: o.trials,
      seed: o.seed,
      concurrency: o.concurrency,
      signal,
      sim: o.sim,
      simSeeds: o.seeds,
      failFast: o.failFast,
      onTrial: (t, done, total) => progress(`[${done}/${total}]${trialLine(t)}`),
      onSimSeed: o.json ? undefined : checkSimProgress(),
    });
    if (o.json) printJson(r);
    else {
      say(`patch: ${r.patch.files.join(', ')}${r.patch.fuzz ? ` (applied with ${r.patch.fuzz} lines of context tolerance)` : ''}`);
      say(summaryLine('reproducer', r));
      for (const g of r.regression) say(summaryLine('regression', g));
      if (r.sim) for (const line of simVerificationLines(r.sim)) say(line);
      await printFirstFailure(r);
      for (const g of r.regression) await printFirstFailure(g);
      say(r.verified ? `\nVERIFIED: ${r.bugId} is fixed by this patch.` : `\nNOT VERIFIED: ${r.bugId}.`);
      say(`runs: ${r.runDir}`);
    }
    return r.verified ? EXIT.ok : EXIT.failed;
  });
}
