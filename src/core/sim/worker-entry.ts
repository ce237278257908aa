// The seed-search worker: bundled as dist/sim-worker.js, and run from source under tsx by tests and benchmarks.
import { runSimWorker } from './worker';

// tsx turns source maps on, which makes every log call format a mapped stack; the events are the same without.
process.setSourceMapsEnabled(false);
void runSimWorker();
