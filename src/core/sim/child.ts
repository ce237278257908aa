import net from 'node:net';
import path from 'node:path';
import { UserError } from '../errors';
import { loadScenario } from '../scenario/loader';
import { CHILD_MESSAGE_FD, ChildRequest, type ChildMessage } from './child-protocol';
import { searchSeedsInWorkers } from './pool';
import { replayRun } from './replay';
import { shrinkFailure } from './shrink';
import { loadTarget } from './target';

/** The simulation worker's bundle, beside this one (dist/, or the from-source build). */
const WORKER_BUNDLE = 'sim-worker.js';

/** The one request on stdin; after it, stdin's end means the harness is gone, and so is this child. */
function readRequest(): Promise<ChildRequest> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: string) => {
      text += chunk;
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      process.stdin.off('data', onData);
      try {
        resolve(ChildRequest.parse(JSON.parse(text.slice(0, newline))));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', onData);
    process.stdin.once('end', () => process.exit(1));
    process.stdin.resume();
  });
}

async function serve(req: ChildRequest, send: (m: ChildMessage) => void): Promise<unknown> {
  const { manifest, srcRoot, scenarioPath } = req.target;
  // The scenario is the harness's own code (the bug set's): its budget sets the limits before any system code runs.
  send({ t: 'ready', timeoutMs: (await loadScenario(scenarioPath)).timeoutMs });
  switch (req.op) {
    case 'search': {
      const opts = { seeds: req.seeds, from: req.from, stopAtFirstFailure: req.stopAtFirstFailure, checkDeterminism: req.checkDeterminism, sim: req.sim };
      let done = 0;
      return searchSeedsInWorkers(req.target, opts, req.concurrency, path.join(__dirname, WORKER_BUNDLE), {
        limits: req.limits,
        onResult: (result, nondeterministic) => send({ t: 'seed', result, nondeterministic, done: ++done, total: req.seeds }),
      });
    }
    case 'shrink':
      return shrinkFailure(await loadTarget(manifest, srcRoot, scenarioPath), req.seed, { maxRuns: req.maxRuns, sim: req.sim, onRun: (runs, kept) => send({ t: 'shrink-run', runs, kept }) });
    case 'replay':
      return replayRun(await loadTarget(manifest, srcRoot, scenarioPath), req.seed, { eventsFile: req.eventsFile, sim: req.sim, ...(req.keep && { keep: req.keep }) });
  }
}

/**
 * The sandboxed simulation child (sandboxed.ts starts it): reads one request from
 * stdin, runs it — a seed search in its own worker pool, a shrink or a replay in
 * this thread — and writes its messages on fd 3, so nothing the system prints can
 * pass for one. It exits when the harness closes stdin (the harness is gone).
 */
export async function runSimChild(): Promise<void> {
  const out = new net.Socket({ fd: CHILD_MESSAGE_FD, readable: false, writable: true });
  // A closed channel means the harness is gone.
  out.on('error', () => process.exit(1));
  const send = (m: ChildMessage) => out.write(JSON.stringify(m) + '\n');
  try {
    const req = await readRequest();
    send({ t: 'done', value: await serve(req, send) });
  } catch (err) {
    send({ t: 'error', message: err instanceof Error ? err.message : String(err), user: err instanceof UserError });
  }
  await new Promise<void>((resolve) => out.end(resolve));
  process.exit(0);
}
