import { z } from 'zod';
import { causality } from '../../events/causality';
import { EventKind, Level } from '../../events/event';
import { compilePattern, type Pattern } from '../../events/pattern';
import { queryEvents, type EventQuery } from '../../events/query';
import type { EventStore } from '../../events/store';
import { formatEvent, trialEvidence } from '../../repro/evidence';
import { ToolError } from '../scratch';
import { eventLine, trialHeadline, type EvidenceRuns } from './evidence-runs';
import { defineTool, MAX_OUTPUT_CHARS, type ToolContext } from './types';
import { echo } from '../../echo';

const TrialArg = z.string().optional().describe("which trial: 'context' (the captured failing run, the default) or an id run_reproducer printed, such as run1/0");
const MAX_TRIALS_PER_RUN = 5;

function runsOf(ctx: ToolContext): EvidenceRuns {
  if (!ctx.evidence) throw new ToolError('evidence tools are not available in this condition');
  return ctx.evidence;
}

/** Text arguments are substrings; /…/ makes them a regular expression (linear-time, RE2 syntax). */
function textQuery(text: string | undefined): string | Pattern | undefined {
  if (text === undefined) return undefined;
  const m = /^\/(.+)\/([a-z]*)$/.exec(text);
  if (!m) return text;
  try {
    return compilePattern(m[1]!, m[2]);
  } catch (err) {
    throw new ToolError(`text: ${echo((err as Error).message, 300)}`);
  }
}

/** The matching events, first `limit` (or last, with `tail`), with a line saying what was left out. */
function listEvents(store: EventStore, q: EventQuery, limit: number, tail: boolean): string {
  const all = queryEvents(store, { ...q, limit: undefined });
  if (all.length === 0) return 'no events match';
  const shown = tail ? all.slice(-limit) : all.slice(0, limit);
  const lines = Array.from(shown, (i) => eventLine(store, i));
  if (all.length <= limit) return `${all.length} events:\n${lines.join('\n')}`;
  const next = tail ? all[all.length - limit - 1]! : all[limit]!;
  const cut = `[${all.length - limit} more ${tail ? 'earlier' : 'later'} events; the next ${tail ? 'before' : 'after'} these is at ${(store.ts[next] / 1000).toFixed(0)} ms — narrow from_ms/to_ms, nodes or text to see them]`;
  return tail ? `${all.length} events match, the last ${limit}:\n${cut}\n${lines.join('\n')}` : `${all.length} events match, the first ${limit}:\n${lines.join('\n')}\n${cut}`;
}

const msToUs = (ms: number | undefined) => (ms === undefined ? undefined : ms * 1000);

export const nodeLogs = defineTool({
  name: 'node_logs',
  contextOnly: true,
  description: "A node's log lines from a trial (time in seconds since the trial started), optionally filtered by time, level or text.",
  args: z.strictObject({
    node: z.string().min(1),
    trial: TrialArg,
    from_ms: z.number().min(0).optional(),
    to_ms: z.number().min(0).optional(),
    min_level: Level.optional(),
    text: z.string().optional().describe('substring, or /regex/ (RE2 syntax: no lookaround or backreferences) to match messages and fields'),
    limit: z.number().int().min(1).max(200).default(80),
    tail: z.boolean().default(false).describe('show the last lines instead of the first'),
  }),
  async run(a, ctx) {
    const store = await runsOf(ctx).store(a.trial);
    if (store.nodeCode(a.node) < 0) throw new ToolError(`no node "${echo(a.node)}" in this trial; nodes: ${store.nodes.join(', ')}`);
    const q: EventQuery = { nodes: [a.node], kinds: ['log'], from: msToUs(a.from_ms), to: msToUs(a.to_ms), minLevel: a.min_level, text: textQuery(a.text) };
    return { output: ctx.budget.take(listEvents(store, q, a.limit, a.tail), MAX_OUTPUT_CHARS) };
  },
});

