/**
 * Run in a child `node --expose-gc`: an agent run with a one-second wall limit whose
 * model never answers, while garbage collections are forced throughout. Prints the
 * run's stop reason. A time limit held only weakly (an unreferenced
 * AbortSignal.timeout) is collected here and the run never ends.
 */
import { runAgent } from '../../src/core/agent/agent';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { FakeChatModel, FakeVerifier } from './agent-fakes';
import { AGENT_BUGSET, call, COUNTER_BUG, openTestWorkspace } from './agent-fixture';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run this with node --expose-gc');
const collect: () => void = gc;

async function main(): Promise<void> {
  const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
  const pressure = setInterval(collect, 10);
  try {
    const model = new FakeChatModel([call('list_files', {}), { hang: true }]);
    const result = await runAgent(
      { workspace: ws.dir, settings: { model: 'fake-model', limits: { maxWallMs: 1000 } } },
      { model, verifier: new FakeVerifier(() => false).verify, catalog: await loadCatalog(AGENT_BUGSET) },
    );
    process.stdout.write(`${JSON.stringify({ stopReason: result.stopReason, aborted: model.aborted })}\n`);
  } finally {
    clearInterval(pressure);
    ws.dispose();
  }
}

void main();
