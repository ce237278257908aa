import { runReproducer } from '../../core/repro/runner';
import { EXIT, printJson, progress, say, type RunOpts } from '../output';
import { printFirstFailure, summaryLine, trialLine } from '../report';

export async function commandRepro(dir: string, o: RunOpts): Promise<number> {
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const r = await runReproducer(dir, {
      trials: o.trials,
      seed: o.seed,
      concurrency: o.concurrency,
      signal: controller.signal,
      onTrial: (t, done, total) => progress(`[${done}/${total}]${trialLine(t)}`),
    });
    if (o.json) printJson(r);
    else {
      say(summaryLine(`reproducer for ${r.bugId}`, r));
      await printFirstFailure(r);
      say(`\nruns: ${r.runDir}`);
    }
    return r.failed === 0 && r.trials.length > 0 ? EXIT.ok : EXIT.failed;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
