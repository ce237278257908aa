import * as vscode from 'vscode';
import { redact } from '../core/secrets';

/** The DDBench output channel, whose every line passes the one redaction step (core/secrets.ts). */
export function createRedactingOutputChannel(name: string): vscode.OutputChannel {
  const channel = vscode.window.createOutputChannel(name);
  return new Proxy(channel, {
    get(target, prop, receiver) {
      if (prop === 'append' || prop === 'appendLine' || prop === 'replace') return (text: string) => target[prop](redact(text));
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