export const timeline = defineTool({
  name: 'timeline',
  contextOnly: true,
  description:
    'Query the merged timeline of a trial: logs, messages (send/recv with peer), faults, checks and process events of every node, in time order. ' +
    'Each line starts with the event id (#id) that happens_before takes.',
  args: z.strictObject({
    trial: TrialArg,
    nodes: z.array(z.string()).optional(),
    kinds: z.array(EventKind).optional(),
    text: z.string().optional().describe('substring, or /regex/ (RE2 syntax: no lookaround or backreferences) to match messages and fields'),
    from_ms: z.number().min(0).optional(),
    to_ms: z.number().min(0).optional(),
    limit: z.number().int().min(1).max(200).default(60),
    tail: z.boolean().default(false),
  }),
  async run(a, ctx) {
    const store = await runsOf(ctx).store(a.trial);
    const q: EventQuery = { nodes: a.nodes, kinds: a.kinds, text: textQuery(a.text), from: msToUs(a.from_ms), to: msToUs(a.to_ms) };
    return { output: ctx.budget.take(listEvents(store, q, a.limit, a.tail), MAX_OUTPUT_CHARS) };
  },
});

export const happensBefore = defineTool({
  name: 'happens_before',
  contextOnly: true,
  description:
    "The causal history of one event (by its #id): on each node, the last event that happened before it and the first that happened after it, the message that delivered it, and how many events were concurrent with it.",
  args: z.strictObject({ event: z.string().min(1).describe('event id, with or without #'), trial: TrialArg }),
  async run(a, ctx) {
    const store = await runsOf(ctx).store(a.trial);
    const i = store.findById(a.event.replace(/^#/, ''));
    if (i < 0) throw new ToolError(`no event #${echo(a.event.replace(/^#/, ''))} in this trial; timeline and node_logs print event ids`);
    const hb = causality(store);
    const past = hb.past(i);
    const future = hb.future(i);
    const lines = [`event ${eventLine(store, i)}`];
    const send = store.sendOf(i);
    if (send >= 0) lines.push(`delivered by ${eventLine(store, send)}`);
    for (const r of store.receivesOf(i)) lines.push(`received as ${eventLine(store, r)}`);
    lines.push(`\ncausal past: ${past.size} events; the last on each node:`);
    for (const r of past.ranges) lines.push(`  ${eventLine(store, store.lanes[r.node]![r.to - 1]!)}`);
    lines.push(`causal future: ${future.size} events; the first on each node:`);
    for (const r of future.ranges) lines.push(`  ${eventLine(store, store.lanes[r.node]![r.from]!)}`);
    const concurrent = store.size - past.size - future.size - 1;
    lines.push(`concurrent with it (neither before nor after): ${concurrent} events`);
    if (hb.issueCount > 0) lines.push(`note: ${hb.issueCount} clock inconsistencies in this trial, e.g. ${hb.issues[0]?.message ?? ''}`);
    return { output: ctx.budget.take(lines.join('\n'), MAX_OUTPUT_CHARS) };
  },
});

export const nodeState = defineTool({
  name: 'node_state',
  contextOnly: true,
  description: "A node's runtime state (its debug-state endpoint) when the trial ended.",
  args: z.strictObject({ node: z.string().min(1), trial: TrialArg }),
  async run(a, ctx) {
    return { output: ctx.budget.take(runsOf(ctx).state(a.node, a.trial), MAX_OUTPUT_CHARS) };
  },
});

export const runReproducer = defineTool({
  name: 'run_reproducer',
  contextOnly: true,
  description:
    "Run the bug's reproducer on your working copy (your edits included) and get each trial's verdict and the evidence of the first failure. " +
    'Trials are new ids for node_logs, timeline, happens_before and node_state. This is a check, not a submission.',
  args: z.strictObject({ trials: z.number().int().min(1).max(MAX_TRIALS_PER_RUN).default(1) }),
  async run(a, ctx) {
    const trials = await runsOf(ctx).reproduce(ctx.scratch.root, a.trials, ctx.signal);
    const lines = trials.map(trialHeadline);
    const failed = trials.find((t) => t.trial.verdict !== 'pass');
    if (failed) {
      const ev = await trialEvidence(failed.trial);
      lines.push(`\nevidence from ${failed.id}: ${ev.headline}`, ...ev.events.map((e) => `  #${e.id} ${formatEvent(e).trim()}`), `(${ev.totalEvents} events in all)`);
    }
    return {
      output: ctx.budget.take(lines.join('\n'), MAX_OUTPUT_CHARS),
      data: { trials: trials.map((t) => ({ id: t.id, verdict: t.trial.verdict, seed: t.trial.seed })) },
    };
  },
});
