import type Docker from 'dockerode';
import { connectEngine } from '../../src/core/cluster';

/**
 * The engine, or a skipped suite with the reason printed: where no Docker engine can run,
 * the docker tests report themselves as skipped and everything else still runs.
 */
export async function dockerOrSkip(ctx: Mocha.Context): Promise<Docker> {
  try {
    return await connectEngine();
  } catch (err) {
    console.log(`      (docker tests skipped: ${err instanceof Error ? err.message : String(err)})`);
    ctx.skip();
  }
}
