/**
 * The agent panel's page: settings (endpoint, model, key, condition, limits), start
 * and stop, the run's totals, and the transcript. Every message from the host is
 * checked before use; the page keeps only which rows are open in its own state.
 */
import type { AgentEvent, Totals } from '../../src/core/agent/events';
import { DEFAULT_UI_STATE, PanelSettings, PROTOCOL_VERSION, ToWebview, UiState, type KeyStatus, type ToHost } from '../../src/core/agent/panel-protocol';
import { receive, type WebviewHost } from '../shared/host';
import { button, h } from './dom';
import { Transcript } from './transcript';

type FieldName = keyof PanelSettings;

/** The panel's host: the extension, or a test page. */
export type AgentHost = WebviewHost<ToHost, UiState>;

/** The form's fields: label, input kind, and how an empty number field reads. */
const FIELDS: { name: FieldName; label: string; kind: 'text' | 'number' | 'select'; options?: string[]; hint?: string; step?: string }[] = [
  { name: 'baseUrl', label: 'Base URL', kind: 'text', hint: 'OpenAI: https://api.openai.com/v1 · Ollama: http://localhost:11434/v1 · vLLM: http://localhost:8000/v1 · llama.cpp: http://127.0.0.1:8080/v1' },
  { name: 'model', label: 'Model', kind: 'text' },
  { name: 'startFrom', label: 'Start from', kind: 'select', options: ['bug', 'workspace'], hint: "bug: the bug's code as opened · workspace: your current edits in src/" },
  { name: 'condition', label: 'Condition', kind: 'select', options: ['symptom-only', 'context-augmented'], hint: 'context-augmented adds the captured failure and the evidence tools' },
  { name: 'protocol', label: 'Protocol', kind: 'select', options: ['auto', 'tools', 'text'], hint: 'auto: tool calling, falling back to text actions where the endpoint has none' },
  { name: 'temperature', label: 'Temperature', kind: 'number', step: '0.1', hint: "empty: the endpoint's default" },
  { name: 'maxSteps', label: 'Max steps', kind: 'number' },
  { name: 'maxAttempts', label: 'Max attempts', kind: 'number' },
  { name: 'maxCostUsd', label: 'Max cost (USD)', kind: 'number', step: '0.1' },
  { name: 'maxMinutes', label: 'Max minutes', kind: 'number' },
  { name: 'trials', label: 'Trials per verification', kind: 'number', hint: "empty: the bug's own count" },
  { name: 'apiKeyEnv', label: 'Key variable', kind: 'text', hint: 'environment variable read when no key is stored' },
];

