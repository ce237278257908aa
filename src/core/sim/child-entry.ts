// The sandboxed simulation child: bundled as dist/sim-child.js (sandboxed.ts builds it from source under tsx).
import { runSimChild } from './child';

process.setSourceMapsEnabled(false);
void runSimChild();
