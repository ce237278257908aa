// The seed-search worker when running from source (tests, benchmarks under tsx); bundles use the CLI bundle.
import { runSimWorker } from './worker';

// tsx turns source maps on, which makes every log call format a mapped stack; the events are the same without.
process.setSourceMapsEnabled(false);
void runSimWorker();
