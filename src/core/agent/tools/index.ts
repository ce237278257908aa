import { z } from 'zod';
import { proposeEdit } from './edit';
import { happensBefore, nodeLogs, nodeState, runReproducer, timeline } from './evidence';
import { listFiles, readFile, search } from './files';
import { defineTool, type Condition, type Tool } from './types';

export const submit = defineTool({
  name: 'submit',
  description:
    "Submit your working copy's changes as the fix. The harness verifies them on a fresh copy of the bug's code (the reproducer over several trials, and the system's regression checks) " +
    'and tells you the verdict. Submit only when you believe the bug is fixed; attempts are limited.',
  args: z.strictObject({ explanation: z.string().default('').describe('one or two sentences: the cause and how the change fixes it') }),
  run: ({ explanation }, ctx) => ctx.submit(explanation),
});

const ALL: Tool[] = [listFiles, readFile, search, proposeEdit, nodeLogs, timeline, happensBefore, nodeState, runReproducer, submit] as Tool[];

/** The tools of a condition: the code tools always, the evidence tools only with context. */
export function toolsFor(condition: Condition): Tool[] {
  return ALL.filter((t) => condition === 'context-augmented' || !t.contextOnly);
}

export type { Condition, Tool, ToolContext, ToolOutcome } from './types';
