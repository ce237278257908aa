import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { changedFiles } from '../patch/unified';
import { addSecret, redact } from '../secrets';
import { loadCatalog, type Catalog } from '../bugs/catalog';
import { resolveWorkspace, type ResolvedWorkspace } from '../bugs/workspace';
import { newRunId, runsDir } from '../bugs/runs';
import { backendOptions, type BackendOptions } from '../cluster';
import { runScenarioTrials } from '../repro/trials';
import { verifyFix, type CheckOptions, type VerifyResult } from '../verify/verify';
import { estimateTokens, EvidenceBudget } from './budget';
import { AgentSettings, type AgentSettingsInput } from './config';
import { captureFailure, contextBundle } from './context-bundle';
import { wasInterrupted } from '../interrupt';
import type { AgentEvent, AgentResult, Attempt, RanProtocol, StopReason, Totals } from './events';
import { ChatClient, LlmError, type ChatModel, type ChatReply } from './llm';
import { costOf, DEFAULT_PRICES, priceOf, type Price } from './pricing';
import { systemPrompt, taskMessage } from './prompts';
import { actionFromText, actionFromToolCall, apiTools, isAction, textProtocolPrompt, type Action, type BadCall } from './protocol';
import { AgentScratch, ToolError } from './scratch';
import { toolsFor, type Tool, type ToolContext, type ToolOutcome } from './tools';
import { EvidenceRuns, type EvidenceRunner } from './tools/evidence-runs';
import { TrajectoryWriter } from './trajectory';
import { attemptOf, verdictText } from './verdict';

/** Ids given to text-protocol actions, which have no tool-call id. */
const TEXT_ACTION = 'text_';

export interface AgentRunOptions {
  /** A bug workspace (made by `ddbench open` or Open Bug). Never written to but for its `.ddbench/runs`. */
  workspace: string;
  settings: AgentSettingsInput;
  /** Passed to the endpoint only; scrubbed from the trajectory should it ever reach a message. */
  apiKey?: string;
  signal?: AbortSignal;
  onEvent?: (e: AgentEvent) => void;
}

/** Checks a patch file as a fix of the workspace's bug. */
export type Verifier = (ws: ResolvedWorkspace, patchFile: string, opts: CheckOptions) => Promise<VerifyResult>;

/**
 * What a run works with besides its settings (mini-swe-agent style): each is the real
 * one unless given, so tests of the loop's own logic can hand it fakes.
 */
export interface AgentCollaborators {
  /** Default: the OpenAI-compatible endpoint of the settings, with the run's key. */
  model: ChatModel;
  /** Default: verifyFix, live trials and simulated seeds on a fresh copy of the bug's code. */
  verifier: Verifier;
  /** Where the context condition's evidence comes from. Default: live trials. */
  evidence: EvidenceRunner;
  /** The bug set of the workspace's bug. Default: the configured one (DDBENCH_BUGS, else the package's). */
  catalog: Catalog;
}

const verifyPatch: Verifier = (ws, file, opts) => verifyFix(ws.info.dir, { kind: 'patch', file }, { ...opts, catalog: ws.catalog });

/**
 * Runs the agent on a bug workspace until a submitted patch is verified or a limit is
 * reached. The model edits a private copy of the workspace; each submission is
 * verified on a fresh copy of the bug's code and the verdict goes back to the model.
 */
