import { parentPort, workerData } from 'node:worker_threads';
import { z } from 'zod';
import { SystemManifest } from '../bugs/manifest';
import { eventsDigest } from './events-file';
import { SimOptions } from './options';
import { runSimTrial, type SimTrialResult } from './sim-trial';
import { loadTarget } from './target';

/** What a seed-search worker is started with. */
export const SimWorkerData = z.strictObject({
  kind: z.literal('ddbench-sim-worker'),
  manifest: SystemManifest,
  srcRoot: z.string(),
  scenarioPath: z.string(),
  sim: SimOptions.partial().optional(),
  checkDeterminism: z.boolean(),
});
export type SimWorkerData = z.infer<typeof SimWorkerData>;

export type ToWorker = { t: 'run'; seed: number };
export type FromWorker =
  | { t: 'ready'; scenario: string; timeoutMs: number }
  | { t: 'result'; result: SimTrialResult; nondeterministic: boolean }
  | { t: 'failed'; message: string };

/** The worker side of the pool: loads the target once, then runs the seeds it is sent, one at a time. */
export async function runSimWorker(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('runSimWorker must run in a worker thread');
  try {
    const data = SimWorkerData.parse(workerData);
    const target = await loadTarget(data.manifest, data.srcRoot, data.scenarioPath);
    port.on('message', (m: ToWorker) => {
      void (async () => {
        const run = await runSimTrial(target, { seed: m.seed, sim: data.sim });
        let nondeterministic = false;
        if (data.checkDeterminism) {
          const again = await runSimTrial(target, { seed: m.seed, sim: data.sim });
          nondeterministic = eventsDigest(again.cluster.events()) !== eventsDigest(run.cluster.events());
        }
        port.postMessage({ t: 'result', result: run.result, nondeterministic } satisfies FromWorker);
      })().catch((err: unknown) => port.postMessage({ t: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies FromWorker));
    });
    port.postMessage({ t: 'ready', scenario: target.scenario.name, timeoutMs: target.scenario.timeoutMs } satisfies FromWorker);
  } catch (err) {
    port.postMessage({ t: 'failed', message: err instanceof Error ? err.message : String(err) } satisfies FromWorker);
  }
}
