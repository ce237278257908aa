import { failedCheckLines } from '../../core/verify/checks';
import { reproducerLines, reproducerVerdict } from '../../core/verify/format';
import { runReproducer } from '../../core/verify/reproduce';
import { clusterBackendOptions, CONCURRENCY_HELP, options, outputOptions, simCheckOptions, trialOptions, type OptionsOf } from '../options';
import { EXIT, printJson, say, withInterrupt } from '../output';
import { printFirstFailure, trialProgress } from '../report';
import { checkSimProgress } from '../sim-report';

export const reproOptions = options(
  trialOptions({ trials: "number of seeded trials (default: the bug's)", seed: 'seed of the first trial; trial i uses seed+i', concurrency: CONCURRENCY_HELP }),
  simCheckOptions({ seeds: 'simulated seeds after the live trials (default: 100)' }),
  outputOptions(),
  clusterBackendOptions,
);

export async function commandRepro(dir: string, { json, ...run }: OptionsOf<typeof reproOptions>): Promise<number> {
  return withInterrupt(async (signal) => {
    const r = await runReproducer(dir, { ...run, signal, onTrial: trialProgress(), onSimSeed: json ? undefined : checkSimProgress() });
    if (json) printJson(r);
    else {
      for (const line of reproducerLines(`reproducer for ${r.bugId}`, r)) say(line);
      await printFirstFailure(r);
      for (const line of failedCheckLines(r)) say(line);
      say(`\n${reproducerVerdict(r)}`);
      if (r.sim?.firstFailingSeed !== undefined) say(`\nreplay the first failing seed: ddbench replay ${dir} --seed ${r.sim.firstFailingSeed}`);
      say(`\nruns: ${r.runDir}`);
    }
    const simPassed = r.sim === undefined || r.sim.failed === 0;
    return r.failed === 0 && r.trials.length > 0 && simPassed ? EXIT.ok : EXIT.failed;
  });
}