export async function runAgent(opts: AgentRunOptions, given: Partial<AgentCollaborators> = {}): Promise<AgentResult> {
  const settings = AgentSettings.parse(opts.settings);
  // The key goes to the HTTP client only; whatever else meets it (an echo in an error, a log) is redacted.
  addSecret(opts.apiKey);
  const ws = await resolveWorkspace(opts.workspace, given.catalog ?? (await loadCatalog()));
  const collaborators: Collaborators = {
    model: given.model ?? new ChatClient({ ...settings, apiKey: opts.apiKey }),
    verifier: given.verifier ?? verifyPatch,
    evidence: given.evidence ?? runScenarioTrials,
  };
  const runDir = path.join(runsDir(ws.info.dir), `agent-${newRunId()}`);
  fs.mkdirSync(runDir, { recursive: true });
  const scratch = AgentScratch.create(ws.info.dir, ws.system, ws.bug, settings.startFrom);
  for (const link of scratch.skippedLinks) opts.onEvent?.({ type: 'notice', level: 'warn', text: `${link.path}: a symbolic link to ${link.target}, outside the workspace; left out of the agent's copy` });
  try {
    return await new AgentSession(ws, settings, runDir, scratch, opts, collaborators).run();
  } finally {
    scratch.dispose();
  }
}

/** The collaborators a session uses once the workspace is resolved. */
type Collaborators = Omit<AgentCollaborators, 'catalog'>;

class AgentSession {
  private readonly messages: ChatCompletionMessageParam[] = [];
  private readonly attempts: Attempt[] = [];
  private readonly tools: Tool[];
  private readonly trajectory: TrajectoryWriter;
  private readonly budget: EvidenceBudget;
  private readonly evidence: EvidenceRuns | undefined;
  private readonly price: Price | undefined;
  private readonly signal: AbortSignal;
  /**
   * The wall limit, held by the session and fired by a referenced timer the run clears
   * when it ends: an AbortSignal.timeout inside AbortSignal.any is held only weakly, so
   * it was garbage-collected and the limit never fired.
   */
  private readonly wall = new AbortController();
  private readonly started = Date.now();
  private readonly totals: Totals;
  /** Where verifications and evidence runs put the nodes. */
  private readonly backend: BackendOptions;
  private protocol: RanProtocol;
  private formatErrors = 0;

  constructor(
    private readonly ws: ResolvedWorkspace,
    private readonly settings: AgentSettings,
    private readonly runDir: string,
    private readonly scratch: AgentScratch,
    private readonly opts: AgentRunOptions,
    private readonly collaborators: Collaborators,
  ) {
    this.tools = toolsFor(settings.condition);
    this.backend = backendOptions({ backend: settings.backend, image: settings.dockerImage });
    this.trajectory = new TrajectoryWriter(path.join(runDir, 'trajectory.jsonl'));
    this.budget = new EvidenceBudget(settings.evidenceBudgetTokens);
    this.evidence = settings.condition === 'context-augmented' ? new EvidenceRuns(ws.system, ws.bug.manifest.reproducer.scenario, runDir, collaborators.evidence, this.backend) : undefined;
    this.price = priceOf(settings.model, { ...DEFAULT_PRICES, ...settings.prices });
    this.signal = AbortSignal.any([opts.signal ?? new AbortController().signal, this.wall.signal]);
    this.protocol = settings.protocol === 'text' ? 'text' : 'tools';
    const t: Totals = { steps: 0, attempts: 0, promptTokens: 0, completionTokens: 0, tokens: 0, tokensEstimated: false, costUsd: 0, priced: this.price !== undefined, evidenceTokens: 0, wallMs: 0 };
    this.totals = t;
  }

  async run(): Promise<AgentResult> {
    const s = this.settings;
    this.trajectory.write({ type: 'start', time: new Date(this.started).toISOString(), bugId: this.ws.bug.id, workspace: this.ws.info.dir, settings: s, tools: this.tools.map((t) => t.name) });
    this.emit({ type: 'started', bugId: this.ws.bug.id, model: s.model, condition: s.condition, trajectory: this.trajectory.file });
    const wallTimer = setTimeout(() => this.wall.abort(new Error(`the time limit of ${s.limits.maxWallMs} ms was reached`)), s.limits.maxWallMs - (Date.now() - this.started));
    try {
      await this.begin();
      for (;;) {
        const limit = this.limitReached();
        if (limit) return this.finish(limit);
        const actions = this.actionsOf(await this.ask());
        for (const action of actions) {
          const outcome = await this.act(action);
          if (outcome?.done) return this.finish('verified');
        }
        if (this.attempts.length >= s.limits.maxAttempts) return this.finish('attempt-limit');
        if (this.formatErrors >= s.limits.maxFormatErrors) return this.finish('format-errors');
      }
    } catch (err) {
      if (this.signal.aborted) return this.finish(this.opts.signal?.aborted ? (wasInterrupted(this.opts.signal) ? 'interrupted' : 'stopped') : 'time-limit');
      return this.finish('error', err instanceof Error ? err.message : String(err), err instanceof LlmError ? err.kind : undefined);
    } finally {
      clearTimeout(wallTimer);
    }
  }

