import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { echo } from '../echo';
import type { ToolCall } from './llm';
import type { Tool } from './tools';

/**
 * The two ways a model can act: tool calls (the endpoint's function calling), or the
 * text protocol for endpoints without it, where a reply holds one fenced block whose
 * info string is the tool name. Both end in the same checked action.
 */

export interface Action {
  /** The tool call's id (text actions get one made up). */
  id: string;
  tool: Tool;
  args: unknown;
  /** The arguments as the model wrote them, for the record. */
  raw: string;
}

/** A tool call that could not become an action; the message goes back to the model. */
export interface BadCall {
  id: string;
  name: string;
  raw: string;
  error: string;
}

function schemaOf(tool: Tool): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.args, { io: 'input' }) as Record<string, unknown>;
  return schema;
}

export function apiTools(tools: readonly Tool[]): ChatCompletionTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: schemaOf(t) } }));
}

/** Checks parsed arguments against the tool's schema, saying which fields are wrong. */
function check(tool: Tool, value: unknown, id: string, raw: string): Action | BadCall {
  const parsed = tool.args.safeParse(value);
  if (parsed.success) return { id, tool, args: parsed.data, raw };
  const problems = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`).join('; ');
  return { id, name: tool.name, raw, error: `arguments for ${tool.name} do not fit its schema (${problems}); the schema is ${JSON.stringify(schemaOf(tool))}` };
}

export function isAction(a: Action | BadCall): a is Action {
  return 'tool' in a;
}

export function actionFromToolCall(call: ToolCall, tools: readonly Tool[]): Action | BadCall {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return { id: call.id, name: call.name, raw: call.arguments, error: `there is no tool "${call.name}"; the tools are ${tools.map((t) => t.name).join(', ')}` };
  let value: unknown;
  try {
    value = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (err) {
    return { id: call.id, name: call.name, raw: call.arguments, error: `the arguments of ${call.name} are not valid JSON (${echo((err as Error).message, 300)}); send them again as one JSON object` };
  }
  return check(tool, value, call.id, call.arguments);
}

/** A fenced block of a reply: ```name on its own line, the body, then ``` on its own line. */
interface Fenced {
  name: string;
  body: string;
}

const OPENING = /^```([A-Za-z_]+)[ \t]*$/;
const CLOSING = /^```[ \t]*\r?$/;

/**
 * The reply's fenced blocks, in one pass over its lines: a reply is the model's (or a
 * hostile endpoint's) text, so no step may rescan it (a lazy fence regex did, and a
 * 1.3 MB reply of unclosed fences blocked the event loop for minutes). Each line is
 * tested once against anchored patterns without nested repetition.
 */
function fencedBlocks(text: string): Fenced[] {
  const blocks: Fenced[] = [];
  let open: { name: string; bodyStart: number } | undefined;
  for (let start = 0; start <= text.length; ) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    if (text.startsWith('```', start)) {
      const line = text.slice(start, end);
      if (open && CLOSING.test(line)) {
        blocks.push({ name: open.name, body: text.slice(open.bodyStart, start) });
        open = undefined;
      } else if (!open && nl >= 0) {
        const name = OPENING.exec(line)?.[1];
        if (name) open = { name, bodyStart: nl + 1 };
      }
    }
    if (nl < 0) break;
    start = nl + 1;
  }
  return blocks;
}

/**
 * The action of a text-protocol reply: the one fenced block named after a tool.
 * Undefined when the reply has none (other code blocks do not count).
 */
export function actionFromText(content: string, tools: readonly Tool[], id: string): Action | BadCall | undefined {
  const blocks = fencedBlocks(content).filter((b) => tools.some((t) => t.name === b.name));
  if (blocks.length === 0) return undefined;
  const { name, body } = blocks[0]!;
  if (blocks.length > 1) return { id, name, raw: body, error: `a reply may hold one action, and this one holds ${blocks.length} (${blocks.map((b) => b.name).join(', ')}); send them one at a time` };
  const tool = tools.find((t) => t.name === name)!;
  if (tool.textForm) return check(tool, tool.textForm.parse(body), id, body);
  let value: unknown;
  try {
    value = body.trim() === '' ? {} : JSON.parse(body);
  } catch (err) {
    return { id, name, raw: body, error: `the body of the ${name} block is not valid JSON (${echo((err as Error).message, 300)})` };
  }
  return check(tool, value, id, body);
}

/** How the text protocol is explained to the model, with each tool's arguments. */
export function textProtocolPrompt(tools: readonly Tool[]): string {
  const lines = [
    'Act with exactly one action per reply: think briefly, then end your reply with one fenced block whose info string is the tool name and whose body is the arguments as a JSON object. For example:',
    '```read_file\n{"path": "src/server.js", "start_line": 1, "end_line": 80}\n```',
    'The result comes back in the next message. The tools:',
  ];
  for (const t of tools) {
    lines.push(`\n### ${t.name}\n${t.description}`);
    lines.push(t.textForm ? `Body: ${t.textForm.describe}` : `Body (JSON): ${JSON.stringify(schemaOf(t))}`);
  }
  return lines.join('\n');
}
