/**
 * The live transcript: each agent event updates or adds one element. Replaying the
 * host's stored events (without deltas) gives the same page as having watched the run.
 */
import { isConfigurationFailure, stopReasonText, type AgentEvent, type AgentResult, type Attempt } from '../../src/core/agent/events';
import type { Review, ToHost } from '../../src/core/agent/panel-protocol';
import { button, h } from './dom';
import { trialName } from '../../src/core/verify/format';

type Event<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

interface StepView {
  root: HTMLElement;
  text: HTMLElement;
  thinking: HTMLDetailsElement;
  thinkingText: HTMLElement;
  status: HTMLElement;
}

export class Transcript {
  private readonly steps = new Map<number, StepView>();
  private readonly tools = new Map<string, { row: HTMLDetailsElement; status: HTMLElement; output: HTMLElement }>();
  private readonly attempts = new Map<number, { card: HTMLElement; review: HTMLElement; actions: HTMLElement }>();
  private verifying: HTMLElement | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly post: (msg: ToHost) => void,
    /** Ids of collapsible rows the person opened, kept across reloads. */
    private readonly open: Set<string>,
    private readonly onToggle: () => void,
  ) {}

  clear(): void {
    this.root.replaceChildren();
    this.steps.clear();
    this.tools.clear();
    this.attempts.clear();
    this.verifying = undefined;
  }

  apply(e: AgentEvent): void {
    switch (e.type) {
      case 'started':
        return this.add(h('div', { class: 'line meta', text: `Run of ${e.bugId} with ${e.model} (${e.condition}).` }, ' ', button('Open trajectory', () => this.post({ type: 'openTrajectory' }), { class: 'link' })));
      case 'notice':
        return this.add(h('div', { class: `line notice ${e.level}`, text: e.text }));
      case 'context':
        return this.add(this.collapsible('context', `Debugging context given up front (${e.text.length} characters)`, h('pre', { text: e.text })));
      case 'delta':
        return this.delta(e);
      case 'step':
        this.step(e.step);
        return;
      case 'reply': {
        const s = this.step(e.step);
        s.text.textContent = e.content;
        s.status.textContent = '';
        return;
      }
      case 'tool-start':
        return this.toolStart(e);
      case 'tool-end':
        return this.toolEnd(e);
      case 'verifying':
        this.verifying = h('div', { class: 'line notice info', attrs: { role: 'status' }, text: `Verifying attempt ${e.attempt}: the reproducer and the regression checks on a fresh copy of the bug's code…` });
        return this.add(this.verifying);
      case 'attempt':
        this.verifying?.remove();
        return this.attempt(e.attempt);
      case 'totals':
        return;
      case 'done':
        return this.done(e.result);
    }
  }

  review(r: Review): void {
    const a = this.attempts.get(r.attempt);
    if (!a) return;
    a.review.textContent = r.decision === 'accepted' ? `Accepted into the workspace${r.edited ? ' (with your edits)' : ''}.` : 'Rejected.';
    a.actions.querySelectorAll('button').forEach((b) => (b.disabled = b.dataset.action !== 'diff'));
    a.card.classList.add(r.decision);
  }

  private step(n: number): StepView {
    let s = this.steps.get(n);
    if (s) return s;
    const text = h('div', { class: 'assistant' });
    const thinkingText = h('pre', { class: 'thinking' });
    const thinking = this.collapsible(`think-${n}`, 'Thinking', thinkingText);
    thinking.hidden = true;
    const status = h('div', { class: 'status' });
    const root = h('section', { class: 'step', attrs: { 'aria-label': `Step ${n}` } }, h('h3', { text: `Step ${n}` }), thinking, text, status);
    s = { root, text, thinking, thinkingText, status };
    this.steps.set(n, s);
    this.add(root);
    return s;
  }

  private delta(e: Event<'delta'>): void {
    const s = this.step(e.step);
    const d = e.delta;
    if (d.kind === 'tool') s.status.textContent = `calling ${d.name}…`;
    else if (d.kind === 'text') s.text.append(d.text);
    else {
      s.thinking.hidden = false;
      s.thinkingText.append(d.text);
    }
  }

  private toolStart(e: Event<'tool-start'>): void {
    const status = h('span', { class: 'tool-status running', text: 'running…' });
    const output = h('pre', { class: 'output' });
    const summary = h('span', {}, h('span', { class: 'tool-name', text: e.name }), ' ', h('span', { class: 'args', text: oneLine(e.args, 120) }), ' ', status);
    const row = this.collapsible(`tool-${e.step}-${e.id}`, summary, h('div', { class: 'label', text: 'Arguments' }), h('pre', { text: e.args || '{}' }), h('div', { class: 'label', text: 'Result' }), output);
    row.classList.add('tool');
    this.tools.set(e.id, { row, status, output });
    this.step(e.step).root.append(row);
  }

  private toolEnd(e: Event<'tool-end'>): void {
    const t = this.tools.get(e.id);
    if (!t) return;
    t.status.textContent = `${e.ok ? 'done' : 'error'} · ${e.ms} ms`;
    t.status.className = `tool-status ${e.ok ? 'ok' : 'error'}`;
    t.output.textContent = e.output;
    this.step(e.step).status.textContent = '';
  }

  private attempt(a: Attempt): void {
    const trials = (a.reproducer?.trials ?? []).map((t) => h('li', { text: `${t.scenario} ${trialName(t)}: ${t.verdict}${t.reason ? ` — ${t.reason}` : ''}` }));
    const regression = a.regression.map((g) => h('li', { text: `regression ${g.scenario}: ${g.passed}/${g.total} passed` }));
    const review = h('div', { class: 'review', attrs: { role: 'status' } });
    const actions = h(
      'div',
      { class: 'actions' },
      withAction(button('Show diff', () => this.post({ type: 'showDiff', attempt: a.attempt }), { title: 'Open the patch in the diff editor (the right side is editable)' }), 'diff'),
      withAction(button('Accept', () => this.post({ type: 'accept', attempt: a.attempt }), { class: 'primary', title: 'Apply the right-hand side of the diff to the workspace' }), 'accept'),
      withAction(button('Reject', () => this.post({ type: 'reject', attempt: a.attempt })), 'reject'),
    );
    const card = h(
      'section',
      { class: `attempt ${a.verified ? 'verified' : 'failed'}`, attrs: { 'aria-label': `Attempt ${a.attempt}` } },
      h('h3', { text: `Attempt ${a.attempt}: ${a.verified ? 'verified' : 'not verified'}` }),
      h('div', { text: `${a.files.map((f) => f.path).join(', ')} · ${a.summary} · ${(a.ms / 1000).toFixed(1)} s` }),
      ...(a.error ? [h('div', { class: 'error', text: a.error })] : []),
      h('ul', {}, ...trials, ...regression),
      actions,
      review,
    );
    this.attempts.set(a.attempt, { card, review, actions });
    this.add(card);
  }

  private done(r: AgentResult): void {
    const text = r.verified
      ? `Verified: attempt ${r.attempts} fixes ${r.bugId}. Review it in the diff editor and accept it.`
      : isConfigurationFailure(r)
        ? `Configuration problem: ${r.error ?? 'the endpoint refused the run'}. Fix the settings (Test Connection checks them); nothing was recorded.`
        : `Not verified: the run stopped because ${stopReasonText(r.stopReason)}${r.error ? ` — ${r.error}` : ''}.`;
    const kind = r.verified ? 'verified' : isConfigurationFailure(r) ? 'configuration' : 'failed';
    this.add(h('div', { class: `result ${kind}`, attrs: { role: 'status' }, text }));
  }

  private collapsible(id: string, summary: string | Node, ...body: Node[]): HTMLDetailsElement {
    const d = h('details', {}, h('summary', {}, summary), ...body);
    d.open = this.open.has(id);
    d.addEventListener('toggle', () => {
      if (d.open) this.open.add(id);
      else this.open.delete(id);
      this.onToggle();
    });
    return d;
  }

  private add(el: HTMLElement): void {
    const atBottom = this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < 40;
    this.root.append(el);
    // Follow the run unless the person scrolled up to read.
    if (atBottom) this.root.scrollTop = this.root.scrollHeight;
  }
}

function withAction(b: HTMLButtonElement, action: string): HTMLButtonElement {
  b.dataset.action = action;
  return b;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