export class AgentApp {
  private readonly ui: UiState;
  private readonly open: Set<string>;
  private readonly inputs = new Map<FieldName, HTMLInputElement | HTMLSelectElement>();
  private readonly transcriptRoot = h('div', { class: 'transcript', attrs: { 'aria-live': 'polite', tabindex: '0', 'aria-label': 'Transcript' } });
  private readonly transcript: Transcript;
  private readonly startButton = button('Start', () => this.startRun(), { class: 'primary', title: 'Start the agent (Ctrl+Enter)' });
  private readonly stopButton = button('Stop', () => this.host.post({ type: 'stop' }), { title: 'Stop the agent (Ctrl+.)' });
  private readonly formError = h('div', { class: 'error', attrs: { role: 'alert' } });
  private readonly keyStatus = h('div', { class: 'hint', attrs: { role: 'status' } });
  private readonly keyInput = h('input', { attrs: { type: 'password', placeholder: 'paste a key to store it', autocomplete: 'off', 'aria-label': 'API key' } });
  private readonly totals = h('div', { class: 'totals', attrs: { role: 'status' } });
  private readonly where = h('div', { class: 'where' });
  /** What the run will start from, said before Start (the person's edits are never touched). */
  private readonly startsFrom = h('div', { class: 'hint starts-from', attrs: { role: 'status' } });
  private readonly connection = h('div', { class: 'hint', attrs: { role: 'status', 'aria-live': 'polite' } });
  private edits: string[] = [];
  private readonly settingsBox: HTMLDetailsElement;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: AgentHost,
  ) {
    const saved = UiState.safeParse(host.loadState());
    this.ui = saved.success ? saved.data : DEFAULT_UI_STATE;
    this.open = new Set(this.ui.open);
    this.transcript = new Transcript(this.transcriptRoot, (m) => host.post(m), this.open, () => this.saveUi());
    this.settingsBox = h('details', { class: 'settings' }, h('summary', { text: 'Settings' }), this.form());
    this.settingsBox.open = this.ui.settingsOpen;
    this.settingsBox.addEventListener('toggle', () => this.saveUi());
  }

  mount(): void {
    this.root.append(
      h('header', {}, this.where, h('div', { class: 'buttons' }, this.startButton, this.stopButton)),
      this.startsFrom,
      this.settingsBox,
      this.formError,
      this.totals,
      this.transcriptRoot,
    );
    this.setRunning(false);
    document.addEventListener('keydown', (e) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      if (e.key === 'Enter' && !this.startButton.disabled) this.startRun();
      else if (e.key === '.' && !this.stopButton.disabled) this.host.post({ type: 'stop' });
      else return;
      e.preventDefault();
    });
    receive(this.host, ToWebview, (msg) => this.receive(msg), (problem) => (this.formError.textContent = `Ignored a malformed message from the extension: ${problem}`));
    this.host.post({ type: 'ready', protocol: PROTOCOL_VERSION });
  }

  private receive(msg: ToWebview): void {
    switch (msg.type) {
      case 'init':
        this.fill(msg.settings);
        this.showKey(msg.key);
        this.where.textContent = msg.workspace ? `${msg.workspace.bugId} · ${msg.workspace.dir}` : 'No bug workspace is open in this window: use DDBench: Open Bug first.';
        this.edits = msg.workspace?.edits ?? [];
        this.showStartsFrom();
        this.transcript.clear();
        this.totals.textContent = '';
        for (const e of msg.events) this.event(e);
        for (const r of msg.reviews) this.transcript.review(r);
        this.setRunning(msg.running);
        return;
      case 'event':
        return this.event(msg.event);
      case 'running':
        return this.setRunning(msg.running);
      case 'key':
        return this.showKey(msg.key);
      case 'review':
        return this.transcript.review(msg.review);
      case 'error':
        this.formError.textContent = msg.message;
        return;
      case 'connection':
        this.connection.textContent = `${msg.ok ? '✓' : '✗'} ${msg.message}`;
        this.connection.dataset.ok = String(msg.ok);
        return;
    }
  }

  private event(e: AgentEvent): void {
    if (e.type === 'totals') this.showTotals(e.totals);
    if (e.type === 'done') this.showTotals(e.result.totals);
    this.transcript.apply(e);
  }

  private form(): HTMLElement {
    const grid = h('div', { class: 'grid' });
    for (const f of FIELDS) {
      const id = `field-${f.name}`;
      const input =
        f.kind === 'select'
          ? h('select', { attrs: { id } }, ...(f.options ?? []).map((o) => h('option', { text: o, attrs: { value: o } })))
          : h('input', { attrs: { id, type: f.kind, ...(f.kind === 'number' && { min: '0', step: f.step ?? '1' }), spellcheck: 'false' } });
      input.addEventListener('change', () => this.scheduleSave());
      this.inputs.set(f.name, input);
      grid.append(h('label', { text: f.label, attrs: { for: id } }), h('div', {}, input, ...(f.hint ? [h('div', { class: 'hint', text: f.hint })] : [])));
    }
    const keyRow = h(
      'div',
      {},
      h('div', { class: 'key-row' }, this.keyInput, button('Store key', () => this.storeKey(), { title: 'Keep the key in VS Code SecretStorage' }), button('Clear', () => this.host.post({ type: 'clearKey' }))),
      this.keyStatus,
    );
    this.keyInput.id = 'field-key';
    this.keyInput.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.storeKey();
    });
    grid.append(h('label', { text: 'API key', attrs: { for: 'field-key' } }), keyRow);
    const test = button('Test Connection', () => this.testConnection(), { title: 'Ask the endpoint whether it answers with this URL, key and model' });
    grid.append(h('span', {}), h('div', {}, test, this.connection));
    this.inputs.get('startFrom')?.addEventListener('change', () => this.showStartsFrom());
    return grid;
  }

  private storeKey(): void {
    const key = this.keyInput.value.trim();
    if (!key) return;
    this.host.post({ type: 'setKey', key });
    // The key goes to the host once and is not kept on the page.
    this.keyInput.value = '';
  }

  private fill(s: PanelSettings): void {
    for (const [name, input] of this.inputs) {
      const v = s[name];
      input.value = v === null ? '' : String(v);
    }
  }

  /** The form as settings, or undefined with the problem shown. */
  private read(): PanelSettings | undefined {
    const raw: Record<string, unknown> = {};
    for (const f of FIELDS) {
      const value = this.inputs.get(f.name)!.value.trim();
      raw[f.name] = f.kind === 'number' ? (value === '' ? null : Number(value)) : value;
    }
    const parsed = PanelSettings.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const label = FIELDS.find((f) => f.name === issue?.path[0])?.label ?? 'Settings';
      this.formError.textContent = `${label}: ${issue?.message ?? 'invalid'}`;
      this.settingsBox.open = true;
      return undefined;
    }
    this.formError.textContent = '';
    return parsed.data;
  }

  private scheduleSave(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      const s = this.read();
      if (s) this.host.post({ type: 'saveSettings', settings: s });
    }, 300);
  }

  private testConnection(): void {
    const s = this.read();
    if (!s) return;
    this.connection.textContent = `Asking ${s.baseUrl} …`;
    delete this.connection.dataset.ok;
    this.host.post({ type: 'testConnection', settings: s });
  }

  private showStartsFrom(): void {
    const fromEdits = this.inputs.get('startFrom')?.value === 'workspace';
    const files = this.edits.slice(0, 3).join(', ') + (this.edits.length > 3 ? ', …' : '');
    this.startsFrom.textContent =
      this.edits.length === 0
        ? "The agent starts from the bug's code (your workspace has no edits)."
        : fromEdits
          ? `The agent starts from your edits (${this.edits.length} file${this.edits.length === 1 ? '' : 's'}: ${files}), on its own copy.`
          : `Your workspace has edits (${files}); the agent starts from the bug's code without them (Settings › Start from), and never changes your files.`;
  }

  private startRun(): void {
    const s = this.read();
    if (!s) return;
    this.formError.textContent = '';
    this.host.post({ type: 'start', settings: s });
  }

  private setRunning(running: boolean): void {
    this.startButton.disabled = running;
    this.stopButton.disabled = !running;
    this.root.classList.toggle('running', running);
  }

  private showKey(k: KeyStatus): void {
    this.keyStatus.textContent = k.message;
    this.keyStatus.dataset.source = k.source;
  }

  private showTotals(t: Totals): void {
    const cost = t.priced ? `$${t.costUsd.toFixed(4)}` : 'cost n/a (no price for this model)';
    this.totals.textContent = `${t.steps} steps · ${t.attempts} attempts · ${t.tokens.toLocaleString()} tokens${t.tokensEstimated ? ' (estimated)' : ''} · ${cost} · ${formatMs(t.wallMs)} · evidence ${t.evidenceTokens.toLocaleString()} tokens`;
  }

  private saveUi(): void {
    this.host.saveState({ version: 1, open: [...this.open].slice(-500), settingsOpen: this.settingsBox.open } satisfies UiState);
  }
}

function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
