import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadCatalog } from '../../src/core/bugs/catalog';
import { openWorkspace } from '../../src/core/bugs/workspace';
import type { RecordedRequest, ScriptedAnswer } from './scripted-openai-server';

/** The agent tests' own bug set: a one-node counter whose trials take a second or two. */
export const AGENT_BUGSET = path.resolve(__dirname, '..', 'fixtures', 'agent-bugset');
export const COUNTER_BUG = 'counter-double-add';
export const KEY = 'sk-test-agent-key-NEVER-WRITTEN-9f8e7d';

/** A fresh workspace of `bugId` from `bugSet`, in its own temp folder (removed by dispose). */
export async function openTestWorkspace(bugSet: string, bugId: string): Promise<{ dir: string; dispose(): void }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ddbench-agent-test-'));
  const dir = await openWorkspace(await loadCatalog(bugSet), bugId, path.join(root, 'ws'));
  return { dir, dispose: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** A reply calling one tool. */
export function call(name: string, args: Record<string, unknown> | string, content = ''): ScriptedAnswer {
  return { content, toolCalls: [{ name, arguments: args }] };
}

/** A text-protocol reply: a thought, then one fenced action. */
export function textAction(name: string, body: string, thought = 'Next step.'): ScriptedAnswer {
  return { content: `${thought}\n\n\`\`\`${name}\n${body}\n\`\`\`` };
}

/** The text of the last message the model was sent (a tool result or a user message). */
export function lastMessage(req: Pick<RecordedRequest, 'messages'>): string {
  const m = req.messages.at(-1);
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
}

/** Every file under `dir`, concatenated (to scan a run's output for the key). */
export function allText(dir: string): string {
  let out = '';
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out += fs.readFileSync(p, 'latin1');
    }
  };
  walk(dir);
  return out;
}
