import type { z } from 'zod';
import type { EvidenceBudget } from '../budget';
import type { AgentScratch } from '../scratch';
import type { EvidenceRuns } from './evidence-runs';

export type Condition = 'symptom-only' | 'context-augmented';

/** What a tool reports back: text for the model and, for submit, whether the run is over. */
export interface ToolOutcome {
  output: string;
  /** Structured facts for the trajectory (verdicts, files changed), never sent to the model. */
  data?: Record<string, unknown>;
  done?: boolean;
}

export interface ToolContext {
  scratch: AgentScratch;
  budget: EvidenceBudget;
  /** Evidence runs (the context capture and the agent's reproducer runs); context-augmented only. */
  evidence: EvidenceRuns | undefined;
  /** Verifies the scratch copy's changes as a fix (the harness owns attempts and limits). */
  submit(explanation: string): Promise<ToolOutcome>;
  signal: AbortSignal;
}

export interface Tool<A = unknown> {
  name: string;
  description: string;
  args: z.ZodType<A>;
  /** Offered only in the context-augmented condition. */
  contextOnly?: boolean;
  /**
   * How the text protocol writes this tool's arguments when JSON does not suit them
   * (code inside JSON strings is where models make escaping mistakes).
   */
  textForm?: { describe: string; parse(body: string): unknown };
  run(args: A, ctx: ToolContext): Promise<ToolOutcome>;
}

/** Identity helper that keeps each tool's argument type while listing tools together. */
export function defineTool<A>(tool: Tool<A>): Tool<A> {
  return tool;
}

/** Most tool output is cut to this many characters (head and tail kept). */
export const MAX_OUTPUT_CHARS = 10_000;
