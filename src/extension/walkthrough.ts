import * as vscode from 'vscode';
import { WALKTHROUGH_KEYS, type WalkthroughStep } from './commands';

/** Marks a walkthrough step done: VS Code completes the step whose `onContext` key this sets (and remembers it). */
export function completeStep(step: WalkthroughStep): void {
  void vscode.commands.executeCommand('setContext', WALKTHROUGH_KEYS[step], true);
}
