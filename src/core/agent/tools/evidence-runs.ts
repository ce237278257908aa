import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { SystemEntry } from '../../bugs/catalog';
import { loadTimeline } from '../../events/load';
import type { EventStore } from '../../events/store';
import { formatEvent } from '../../repro/evidence';
import type { BackendOptions } from '../../cluster';
import type { runScenarioTrials } from '../../repro/trials';
import type { TrialResult } from '../../scenario/verdict';
import { STATE_FILE } from '../../repro/state-snapshot';
import { ToolError } from '../scratch';
import { echo } from '../../echo';

/**
 * Runs trials of a scenario on some code with node state kept: where the context
 * condition's evidence comes from (the failure captured up front, run_reproducer).
 * Live trials (runScenarioTrials) unless a test gives another.
 */
export type EvidenceRunner = typeof runScenarioTrials;

/** One trial whose events and state the evidence tools can look at. */
export interface EvidenceTrial {
  /** `context` for the captured run, `run<k>/<i>` for trial i of the agent's k-th reproducer run. */
  id: string;
  trial: TrialResult;
}

const StateFile = z.record(z.string(), z.union([z.strictObject({ state: z.unknown() }), z.strictObject({ error: z.string() })]));

/**
 * The runs the context-augmented agent can inspect: the capture on the buggy code it
 * was given up front, and each reproducer run it asked for. Event stores load lazily.
 */
export class EvidenceRuns {
  private readonly trials = new Map<string, EvidenceTrial>();
  private readonly stores = new Map<string, Promise<EventStore>>();
  private runs = 0;

  constructor(
    private readonly system: SystemEntry,
    private readonly scenario: string,
    /** Where the agent's reproducer runs go (inside the agent run's folder). */
    private readonly runDir: string,
    private readonly runTrials: EvidenceRunner,
    private readonly backend?: BackendOptions,
  ) {}

  add(id: string, trial: TrialResult): void {
    this.trials.set(id, { id, trial });
  }

  ids(): string[] {
    return [...this.trials.keys()];
  }

  /** The named trial; by default the capture, else the latest failing one, else the latest. */
  get(id?: string): EvidenceTrial {
    if (id !== undefined) {
      const t = this.trials.get(id);
      if (!t) throw new ToolError(`no trial "${echo(id)}"; known trials: ${this.ids().join(', ') || '(none)'}`);
      return t;
    }
    const all = [...this.trials.values()];
    const chosen = this.trials.get('context') ?? all.filter((t) => t.trial.verdict !== 'pass').at(-1) ?? all.at(-1);
    if (!chosen) throw new ToolError('there is no run to look at yet; use run_reproducer first');
    return chosen;
  }

  store(id?: string): Promise<EventStore> {
    const t = this.get(id);
    let s = this.stores.get(t.id);
    if (!s) {
      s = loadTimeline([path.dirname(t.trial.eventsFile)]);
      this.stores.set(t.id, s);
    }
    return s;
  }

  /** The node's state when the trial ended, as the node reported it. */
  state(node: string, id?: string): string {
    const t = this.get(id);
    const file = path.join(path.dirname(t.trial.eventsFile), STATE_FILE);
    if (!fs.existsSync(file)) throw new ToolError(`trial ${t.id} kept no node state`);
    const snapshot = StateFile.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
    const entry = snapshot[node];
    if (!entry) throw new ToolError(`no node "${echo(node)}" in trial ${t.id}; nodes: ${Object.keys(snapshot).join(', ')}`);
    return 'error' in entry ? `${node} gave no state when trial ${t.id} ended: ${entry.error}` : JSON.stringify(entry.state, null, 1);
  }

  /** Runs the reproducer on `codeDir` (the agent's working copy) and registers its trials. */
  async reproduce(codeDir: string, trials: number, signal: AbortSignal): Promise<EvidenceTrial[]> {
    const k = ++this.runs;
    const r = await this.runTrials(this.system, codeDir, this.scenario, path.join(this.runDir, `repro-${k}`), { trials, captureState: true, signal, backend: this.backend });
    return r.trials.map((trial) => {
      const id = `run${k}/${trial.index}`;
      this.add(id, trial);
      return { id, trial };
    });
  }
}

/** One event as a line the model reads: its id (for happens_before), then the usual format. */
export function eventLine(store: EventStore, i: number, maxChars = 300): string {
  const e = store.event(i);
  const line = `#${e.id} ${formatEvent(e).trim()}`;
  return line.length > maxChars ? `${line.slice(0, maxChars)} …` : line;
}

export function trialHeadline(t: EvidenceTrial): string {
  const v = t.trial;
  return `trial ${t.id} (${v.scenario}, seed ${v.seed}): ${v.verdict.toUpperCase()}${v.reason ? ` — ${v.reason}` : ''}`;
}
