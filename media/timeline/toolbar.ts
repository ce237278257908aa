/**
 * The controls above the timeline: axis, fit, filters, search, violation and
 * divergence navigation, comparison, live follow, details and help. Plain form
 * elements, so focus order and screen readers work as in any form.
 */
import { EventKind, Level } from '../../src/core/events/event';
import type { Axis, Filter, Meta } from '../../src/core/timeline/protocol';

export interface ToolbarHandlers {
  setAxis(axis: Axis): void;
  fitAll(): void;
  fitSelection(): void;
  setFilter(patch: Partial<Filter>): void;
  /** `fromInput`: Enter in the search box, after which the keys go back to the canvas. */
  search(dir: 1 | -1, fromInput?: boolean): void;
  searchChanged(search: { query: string; regex: boolean; fields: boolean }): void;
  violation(dir: 1 | -1): void;
  divergence(): void;
  compare(): void;
  toggleFollow(): void;
  toggleDetails(): void;
  help(): void;
}

function button(label: string, title: string, onClick: () => void, shortcut?: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.title = shortcut === undefined ? title : `${title} (${shortcut})`;
  b.addEventListener('click', onClick);
  return b;
}

function group(...children: HTMLElement[]): HTMLDivElement {
  const g = document.createElement('div');
  g.className = 'group';
  g.append(...children);
  return g;
}

/** A dropdown of checkboxes (a <details> element, keyboard-operable without script). */
function checkMenu(label: string, title: string): { root: HTMLDetailsElement; body: HTMLDivElement } {
  const root = document.createElement('details');
  root.className = 'menu';
  const summary = document.createElement('summary');
  summary.textContent = `${label} ▾`;
  summary.title = title;
  const body = document.createElement('div');
  body.className = 'menu-body';
  root.append(summary, body);
  return { root, body };
}

function checkbox(text: string, checked: boolean, onChange: (checked: boolean) => void): HTMLLabelElement {
  const label = document.createElement('label');
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.checked = checked;
  box.addEventListener('change', () => onChange(box.checked));
  label.append(box, ` ${text}`);
  return label;
}

