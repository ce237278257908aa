/** A small element builder: tag, class, attributes, children. Text is always set as text, never as HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  opts: { class?: string; text?: string; attrs?: Record<string, string> } = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (opts.class) el.className = opts.class;
  if (opts.text !== undefined) el.textContent = opts.text;
  for (const [k, v] of Object.entries(opts.attrs ?? {})) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

export function button(label: string, onClick: () => void, opts: { class?: string; title?: string } = {}): HTMLButtonElement {
  const b = h('button', { class: opts.class ?? 'secondary', text: label, attrs: { type: 'button', ...(opts.title && { title: opts.title }) } });
  b.addEventListener('click', onClick);
  return b;
}
