import * as vscode from 'vscode';
import { UserError } from '../core/errors';
import { SettingsError } from './settings';

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Shows a command's failure. Errors meant for users (UserError, bad settings) are shown
 * as they are; anything else is a defect, so its stack goes to the output channel.
 */
export function reportError(output: vscode.OutputChannel, what: string, err: unknown): void {
  if (err instanceof UserError || err instanceof SettingsError) {
    void vscode.window.showErrorMessage(`DDBench: ${err.message}`);
    return;
  }
  output.appendLine(`[error] ${what}: ${err instanceof Error && err.stack ? err.stack : String(err)}`);
  void vscode.window.showErrorMessage(`DDBench: ${what} failed: ${errorMessage(err)}`, 'Show Output').then((choice) => {
    if (choice) output.show(true);
  });
}