export class Toolbar {
  readonly root = document.createElement('div');
  readonly searchInput = document.createElement('input');
  private readonly timeButton: HTMLButtonElement;
  private readonly causalButton: HTMLButtonElement;
  private readonly kinds = checkMenu('Kinds', 'Event kinds shown');
  private readonly lanes = checkMenu('Lanes', 'Lanes shown');
  private readonly level = document.createElement('select');
  private readonly filterInput = document.createElement('input');
  private readonly filterRegex: HTMLButtonElement;
  private readonly searchRegex: HTMLButtonElement;
  private readonly searchFields: HTMLButtonElement;
  private readonly searchCount = document.createElement('span');
  private readonly violationCount = document.createElement('span');
  private readonly divergenceButton: HTMLButtonElement;
  private readonly compareButton: HTMLButtonElement;
  private readonly followButton: HTMLButtonElement;
  private readonly detailsButton: HTMLButtonElement;
  private readonly chatterButton: HTMLButtonElement;
  private filter: Filter = { hiddenLanes: [] };
  private filterTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly on: ToolbarHandlers) {
    this.root.className = 'toolbar';
    this.root.setAttribute('role', 'toolbar');
    this.root.setAttribute('aria-label', 'Timeline controls');
    this.timeButton = button('Time', 'Wall-clock time axis', () => on.setAxis('time'), 'c');
    this.causalButton = button('Causal', 'Causal (Lamport) order: every message arrow points forward', () => on.setAxis('causal'), 'c');
    const fit = button('Fit', 'Fit the whole run', () => on.fitAll(), 'f');
    const fitSel = button('Fit selection', 'Fit the selected event and its message partner', () => on.fitSelection(), 'z');

    EventKind.options.forEach((kind) => this.kinds.body.append(checkbox(kind, true, () => this.kindsChanged())));
    this.level.title = 'Minimum level (events without a level are hidden when one is chosen)';
    this.level.setAttribute('aria-label', 'Minimum level');
    for (const [value, text] of [['', 'All levels'], ...Level.options.map((l) => [l, `${l}+`])]) this.level.append(new Option(text, value));
    this.level.addEventListener('change', () => on.setFilter({ minLevel: this.level.value === '' ? undefined : Level.parse(this.level.value) }));

    this.filterInput.type = 'text';
    this.filterInput.placeholder = 'Filter events';
    this.filterInput.setAttribute('aria-label', 'Filter events by text');
    this.filterInput.addEventListener('input', () => this.textFilterChanged());
    this.filterRegex = button('.*', 'Filter with a regular expression', () => {
      this.filterRegex.setAttribute('aria-pressed', String(this.filterRegex.getAttribute('aria-pressed') !== 'true'));
      this.textFilterChanged();
    });
    this.filterRegex.setAttribute('aria-pressed', 'false');

    this.searchInput.type = 'search';
    this.searchInput.placeholder = 'Search (Enter, Shift+Enter)';
    this.searchInput.setAttribute('aria-label', 'Search events');
    this.searchInput.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      on.search(e.shiftKey ? -1 : 1, true);
    });
    this.searchInput.addEventListener('input', () => this.searchChanged());
    const toggle = (b: () => HTMLButtonElement) => () => {
      b().setAttribute('aria-pressed', String(b().getAttribute('aria-pressed') !== 'true'));
      this.searchChanged();
    };
    this.searchRegex = button('.*', 'Search with a regular expression', toggle(() => this.searchRegex));
    this.searchRegex.setAttribute('aria-pressed', 'false');
    // By default a search reads what the timeline shows (the events' text); fields (paths, ids) on request.
    this.searchFields = button('{}', "Also search the events' fields (file paths, ids, values)", toggle(() => this.searchFields));
    this.searchFields.setAttribute('aria-pressed', 'false');
    this.searchCount.className = 'count';
    this.searchCount.setAttribute('aria-live', 'polite');
    this.violationCount.className = 'count';

    this.divergenceButton = button('First divergence', 'Where run B first departs from run A', () => on.divergence(), 'g');
    this.compareButton = button('Compare…', 'Compare with another run', () => on.compare());
    this.followButton = button('Follow', 'Keep the newest events in view', () => on.toggleFollow(), 'l');
    this.chatterButton = button('Hide chatter', 'Steady, repeating messages (heartbeats, gossip) as a density band until you zoom in', () =>
      on.setFilter({ hideChatter: this.filter.hideChatter === false }),
    );
    this.detailsButton = button('Details', 'Show or hide the details panel', () => on.toggleDetails(), 'i');
    const spacer = document.createElement('div');
    spacer.className = 'spacer';

    this.root.append(
      group(this.timeButton, this.causalButton),
      group(fit, fitSel),
      group(this.kinds.root, this.level, this.lanes.root, this.filterInput, this.filterRegex, this.chatterButton),
      group(this.searchInput, this.searchRegex, this.searchFields, button('↑', 'Previous match', () => on.search(-1), 'N'), button('↓', 'Next match', () => on.search(1), 'n'), this.searchCount),
      group(button('◀', 'Previous violation', () => on.violation(-1), 'V'), this.violationCount, button('▶', 'Next violation', () => on.violation(1), 'v')),
      group(this.divergenceButton, this.compareButton, this.followButton),
      spacer,
      group(this.detailsButton, button('?', 'Keyboard shortcuts', () => on.help(), '?')),
    );
  }

  /** Shows the state: pressed buttons, filter values, what applies to this data. */
  update(meta: Meta, axis: Axis, filter: Filter, follow: boolean, detailsOpen: boolean, search: { query: string; regex: boolean; fields: boolean }): void {
    this.filter = filter;
    this.timeButton.setAttribute('aria-pressed', String(axis === 'time'));
    this.causalButton.setAttribute('aria-pressed', String(axis === 'causal'));
    this.followButton.setAttribute('aria-pressed', String(follow));
    this.followButton.hidden = !meta.live;
    this.detailsButton.setAttribute('aria-pressed', String(detailsOpen));
    this.divergenceButton.hidden = meta.runs.length !== 2;
    this.divergenceButton.disabled = meta.divergence?.first == null;
    this.divergenceButton.title = this.divergenceButton.disabled
      ? 'The two runs agree event for event in what each node logged, checked and suffered (messages aside)'
      : 'Where run B first departs from run A (g)';
    this.compareButton.hidden = !meta.capabilities.compare;
    this.compareButton.textContent = meta.runs.length > 1 ? 'Stop comparing' : 'Compare…';
    const violations = meta.runs.reduce((n, r) => n + r.violations.length, 0);
    this.violationCount.textContent = `${violations} violation${violations === 1 ? '' : 's'}`;
    this.level.value = filter.minLevel ?? '';
    const chatterTypes = [...new Set(meta.runs.flatMap((r) => r.chatterTypes))];
    this.chatterButton.hidden = chatterTypes.length === 0;
    this.chatterButton.setAttribute('aria-pressed', String(filter.hideChatter !== false));
    this.chatterButton.title = `${chatterTypes.join(', ')}: steady, repeating messages, shown as a density band until you zoom in (pressed) or as arrows`;
    if (document.activeElement !== this.filterInput) this.filterInput.value = filter.text ?? '';
    this.filterRegex.setAttribute('aria-pressed', String(filter.regex === true));
    if (document.activeElement !== this.searchInput) this.searchInput.value = search.query;
    this.searchRegex.setAttribute('aria-pressed', String(search.regex));
    this.searchFields.setAttribute('aria-pressed', String(search.fields));
    const kinds = new Set(filter.kinds ?? EventKind.options);
    this.kinds.body.querySelectorAll('input').forEach((box, k) => (box.checked = kinds.has(EventKind.options[k])));
    const names = [...new Set(meta.runs.flatMap((r) => r.lanes.map((l) => l.name)))];
    const hidden = new Set(filter.hiddenLanes);
    this.lanes.body.replaceChildren(
      ...names.map((name) =>
        checkbox(name, !hidden.has(name), (shown) => {
          const next = new Set(this.filter.hiddenLanes);
          if (shown) next.delete(name);
          else next.add(name);
          this.on.setFilter({ hiddenLanes: [...next] });
        }),
      ),
    );
  }

  private searchChanged(): void {
    const pressed = (b: HTMLButtonElement) => b.getAttribute('aria-pressed') === 'true';
    this.on.searchChanged({ query: this.searchInput.value, regex: pressed(this.searchRegex), fields: pressed(this.searchFields) });
  }

  setSearchStatus(text: string, invalid: boolean): void {
    this.searchCount.textContent = text;
    this.searchInput.classList.toggle('invalid', invalid);
  }

  setFilterInvalid(invalid: boolean): void {
    this.filterInput.classList.toggle('invalid', invalid);
  }

  private kindsChanged(): void {
    const chosen = EventKind.options.filter((_, k) => this.kinds.body.querySelectorAll('input')[k]?.checked === true);
    this.on.setFilter({ kinds: chosen.length === EventKind.options.length ? undefined : chosen });
  }

  /** Typing is debounced: filtering a million events on every keystroke would stutter. */
  private textFilterChanged(): void {
    if (this.filterTimer !== undefined) clearTimeout(this.filterTimer);
    this.filterTimer = setTimeout(() => {
      const text = this.filterInput.value;
      this.on.setFilter({ text: text === '' ? undefined : text, regex: this.filterRegex.getAttribute('aria-pressed') === 'true' || undefined });
    }, 250);
  }
}