  /** The system prompt, the issue and, with context, the captured failure. */
  private async begin(): Promise<void> {
    this.say({ role: 'system', content: this.systemText() });
    let bundle: string | undefined;
    if (this.evidence) {
      this.emit({ type: 'notice', level: 'info', text: 'capturing the failure on the buggy code for the context bundle (a reproducer run) …' });
      bundle = await contextBundle(this.ws, await captureFailure(this.ws, this.collaborators.evidence, this.signal, this.backend), this.evidence, this.budget);
      this.emit({ type: 'context', text: bundle });
    }
    this.say({ role: 'user', content: taskMessage(this.scratch.read('ISSUE.md'), bundle) });
  }

  private limitReached(): StopReason | undefined {
    const { limits } = this.settings;
    if (this.totals.steps >= limits.maxSteps) return 'step-limit';
    if (this.totals.tokens >= limits.maxTokens) return 'token-limit';
    if (this.price && this.totals.costUsd >= limits.maxCostUsd) return 'cost-limit';
    return undefined;
  }

  /** One model turn, streamed; falls back to the text protocol when the endpoint refuses tools. */
  private async ask(): Promise<ChatReply> {
    const step = this.totals.steps + 1;
    const sent = Date.now();
    let reply: ChatReply;
    try {
      reply = await this.collaborators.model.complete(this.messages, this.protocol === 'tools' ? apiTools(this.tools) : undefined, {
        signal: this.signal,
        onDelta: (delta) => this.emit({ type: 'delta', step, delta }),
        onRetry: (r) => {
          this.trajectory.write({ type: 'retry', attempt: r.attempt, delayMs: Math.round(r.delayMs), kind: r.error.kind, message: r.error.message });
          this.emit({ type: 'notice', level: 'warn', text: `${r.error.message}; retry ${r.attempt} in ${(r.delayMs / 1000).toFixed(1)} s` });
        },
      });
    } catch (err) {
      if (err instanceof LlmError && err.kind === 'tools-unsupported' && this.settings.protocol === 'auto' && this.protocol === 'tools') {
        this.switchProtocol(err.message);
        return this.ask();
      }
      throw err;
    }
    this.totals.steps = step;
    this.emit({ type: 'step', step });
    this.account(step, reply, Date.now() - sent);
    this.emit({ type: 'reply', step, content: reply.content });
    return reply;
  }

  /** The reply's actions; a reply without one is a format error, told to the model. */
  private actionsOf(reply: ChatReply): (Action | BadCall)[] {
    const calls = reply.toolCalls.map((c) => actionFromToolCall(c, this.tools));
    const textual = calls.length === 0 ? actionFromText(reply.content, this.tools, `${TEXT_ACTION}${this.totals.steps}`) : undefined;
    if (textual && this.protocol === 'tools' && this.settings.protocol === 'auto') this.switchProtocol('the model wrote its action as text instead of a tool call');
    const toolCalls = reply.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
    this.say({ role: 'assistant', content: reply.content, ...(toolCalls.length && { tool_calls: toolCalls }) }, reply.reasoning);
    if (calls.length > 0) return calls;
    if (textual && (this.protocol === 'text' || this.settings.protocol === 'auto')) return [textual];
    const why = reply.finishReason === 'length' ? 'Your reply was cut off at the length limit before it held an action; be shorter.' : 'Your reply holds no action.';
    const how = this.protocol === 'tools' ? 'Call one of the tools.' : 'End your reply with one fenced block named after a tool.';
    this.formatError(`${why} ${how} To finish, make your fix with propose_edit and call submit.`);
    return [];
  }

