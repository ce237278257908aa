import type { BackendOptions } from '../core/cluster';
import * as vscode from 'vscode';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { failedSeedLine, reproduced, reproducerLines, reproducerSummary, seedsProgress, trialDetailLines, trialLine, trialsProgress } from '../core/verify/format';
import { runReproducer, type ReproResult } from '../core/verify/reproduce';
import { offerResult, writeFailedChecks } from './results';
import type { TimelinePanel } from './timelinePanel';

/** The notification's bar: the live trials fill this share, the simulated seeds the rest. */
const LIVE_SHARE = 50;
/** Failing simulated seeds written to the output channel; the rest are counted. */
const LISTED_SEED_FAILURES = 10;

export interface ReproducerRun {
  workspace: WorkspaceInfo;
  /** Undefined runs the bug's own count (bug.json). */
  trials: number | undefined;
  concurrency: number | undefined;
  backend: BackendOptions;
}

/**
 * Runs the bug's reproducer with a cancellable progress notification (its live trials,
 * then its simulated seeds) and writes every trial, and the first failing seeds, to the
 * DDBench output channel as they finish. Runs still going when the window
 * closes are cancelled, so their trial clusters are stopped too.
 */
export class ReproducerRuns {
  private readonly running = new Map<AbortController, Promise<boolean>>();

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly timeline: TimelinePanel,
  ) {}

  /** True when the run finished with a verdict (not cancelled). */
  async run(run: ReproducerRun): Promise<boolean> {
    const abort = new AbortController();
    const done = this.runWithProgress(run, abort);
    this.running.set(abort, done);
    try {
      return await done;
    } finally {
      this.running.delete(abort);
    }
  }

  async cancelAll(): Promise<void> {
    for (const abort of this.running.keys()) abort.abort();
    await Promise.allSettled(this.running.values());
  }

  private async runWithProgress(run: ReproducerRun, abort: AbortController): Promise<boolean> {
    const { output } = this;
    const { workspace } = run;
    output.appendLine(`\n=== Reproducer for ${workspace.bugId} in ${workspace.dir}`);
    output.show(true);
    const live = { done: 0, failed: 0 };
    const sim = { done: 0, failed: 0 };
    let result: ReproResult | undefined;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `DDBench: reproducer for ${workspace.bugId}`, cancellable: true },
        (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          progress.report({ message: 'starting the first trial' });
          return runReproducer(workspace.dir, {
            trials: run.trials,
            concurrency: run.concurrency,
            backend: run.backend,
            signal: abort.signal,
            onTrial: (t, done, total) => {
              live.done = done;
              if (t.verdict !== 'pass') live.failed++;
              output.appendLine(trialLine(t));
              for (const line of trialDetailLines(t)) output.appendLine(`    ${line}`);
              // The simulated seeds start next, after their workers load the code: say so, or the bar looks stuck.
              const next = done === total ? '; simulated seeds next' : '';
              progress.report({ increment: LIVE_SHARE / total, message: `${trialsProgress(done, total, live.failed)}${next}` });
            },
            onSimSeed: (phase, r, done, total) => {
              sim.done = done;
              if (r.verdict !== 'pass' && ++sim.failed <= LISTED_SEED_FAILURES) output.appendLine(failedSeedLine(phase, r));
              progress.report({ increment: (100 - LIVE_SHARE) / total, message: seedsProgress(phase, done, total, sim.failed) });
            },
          });
        },
      );
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    if (abort.signal.aborted || !result) {
      // A partial run has no verdict: too few trials to say anything.
      const seeds = sim.done > 0 ? `; ${sim.done} simulated seed(s), ${sim.failed} failed` : '';
      output.appendLine(`=== Cancelled after ${live.done} live trial(s), ${live.failed} failed${seeds}`);
      return false;
    }
    for (const line of reproducerLines('reproducer', result)) output.appendLine(`=== ${line}`);
    writeFailedChecks(output, result);
    output.appendLine(`    run folder: ${result.runDir}`);
    // Not awaited: the command is done when the run is, not when the toast is dismissed.
    void offerResult(`DDBench: ${result.bugId}: ${reproducerSummary(result)}`, reproduced(result), { ...result, runs: [result] }, this.timeline, output);
    return true;
  }
}
