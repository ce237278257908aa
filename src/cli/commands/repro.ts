import { runReproducer } from '../../core/verify/reproduce';
import { backendOptions, type BackendOpts } from '../backend';
import { EXIT, printJson, progress, say, withInterrupt, type RunOpts } from '../output';
import { printFirstFailure, summaryLine, trialLine } from '../report';
import { checkSimProgress, simLine } from '../sim-report';

export async function commandRepro(dir: string, o: RunOpts & BackendOpts): Promise<number> {
  return withInterrupt(async (signal) => {
    const r = await runReproducer(dir, {
      backend: backendOptions(o),
      trials: o.trials,
      seed: o.seed,
      concurrency: o.concurrency,
      signal,
      sim: o.sim,
      simSeeds: o.seeds,
      onTrial: (t, done, total) => progress(`[${done}/${total}]${trialLine(t)}`),
      onSimSeed: o.json ? undefined : checkSimProgress(),
    });
    if (o.json) printJson(r);
    else {
      say(summaryLine(`reproducer for ${r.bugId}`, r));
      if (r.sim) say(simLine(`reproducer for ${r.bugId}`, r.sim));
      await printFirstFailure(r);
      if (r.sim?.firstFailingSeed !== undefined) say(`\nreplay the first failing seed: ddbench replay ${dir} --seed ${r.sim.firstFailingSeed}`);
      say(`\nruns: ${r.runDir}`);
    }
    const simPassed = r.sim === undefined || r.sim.failed === 0;
    return r.failed === 0 && r.trials.length > 0 && simPassed ? EXIT.ok : EXIT.failed;
  });
}