  /** Runs one action and gives its result to the model. */
  private async act(a: Action | BadCall): Promise<ToolOutcome | undefined> {
    const step = this.totals.steps;
    const name = isAction(a) ? a.tool.name : a.name;
    this.emit({ type: 'tool-start', step, id: a.id, name, args: a.raw });
    const started = Date.now();
    let outcome: ToolOutcome | undefined;
    let output: string;
    if (!isAction(a)) {
      output = `Error: ${a.error}`;
      this.formatErrors++;
      this.trajectory.write({ type: 'format-error', step, message: a.error });
    } else {
      this.formatErrors = 0;
      try {
        outcome = await a.tool.run(a.args, this.toolContext());
        output = outcome.output;
      } catch (err) {
        if (this.signal.aborted) throw err;
        output = `Error: ${err instanceof ToolError ? err.message : `the tool failed: ${err instanceof Error ? err.message : String(err)}`}`;
      }
    }
    const ms = Date.now() - started;
    const ok = outcome !== undefined;
    this.trajectory.write({ type: 'tool', step, id: a.id, name, arguments: a.raw, ok, output, ...(outcome?.data && { data: outcome.data }), ms });
    this.emit({ type: 'tool-end', step, id: a.id, name, ok, output, ms });
    // Tool calls are answered in kind (the API requires it); text actions by a user message.
    if (a.id.startsWith(TEXT_ACTION)) this.say({ role: 'user', content: `Result of ${name}:\n${output}` });
    else this.say({ role: 'tool', tool_call_id: a.id, content: output });
    this.totals.evidenceTokens = this.budget.spent;
    return outcome;
  }

  private toolContext(): ToolContext {
    return { scratch: this.scratch, budget: this.budget, evidence: this.evidence, signal: this.signal, submit: () => this.submit() };
  }

  /** Verifies the working copy's changes on a fresh copy of the bug's code. */
  private async submit(): Promise<ToolOutcome> {
    // Checked per call: a reply may hold several submits, and each would be verified.
    const max = this.settings.limits.maxAttempts;
    if (this.attempts.length >= max) throw new ToolError(`the attempt limit (${max}) is reached; this submission was not verified`);
    // Redacted at its source, so every copy (attempt and patch files, records, the verified tree) is.
    const patch = redact(this.scratch.diff());
    if (!patch.trim()) throw new ToolError('your working copy has no changes to src/ yet; make your fix with propose_edit first');
    const n = this.attempts.length + 1;
    this.emit({ type: 'verifying', attempt: n });
    const file = path.join(this.runDir, `attempt-${n}.diff`);
    fs.writeFileSync(file, patch);
    const files = this.scratch.contents(changedFiles(patch));
    const started = Date.now();
    let attempt: Attempt;
    let result: VerifyResult | undefined;
    try {
      result = await this.collaborators.verifier(this.ws, file, { trials: this.settings.trials, regressionTrials: this.settings.regressionTrials, backend: this.backend, signal: this.signal, requireIsolation: this.settings.requireIsolation });
      attempt = attemptOf(n, result, files, Date.now() - started);
    } catch (err) {
      if (this.signal.aborted) throw err;
      const error = err instanceof Error ? err.message : String(err);
      attempt = { attempt: n, patch, files, verified: false, summary: `not verified: ${error}`, regression: [], error, ms: Date.now() - started };
    }
    if (this.signal.aborted) throw new Error('stopped during verification');
    this.attempts.push(attempt);
    this.totals.attempts = this.attempts.length;
    this.trajectory.write({ type: 'attempt', attempt });
    this.emit({ type: 'attempt', attempt });
    const text = await verdictText(attempt, result, this.settings.limits.maxAttempts - n, this.settings.condition === 'context-augmented');
    return { output: text, data: { attempt: n, verified: attempt.verified }, done: attempt.verified };
  }

