/**
 * Charts as inline SVG strings: no script, no library, no network, so the report works
 * offline, in a file, and under a webview's strict CSP. Colours come from CSS classes
 * (the page's stylesheet), never style attributes, which a strict CSP would block.
 */

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export interface IntervalRow {
  label: string;
  value: number;
  ci?: [number, number];
  /** CSS class of the bar or dot. */
  cls: string;
  /** Text after the bar. */
  note: string;
}

const W = 780;
const LABEL_W = 230;
const NOTE_W = 180;
const ROW_H = 22;
const AXIS_H = 22;

/** Horizontal bars from 0 to each value on [0, max], with confidence whiskers. */
export function barChart(title: string, rows: readonly IntervalRow[], max: number, tick: (v: number) => string): string {
  const plotW = W - LABEL_W - NOTE_W;
  const x = (v: number) => LABEL_W + (Math.min(Math.max(v, 0), max) / max) * plotW;
  const body = rows.map((r, i) => {
    const y = AXIS_H + i * ROW_H;
    const bar = `<rect class="${esc(r.cls)}" x="${LABEL_W}" y="${y + 4}" width="${(x(r.value) - LABEL_W).toFixed(1)}" height="${ROW_H - 8}"/>`;
    return rowLabel(r.label, y) + bar + whisker(r.ci, x, y) + note(r.note, y);
  });
  return frame(title, rows.length, axis([0, max / 2, max], x, tick) + body.join(''));
}

/** Points with intervals on a symmetric axis around zero (differences such as the context lift). */
export function dotChart(title: string, rows: readonly IntervalRow[], tick: (v: number) => string): string {
  const extent = Math.max(0.25, ...rows.flatMap((r) => [Math.abs(r.value), ...(r.ci ? r.ci.map(Math.abs) : [])]));
  const lim = Math.min(1, Math.ceil(extent * 4) / 4);
  const plotW = W - LABEL_W - NOTE_W;
  const x = (v: number) => LABEL_W + ((Math.min(Math.max(v, -lim), lim) + lim) / (2 * lim)) * plotW;
  const zero = `<line class="zero" x1="${x(0)}" x2="${x(0)}" y1="${AXIS_H - 4}" y2="${AXIS_H + rows.length * ROW_H}"/>`;
  const body = rows.map((r, i) => {
    const y = AXIS_H + i * ROW_H;
    return rowLabel(r.label, y) + whisker(r.ci, x, y) + `<circle class="${esc(r.cls)}" cx="${x(r.value).toFixed(1)}" cy="${y + ROW_H / 2}" r="5"/>` + note(r.note, y);
  });
  return frame(title, rows.length, axis([-lim, 0, lim], x, tick) + zero + body.join(''));
}

function frame(title: string, rows: number, inner: string): string {
  const h = AXIS_H + Math.max(rows, 1) * ROW_H + 6;
  return `<figure class="chart"><figcaption>${esc(title)}</figcaption><svg role="img" aria-label="${esc(title)}" viewBox="0 0 ${W} ${h}" width="${W}" height="${h}" xmlns="http://www.w3.org/2000/svg">${inner}</svg></figure>`;
}

function axis(ticks: readonly number[], x: (v: number) => number, tick: (v: number) => string): string {
  return ticks
    .map((t) => `<line class="grid" x1="${x(t)}" x2="${x(t)}" y1="${AXIS_H - 4}" y2="100%"/><text class="tick" x="${x(t)}" y="${AXIS_H - 8}" text-anchor="middle">${esc(tick(t))}</text>`)
    .join('');
}

function rowLabel(label: string, y: number): string {
  const short = label.length > 34 ? `${label.slice(0, 33)}…` : label;
  return `<text class="label" x="${LABEL_W - 8}" y="${y + ROW_H / 2 + 4}" text-anchor="end"><title>${esc(label)}</title>${esc(short)}</text>`;
}

function whisker(ci: [number, number] | undefined, x: (v: number) => number, y: number): string {
  if (!ci) return '';
  const [a, b] = [x(ci[0]), x(ci[1])];
  const m = y + ROW_H / 2;
  return `<path class="ci" d="M${a.toFixed(1)} ${m - 5}v10M${a.toFixed(1)} ${m}H${b.toFixed(1)}M${b.toFixed(1)} ${m - 5}v10"/>`;
}

function note(text: string, y: number): string {
  return `<text class="note" x="${W - NOTE_W + 8}" y="${y + ROW_H / 2 + 4}">${esc(text)}</text>`;
}
