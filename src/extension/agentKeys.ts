import type * as vscode from 'vscode';
import type { KeyStatus } from '../core/agent/panel-protocol';
import { addSecret } from '../core/secrets';

const SECRET_ID = 'ddbench.agent.apiKey';

/**
 * The agent's API key: in SecretStorage (the OS keyring), else the environment
 * variable the panel names. Where SecretStorage fails (headless Linux without a
 * keyring) a key typed in is kept in memory for this window only, and the panel says so.
 * The key is handed to the agent run and never written to any file or log.
 */
export class AgentKeys {
  private sessionKey: string | undefined;
  private storageProblem: string | undefined;

  constructor(private readonly secrets: vscode.SecretStorage) {}

  /** The key, also registered for redaction (core/secrets.ts) wherever it came from. */
  async resolve(envVar: string): Promise<string | undefined> {
    const key = (await this.stored()) ?? this.sessionKey ?? (process.env[envVar] || undefined);
    addSecret(key);
    return key;
  }

  async status(envVar: string): Promise<KeyStatus> {
    if (await this.stored()) return { source: 'secret-storage', message: 'A key is stored in VS Code SecretStorage (the OS keyring).' };
    if (this.sessionKey) {
      return {
        source: 'session',
        message: `SecretStorage is not available here (${this.storageProblem ?? 'no OS keyring'}), so the key is kept in memory for this window only. To keep one, set ${envVar} in the environment VS Code starts in.`,
      };
    }
    if (process.env[envVar]) return { source: 'env', message: `Using the key in the environment variable ${envVar}.` };
    return { source: 'none', message: `No key: none stored, and ${envVar} is not set. Fine for a local server that needs none (Ollama, llama.cpp, vLLM without --api-key).` };
  }

  async store(key: string): Promise<void> {
    try {
      await this.secrets.store(SECRET_ID, key);
      this.sessionKey = undefined;
      this.storageProblem = undefined;
    } catch (err) {
      this.sessionKey = key;
      this.storageProblem = err instanceof Error ? err.message : String(err);
    }
  }

  async clear(): Promise<void> {
    this.sessionKey = undefined;
    try {
      await this.secrets.delete(SECRET_ID);
    } catch {
      // Nothing was stored where storage does not work.
    }
  }

  private async stored(): Promise<string | undefined> {
    try {
      return (await this.secrets.get(SECRET_ID)) || undefined;
    } catch (err) {
      this.storageProblem = err instanceof Error ? err.message : String(err);
      return undefined;
    }
  }
}