  private account(step: number, reply: ChatReply, ms: number): void {
    const estimated = reply.usage === undefined;
    const usage = reply.usage ?? {
      promptTokens: estimateTokens(JSON.stringify(this.messages)),
      completionTokens: estimateTokens(reply.content + reply.reasoning + reply.toolCalls.map((c) => c.name + c.arguments).join('')),
      cachedPromptTokens: 0,
    };
    const costUsd = costOf(usage, this.price);
    const t = this.totals;
    t.promptTokens += usage.promptTokens;
    t.completionTokens += usage.completionTokens;
    t.tokens = t.promptTokens + t.completionTokens;
    t.tokensEstimated ||= estimated;
    t.costUsd += costUsd;
    t.wallMs = Date.now() - this.started;
    this.trajectory.write({ type: 'usage', step, ...usage, estimated, costUsd, finishReason: reply.finishReason, ms });
    this.emit({ type: 'totals', totals: { ...t } });
  }

  private switchProtocol(reason: string): void {
    this.protocol = 'text';
    const first = this.messages[0];
    if (first?.role === 'system') first.content = this.systemText();
    this.trajectory.write({ type: 'protocol', protocol: 'text', reason });
    this.emit({ type: 'notice', level: 'info', text: `switched to the text action protocol: ${reason}` });
  }

  private systemText(): string {
    const trials = this.settings.trials ?? this.ws.bug.manifest.reproducer.trials;
    const base = systemPrompt(this.ws, this.settings, trials);
    return this.protocol === 'text' ? `${base}\n\n${textProtocolPrompt(this.tools)}` : base;
  }

  private formatError(message: string): void {
    this.formatErrors++;
    this.trajectory.write({ type: 'format-error', step: this.totals.steps, message });
    this.say({ role: 'user', content: message });
  }

  /** Adds a message to the conversation and the trajectory. */
  private say(m: ChatCompletionMessageParam, reasoning = ''): void {
    this.messages.push(m);
    const content = typeof m.content === 'string' ? m.content : '';
    const toolCalls = m.role === 'assistant' ? m.tool_calls?.flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [])) : undefined;
    const role = m.role === 'developer' || m.role === 'function' ? 'system' : m.role;
    this.trajectory.write({
      type: 'message',
      role,
      content,
      ...(toolCalls?.length && { toolCalls }),
      ...(m.role === 'tool' && { toolCallId: m.tool_call_id }),
      ...(reasoning && { reasoning }),
    });
  }

  private finish(stopReason: StopReason, error?: string, errorKind?: string): AgentResult {
    this.totals.wallMs = Date.now() - this.started;
    this.totals.evidenceTokens = this.budget.spent;
    const final = this.attempts.find((a) => a.verified) ?? this.attempts.at(-1);
    const patch = final?.patch ?? null;
    if (patch) fs.writeFileSync(path.join(this.runDir, 'patch.diff'), patch);
    const result: AgentResult = {
      bugId: this.ws.bug.id,
      model: this.settings.model,
      condition: this.settings.condition,
      protocol: this.protocol,
      verified: stopReason === 'verified',
      stopReason,
      ...(error !== undefined && { error }),
      ...(errorKind !== undefined && { errorKind }),
      attempts: this.attempts.length,
      steps: this.totals.steps,
      tokens: this.totals.tokens,
      totals: { ...this.totals },
      patch,
      trajectory: this.trajectory.file,
      runDir: this.runDir,
    };
    this.trajectory.write({ type: 'end', result });
    this.emit({ type: 'done', result });
    return result;
  }

  private emit(e: AgentEvent): void {
    this.opts.onEvent?.(e);
  }
}
