/**
 * The scripted stand-in for a capable model in runs over the whole bug set: a reply
 * function for the scripted OpenAI-compatible server that knows every bug's reference
 * fix (it reads the bug set, which the agent under test cannot) and walks the loop a
 * model would: list the files, look at the evidence when the condition gives it, read
 * the code the fix touches, edit it with search/replace blocks, and submit. Whether the
 * harness then verifies the fix is what the tests check.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePatch, type StructuredPatch } from 'diff';
import { findSystem, type Catalog } from '../../src/core/bugs/catalog';
import type { RecordedRequest, ScriptedReply } from './scripted-openai-server';

export const ORACLE_MODEL = 'scripted-oracle';

interface Plan {
  bugId: string;
  steps: ScriptedReply[];
}

/** One reply per chat request: the next step of the plan of the bug the request's issue names. */
export function oracleReplies(catalog: Catalog): (req: RecordedRequest) => ScriptedReply {
  const issues = catalog.bugs.map((b) => ({ bug: b, issue: fs.readFileSync(path.join(b.dir, 'ISSUE.md'), 'utf8').trim() }));
  return (req) => {
    const first = req.messages.find((m) => m.role === 'user');
    const text = typeof first?.content === 'string' ? first.content : '';
    const match = issues.find((i) => text.includes(i.issue));
    if (!match) throw new Error('the first user message carries no ISSUE.md of the bug set');
    const tools = new Set((req.tools ?? []).map((t) => t.function.name));
    const nodes = match.bug.manifest.context.capture.nodes ?? findSystem(catalog, match.bug.system).manifest.nodes;
    const plan = planFor(match.bug.id, nodes, fs.readFileSync(path.join(match.bug.dir, 'bug.patch'), 'utf8'), tools.has('node_logs'));
    const turn = req.messages.filter((m) => m.role === 'assistant').length;
    return plan.steps[turn] ?? { content: `The fix for ${plan.bugId} was submitted.` };
  };
}

function planFor(bugId: string, nodes: readonly string[], bugPatch: string, evidence: boolean): Plan {
  // bug.patch turns the fixed code into the buggy one, so the fix is each hunk read backwards.
  const files = parsePatch(bugPatch).filter((f) => f.oldFileName);
  const steps: ScriptedReply[] = [call('list_files', {})];
  if (evidence) {
    const node = nodes[0];
    if (node) steps.push(call('node_logs', { node, min_level: 'info' }), call('node_state', { node }));
    steps.push(call('timeline', { kinds: ['check', 'fault'] }));
  }
  for (const f of files) {
    const file = stripPrefix(f.oldFileName ?? '');
    const first = f.hunks[0];
    const last = f.hunks.at(-1);
    if (first && last) steps.push(call('read_file', { path: file, start_line: first.newStart, end_line: last.newStart + last.newLines }));
  }
  for (const f of files) steps.push(call('propose_edit', { path: stripPrefix(f.oldFileName ?? ''), edits: reverseHunks(f) }));
  steps.push(call('submit', { explanation: `the reference fix of ${bugId}` }));
  return { bugId, steps };
}

/** Search/replace blocks that undo the patch's hunks: search the new side, put back the old. */
function reverseHunks(f: StructuredPatch): { search: string; replace: string }[] {
  return f.hunks.map((h) => {
    const side = (keep: string) => h.lines.filter((l) => l[0] === ' ' || l[0] === keep).map((l) => l.slice(1));
    return { search: side('+').join('\n'), replace: side('-').join('\n') };
  });
}

function stripPrefix(name: string): string {
  return name.replace(/^[ab]\//, '');
}

function call(name: string, args: Record<string, unknown>): ScriptedReply {
  return { content: '', toolCalls: [{ name, arguments: args }] };
}
