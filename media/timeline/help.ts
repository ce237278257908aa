/** The keyboard help: a modal dialog listing every shortcut (from the one table in keys.ts) and the mouse gestures. */
import { SHORTCUTS } from './keys';

export class HelpDialog {
  readonly root = document.createElement('div');

  /** `closed` returns the focus to the timeline. */
  constructor(private readonly closed: () => void) {
    this.root.className = 'help';
    this.root.hidden = true;
    this.root.setAttribute('role', 'dialog');
    this.root.setAttribute('aria-modal', 'true');
    this.root.setAttribute('aria-label', 'Keyboard shortcuts');
    const box = document.createElement('div');
    const title = document.createElement('h2');
    title.textContent = 'Keyboard shortcuts';
    const table = document.createElement('table');
    for (const s of SHORTCUTS) {
      const tr = document.createElement('tr');
      const keys = document.createElement('td');
      s.keys.forEach((k, i) => {
        const kbd = document.createElement('kbd');
        kbd.textContent = k;
        keys.append(...(i > 0 ? [' ', kbd] : [kbd]));
      });
      const label = document.createElement('td');
      label.textContent = s.label;
      tr.append(keys, label);
      table.append(tr);
    }
    const mouse = document.createElement('p');
    mouse.textContent = 'Mouse: wheel zooms at the pointer, Shift+wheel or drag pans, Alt+wheel scrolls lanes, Shift+drag zooms to a range, click selects, double-click zooms in.';
    const close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Close';
    close.addEventListener('click', () => this.toggle(false));
    box.append(title, table, mouse, close);
    this.root.append(box);
  }

  get open(): boolean {
    return !this.root.hidden;
  }

  toggle(show: boolean): void {
    this.root.hidden = !show;
    if (show) this.root.querySelector('button')?.focus();
    else this.closed();
  }
}
