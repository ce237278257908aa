import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TrialsResult } from '../core/repro/trials';
import { failedCheckLines, type FailedCheck } from '../core/verify/checks';
import { COMMANDS } from './commands';
import type { TimelinePanel } from './timelinePanel';
import { completeStep } from './walkthrough';

/** What a finished reproducer or verification offers: its failed checks, and trials to open. */
export interface CheckedRun {
  failing: readonly FailedCheck[];
  moved: readonly FailedCheck[];
  /** The live trials (reproducer and regression checks), to find a passing one to compare with. */
  runs: readonly TrialsResult[];
}

const OPEN_FAILING = 'Open Failing Trial';
const COMPARE = 'Compare with a Passing Trial';
const REPLAY = 'Replay Failing Seed';
const OUTPUT = 'Show Output';

/** The failed checks for the output channel, one line each. */
export function writeFailedChecks(output: vscode.OutputChannel, run: Pick<CheckedRun, 'failing' | 'moved'>): void {
  for (const line of failedCheckLines(run)) output.appendLine(`    ${line}`);
}

/**
 * A result's notification with the ways into it: the first failing live trial in the
 * timeline, that trial beside a passing one of the same scenario, or the failing
 * simulated seed replayed; the output channel for the rest. Not awaited by callers.
 */
export async function offerResult(message: string, warn: boolean, run: CheckedRun, timeline: TimelinePanel, output: vscode.OutputChannel): Promise<void> {
  const first = run.moved[0] ?? run.failing[0];
  const trial = first?.trial;
  const passing = trial && run.runs.find((r) => r.scenario === first.scenario)?.trials.find((t) => t.verdict === 'pass');
  const actions = [
    ...(trial ? [OPEN_FAILING] : first?.seed !== undefined ? [REPLAY] : []),
    ...(passing ? [COMPARE] : []),
    OUTPUT,
  ];
  const choice = await (warn ? vscode.window.showWarningMessage(message, ...actions) : vscode.window.showInformationMessage(message, ...actions));
  if (choice === OPEN_FAILING && trial) await timeline.showTrial(path.dirname(trial.eventsFile));
  else if (choice === COMPARE && trial && passing) await timeline.showTrial(path.dirname(trial.eventsFile), path.dirname(passing.eventsFile));
  else if (choice === REPLAY && first?.seed !== undefined) await vscode.commands.executeCommand(COMMANDS.replaySeed.id, { seed: first.seed, scenario: first.scenario });
  else if (choice === OUTPUT) output.show(true);
  if (choice === OPEN_FAILING || choice === COMPARE || choice === REPLAY) completeStep('failingTrialOpened');
}
