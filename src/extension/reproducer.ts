import type { BackendOptions } from '../core/cluster';
import * as vscode from 'vscode';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { runReproducer, type ReproResult } from '../core/verify/reproduce';
import type { TrialResult } from '../core/scenario/verdict';

export interface ReproducerRun {
  workspace: WorkspaceInfo;
  /** Undefined runs the bug's own count (bug.json). */
  trials: number | undefined;
  concurrency: number | undefined;
  backend: BackendOptions;
}

/**
 * Runs the bug's reproducer with a cancellable progress notification and writes every
 * trial to the DDBench output channel as it finishes. Runs still going when the window
 * closes are cancelled, so their trial clusters are stopped too.
 */
export class ReproducerRuns {
  private readonly running = new Map<AbortController, Promise<void>>();

  constructor(private readonly output: vscode.OutputChannel) {}

  async run(run: ReproducerRun): Promise<void> {
    const abort = new AbortController();
    const done = this.runWithProgress(run, abort);
    this.running.set(abort, done);
    try {
      await done;
    } finally {
      this.running.delete(abort);
    }
  }

  async cancelAll(): Promise<void> {
    for (const abort of this.running.keys()) abort.abort();
    await Promise.allSettled(this.running.values());
  }

  private async runWithProgress(run: ReproducerRun, abort: AbortController): Promise<void> {
    const { output } = this;
    const { workspace } = run;
    output.appendLine(`\n=== Reproducer for ${workspace.bugId} in ${workspace.dir}`);
    output.show(true);
    let passed = 0;
    let failed = 0;
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
              if (t.verdict === 'pass') passed++;
              else failed++;
              output.appendLine(formatTrial(t));
              progress.report({ increment: 100 / total, message: `${done}/${total} trials · ${passed} passed, ${failed} failed` });
            },
          });
        },
      );
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    if (abort.signal.aborted || !result) {
      // A partial run has no verdict: too few trials to say anything.
      output.appendLine(`=== Cancelled after ${passed + failed} trial(s): ${passed} passed, ${failed} failed`);
      return;
    }
    output.appendLine(summary(result));
    output.appendLine(`    run folder: ${result.runDir}`);
    const show = 'Show Output';
    const message = `DDBench: ${result.bugId}: ${summary(result).replace(/^=== /, '')}`;
    // Not awaited: the command is done when the run is, not when the toast is dismissed.
    void (result.failed > 0 ? vscode.window.showWarningMessage(message, show) : vscode.window.showInformationMessage(message, show)).then(
      (choice) => {
        if (choice) output.show(true);
      },
    );
  }
}

function summary(r: ReproResult): string {
  const total = r.trials.length;
  const verdict = r.failed === 0 ? 'the reproducer passes' : 'the bug reproduces';
  return `=== ${r.scenario}: ${r.passed}/${total} passed, ${r.failed}/${total} failed — ${verdict}`;
}

function formatTrial(t: TrialResult): string {
  const head = `trial ${String(t.index + 1).padStart(3)}  ${t.verdict.toUpperCase().padEnd(7)}  seed ${t.seed}  ${(t.durationMs / 1000).toFixed(2)}s`;
  const lines = [head];
  if (t.violation) lines.push(`    violation: ${t.violation.check} ${JSON.stringify(t.violation.details)}`);
  if (t.reason && !t.violation) lines.push(`    reason: ${t.reason}`);
  lines.push(`    events: ${t.eventsFile}`);
  return lines.join('\n');
}
