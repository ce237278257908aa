import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { materialiseBuggySource } from '../bugs/workspace';
import type { BackendOptions } from '../cluster';
import { EventKind } from '../events/event';
import { loadTimeline } from '../events/load';
import { queryEvents } from '../events/query';
import type { ResolvedWorkspace } from '../bugs/workspace';
import { runsDir } from '../bugs/runs';
import { newRunId } from '../bugs/runs';
import { redact } from '../secrets';
import { makeTempDir } from '../temp-dirs';
import type { TrialResult } from '../scenario/verdict';
import type { EvidenceBudget } from './budget';
import { eventLine, trialHeadline, type EvidenceRunner, type EvidenceRuns } from './tools/evidence-runs';

/** Seeds tried on the buggy code until one reproduces the failure (the set's bugs fail >= 90% of trials). */
const CAPTURE_SEEDS = 3;
const CAPTURE_DIR = 'agent-context';
/** Share of the evidence budget the up-front bundle may use; the rest is for the tools. */
const BUNDLE_SHARE = 0.5;
const STATE_CHARS_PER_NODE = 2500;

const Capture = z.object({ bugId: z.string(), trial: z.object({ index: z.number(), scenario: z.string(), seed: z.number(), verdict: z.enum(['pass', 'fail', 'error', 'timeout']), durationMs: z.number(), reason: z.string().optional(), eventsFile: z.string() }) });

/**
 * A reproducer run on the bug's original (buggy) code with node state kept: the
 * failure the context bundle shows. Kept in the workspace's runs and reused, since a
 * live trial takes a while and the buggy code does not change.
 */
export async function captureFailure(ws: ResolvedWorkspace, runTrials: EvidenceRunner, signal: AbortSignal, backend?: BackendOptions): Promise<TrialResult> {
  const record = path.join(runsDir(ws.info.dir), CAPTURE_DIR, 'capture.json');
  if (fs.existsSync(record)) {
    const kept = Capture.safeParse(JSON.parse(fs.readFileSync(record, 'utf8')));
    if (kept.success && kept.data.bugId === ws.bug.id && fs.existsSync(kept.data.trial.eventsFile)) return kept.data.trial;
  }
  const scratch = makeTempDir('ddbench-capture-');
  const code = scratch.dir;
  try {
    materialiseBuggySource(ws.system, ws.bug, code);
    const runDir = path.join(runsDir(ws.info.dir), CAPTURE_DIR, newRunId());
    let trial: TrialResult | undefined;
    for (let seed = 1; seed <= CAPTURE_SEEDS && trial?.verdict !== 'fail' && !signal.aborted; seed++) {
      const r = await runTrials(ws.system, code, ws.bug.manifest.reproducer.scenario, path.join(runDir, `seed-${seed}`), { trials: 1, seed, captureState: true, signal, backend });
      trial = r.trials[0] ?? trial;
    }
    if (!trial) throw new Error('the reproducer ran no trial on the buggy code');
    fs.writeFileSync(record, redact(JSON.stringify({ bugId: ws.bug.id, trial }, null, 2)) + '\n');
    return trial;
  } finally {
    scratch.remove();
  }
}

/**
 * The bounded debugging context given up front: the captured failure's verdict, the
 * bug's investigation notes, its events (the nodes and kinds the bug names, the last
 * `maxEvents` of them) and each node's state at the end, within half the evidence budget.
 */
export async function contextBundle(ws: ResolvedWorkspace, trial: TrialResult, runs: EvidenceRuns, budget: EvidenceBudget): Promise<string> {
  runs.add('context', trial);
  const { capture, notes } = ws.bug.manifest.context;
  const store = await loadTimeline([path.dirname(trial.eventsFile)]);
  const kinds = capture.kinds?.map((k) => EventKind.parse(k));
  const matching = queryEvents(store, { ...(capture.nodes && { nodes: capture.nodes }), ...(kinds && { kinds }) });
  const shown = matching.slice(-capture.maxEvents);
  const left = matching.length - shown.length;
  const sections = [
    '## Debugging context',
    `Captured from a run of the reproducer on the bug's original code — ${trialHeadline({ id: 'context', trial })}.`,
    'The evidence tools (node_logs, timeline, happens_before, node_state) look at this trial by default; run_reproducer makes new ones.',
    '### Investigation notes',
    ...notes.map((n) => `- ${n}`),
    `### Events (${shown.length} of ${matching.length}${capture.nodes ? ` on ${capture.nodes.join(', ')}` : ''}${kinds ? `, kinds ${kinds.join(', ')}` : ''}; time since the trial started)`,
    ...(left > 0 ? [`[the first ${left} matching events are left out; the timeline tool shows them]`] : []),
    ...Array.from(shown, (i) => eventLine(store, i, 240)),
  ];
  if (capture.state) {
    sections.push('### Node state when the trial ended');
    for (const node of ws.system.manifest.nodes) {
      const text = stateText(runs, node);
      sections.push(`${node}: ${text.length > STATE_CHARS_PER_NODE ? `${text.slice(0, STATE_CHARS_PER_NODE)} [... ${text.length - STATE_CHARS_PER_NODE} characters cut; node_state shows all]` : text}`);
    }
  }
  return budget.take(sections.join('\n'), Math.floor(budget.limit * BUNDLE_SHARE * 4));
}

function stateText(runs: EvidenceRuns, node: string): string {
  try {
    return runs.state(node, 'context').replace(/\n\s*/g, ' ');
  } catch (err) {
    return `(no state: ${(err as Error).message})`;
  }
}
