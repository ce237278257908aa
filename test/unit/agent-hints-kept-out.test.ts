import { strict as assert } from 'node:assert';
import { runAgent } from '../../src/core/agent/agent';
import type { AgentSettingsInput } from '../../src/core/agent/config';
import { findBug, loadCatalog, type Catalog } from '../../src/core/bugs/catalog';
import type { EventRecord } from '../../src/core/events/record';
import { AGENT_BUGSET, allText, call, COUNTER_BUG, KEY, openTestWorkspace } from '../support/agent-fixture';
import { FakeChatModel, FakeEvidenceRunner, FakeVerifier } from '../support/agent-fakes';

const EVENTS: EventRecord[] = [
  { id: '1', ts: 1000, node: 'n1', kind: 'log', level: 'info', msg: 'added', fields: { amount: 1, total: 2 } },
  { id: '2', ts: 2000, node: 'harness', kind: 'check', msg: 'the total counts each Add once', fields: { ok: false, total: 2 } },
];

/**
 * The hints and the provenance in bug.json (upstream issue, fix, mechanism) are for people
 * judging or studying the bug; in neither condition does any of it reach the model, through
 * a prompt, a tool's answer or a file of the workspace.
 */
describe('agent: hints and provenance never reach the model', () => {
  let catalog: Catalog;
  let secrets: string[];
  before(async () => {
    catalog = await loadCatalog(AGENT_BUGSET);
    const { manifest } = findBug(catalog, COUNTER_BUG);
    const u = manifest.modelledAfter;
    secrets = [...manifest.hints, u.mechanism, u.fix.summary, u.fix.ref, u.fix.url, u.id, u.url];
  });

  for (const condition of ['symptom-only', 'context-augmented'] as NonNullable<AgentSettingsInput['condition']>[]) {
    it(`${condition}: not in the prompts, the tools' answers or the workspace`, async () => {
      const ws = await openTestWorkspace(AGENT_BUGSET, COUNTER_BUG);
      try {
        const evidence = condition === 'context-augmented' ? [call('node_logs', { node: 'n1' }), call('timeline', {}), call('node_state', { node: 'n1' })] : [];
        const model = new FakeChatModel([
          call('list_files', {}),
          call('read_file', { path: 'README.md' }),
          call('read_file', { path: 'src/total.mjs' }),
          call('search', { pattern: 'hint|mechanism|fixture' }),
          ...evidence,
          call('list_files', {}),
        ]);
        const result = await runAgent(
          { workspace: ws.dir, apiKey: KEY, settings: { model: 'fake-model', condition, limits: { maxSteps: 5 + evidence.length } } },
          { model, verifier: new FakeVerifier(() => false).verify, evidence: new FakeEvidenceRunner(EVENTS, { n1: { total: 2 } }).run, catalog },
        );
        if (model.failures[0]) throw model.failures[0];
        assert.equal(result.stopReason, 'step-limit');
        const sent = JSON.stringify(model.requests.map((r) => r.messages));
        if (condition === 'context-augmented') assert.match(sent, /Investigation notes/, 'the bundle was sent');
        const files = allText(ws.dir);
        for (const s of secrets) {
          assert.ok(!sent.includes(s), `sent to the model: ${s}`);
          assert.ok(!files.includes(s), `in the workspace: ${s}`);
        }
      } finally {
        ws.dispose();
      }
    });
  }
});
