/**
 * The details panel: the selected event (fields, clocks, message partners, causal
 * counts, source link), or with nothing selected, what was read and every problem
 * met (bad lines with their line numbers, clock inconsistencies, violations).
 * Built with DOM calls and textContent only: event text never becomes markup.
 */
import { runLetter, type DetailsData, type DiagnosticsData, type EventRef, type Meta } from '../../src/core/timeline/protocol';
import { formatTime } from './viewport';

export interface DetailsHandlers {
  select(ref: EventRef): void;
  openSource(ref: EventRef): void;
}

type Child = Node | string;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function button(text: string, title: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', title }, text);
  b.addEventListener('click', onClick);
  return b;
}

const at = (ts: number): string => formatTime(ts, 1);

export class DetailsPanel {
  constructor(
    private readonly root: HTMLElement,
    private readonly on: DetailsHandlers,
  ) {}

  showEvent(d: DetailsData, meta: Meta): void {
    const e = d.event;
    const canOpen = meta.capabilities.openSource && e.src !== undefined;
    const parts: Child[] = [
      el('h2', {}, el('span', { className: `badge ${e.level === 'error' ? 'error' : e.level === 'warn' ? 'warn' : ''}` }, e.kind), `${e.node}: ${e.msg ?? e.kind}`),
      el('div', {}, `${at(e.ts)} · Lamport ${d.lamport}${d.x.causal !== d.lamport ? ` (no message links: drawn at L${d.x.causal} in causal order)` : ''}${meta.runs.length > 1 ? ` · run ${runLetter(d.ref.run)}` : ''}${e.level ? ` · ${e.level}` : ''}`),
    ];
    const actions = el('div', { className: 'actions' });
    if (e.src !== undefined) {
      actions.append(
        canOpen ? button(`Open ${e.src.file}:${e.src.line}`, 'Open the source line in the editor (Enter)', () => this.on.openSource(d.ref)) : el('code', {}, `${e.src.file}:${e.src.line}`),
      );
    }
    for (const p of d.partners) actions.append(button(`${p.kind === 'send' ? '← send' : p.kind === 'recv' ? '→ receive' : p.kind} on ${p.node} at ${at(p.ts)}`, 'Go to the message partner (p)', () => this.on.select(p.ref)));
    for (const f of d.routerFaults) actions.append(button(`router: ${f.action} at ${at(f.ts)}`, 'Go to the router step', () => this.on.select(f.ref)));
    if (actions.childElementCount > 0) parts.push(actions);
    if (e.msgId !== undefined || e.peer !== undefined) {
      parts.push(el('h3', {}, 'Message'), table([['id', e.msgId ?? '—'], ['peer', e.peer ?? '—']]));
    }
    parts.push(el('h3', {}, 'Causality'), el('div', {}, `${d.pastSize} events happened before it (blue), ${d.futureSize} after it (orange); the rest are concurrent.`));
    const nodes = [...new Set([...Object.keys(e.vc ?? {}), ...Object.keys(d.derivedClock)])].sort();
    if (nodes.length > 0) {
      parts.push(
        el('h3', {}, 'Vector clock'),
        table(
          nodes.map((n) => [n, String(e.vc?.[n] ?? '—'), String(d.derivedClock[n] ?? 0)]),
          ['node', 'logged', 'derived'],
        ),
      );
    }
    if (e.span !== undefined) parts.push(el('h3', {}, 'Span'), el('pre', {}, JSON.stringify(e.span, null, 2)));
    if (e.fields !== undefined) parts.push(el('h3', {}, 'Fields'), el('pre', {}, JSON.stringify(e.fields, null, 2)));
    parts.push(el('h3', {}, 'Read from'), el('div', {}, `${d.origin.file}:${d.origin.line}`), el('div', {}, `id ${e.id}`));
    this.root.replaceChildren(...parts);
  }

  showSummary(meta: Meta, diagnostics: DiagnosticsData | undefined): void {
    const parts: Child[] = [el('h2', {}, 'Summary'), el('div', {}, 'Select an event: click it, or focus the timeline (Tab) and use ← → ↑ ↓. Press ? for all keys.')];
    meta.runs.forEach((run, r) => {
      const name = meta.runs.length > 1 ? `Run ${runLetter(r)}: ${run.label}` : run.label;
      parts.push(el('h3', {}, name));
      parts.push(el('div', {}, `${run.events} events on ${run.lanes.length} lanes, ${run.messages} messages (${run.dropped} dropped)${run.impliedEdges > 0 ? `, ${run.impliedEdges} edges from vector clocks or cross-service spans` : ''}, ${run.faultBands} fault periods`));
      if (run.violations.length > 0) {
        const list = el('ul');
        for (const v of run.violations) {
          const item = el('li');
          item.append(button(`${at(v.ts)} ${v.node}: ${v.text}`, 'Go to the violation', () => this.on.select({ run: r, index: v.index })));
          list.append(item);
        }
        parts.push(el('div', { className: 'problem' }, `${run.violations.length} invariant violation(s):`), list);
      }
      const sources = el('ul');
      for (const s of run.sources) {
        sources.append(el('li', {}, `${s.file} (${s.format}): ${s.events} events${s.duplicates > 0 ? `, ${s.duplicates} router records already in the events` : ''}${s.bad > 0 ? `, ${s.bad} bad lines` : ''}`));
        for (const n of s.notes) sources.append(el('li', {}, n));
      }
      parts.push(sources);
      if (run.badCount > 0) {
        const bad = el('ul');
        for (const b of run.bad) bad.append(el('li', { className: 'problem' }, `${b.file}:${b.line}: ${b.error}`));
        if (run.badCount > run.bad.length) bad.append(el('li', {}, `… and ${run.badCount - run.bad.length} more`));
        parts.push(el('div', { className: 'problem' }, `${run.badCount} lines could not be read (they are left out):`), bad);
      }
      const clocks = diagnostics?.runs[r];
      if (clocks !== undefined && clocks.clockIssueCount > 0) {
        const list = el('ul');
        for (const issue of clocks.clockIssues) {
          const item = el('li', { className: 'problem' }, issue.message);
          const first = issue.events[0];
          if (first !== undefined) item.append(' ', button('show', 'Select the event', () => this.on.select({ run: r, index: first })));
          list.append(item);
        }
        parts.push(el('div', { className: 'problem' }, `${clocks.clockIssueCount} vector-clock inconsistencies:`), list);
      }
    });
    this.root.replaceChildren(...parts);
  }
}

function table(rows: string[][], head?: string[]): HTMLTableElement {
  const t = el('table');
  if (head !== undefined) t.append(el('tr', {}, ...head.map((h) => el('th', {}, h))));
  for (const row of rows) t.append(el('tr', {}, ...row.map((c) => el('td', {}, c))));
  return t;
}
