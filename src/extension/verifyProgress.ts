import * as vscode from 'vscode';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { seedsProgress, trialsProgress, type SimPhase } from '../core/verify/format';
import { verifyFix, type VerifyResult } from '../core/verify/verify';
import type { DDBenchSettings } from './settings';

/**
 * Verifies the workspace's changes (as `ddbench verify` does) under a cancellable
 * progress notification that counts the live trials, then the simulated seeds of each
 * phase. Cancelling aborts `abort`; the caller checks it, as a cancelled run has no verdict.
 */
export function verifyWithProgress(ws: WorkspaceInfo, s: DDBenchSettings, abort: AbortController): Thenable<VerifyResult> {
  const failed: { live: number; seeds: number; phase?: SimPhase } = { live: 0, seeds: 0 };
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `DDBench: verifying your fix for ${ws.bugId}`, cancellable: true }, (progress, token) => {
    token.onCancellationRequested(() => abort.abort());
    progress.report({ message: 'starting the reproducer on a copy of your code' });
    return verifyFix(ws.dir, { kind: 'workspace' }, {
      trials: s.trials,
      concurrency: s.concurrency,
      backend: s.backend,
      signal: abort.signal,
      onTrial: (t, done, total) => {
        if (t.verdict !== 'pass') failed.live++;
        progress.report({ message: trialsProgress(done, total, failed.live) });
      },
      onSimSeed: (phase, r, done, total) => {
        // The buggy code's seeds are measured first, then the fix's: each is counted apart.
        if (phase !== failed.phase) Object.assign(failed, { phase, seeds: 0 });
        if (r.verdict !== 'pass') failed.seeds++;
        progress.report({ message: seedsProgress(phase, done, total, failed.seeds) });
      },
    });
  });
}
