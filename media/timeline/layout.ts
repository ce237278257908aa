import type { Row, WindowData } from '../../src/core/timeline/protocol';

/** Height of the time axis at the top of the canvas. */
export const HEADER = 22;
/** Width of the lane names on the left. */
export const GUTTER = 132;
/** A lane's event strip; spans stack below it. */
export const ROW_BASE = 28;
export const SPAN_ROW = 7;

/** Rows never grow beyond this when there is room to spare. */
const ROW_MAX = 64;

export interface RowBox extends Row {
  y: number;
  height: number;
  /** Offset of the event strip's centre (markers, arrow ends) from the row's top. */
  mid: number;
  /** Offset of the first span bar from the row's top. */
  spanTop: number;
}

/**
 * Rows stacked top to bottom (in content coordinates, below the header), tall
 * enough for their spans; spare height (up to ROW_MAX a row) is shared out so a
 * few lanes fill the view instead of huddling at its top.
 */
export function layoutRows(data: WindowData, viewHeight: number): RowBox[] {
  const depth = new Int32Array(data.rows.length).fill(-1);
  for (let s = 0; s < data.spans.row.length; s++) depth[data.spans.row[s]] = Math.max(depth[data.spans.row[s]], data.spans.depth[s]);
  const spanHeight = (r: number): number => (depth[r] >= 0 ? (Math.min(depth[r], 7) + 1) * SPAN_ROW + 2 : 0);
  const needed = data.rows.reduce((sum, _, r) => sum + ROW_BASE + spanHeight(r), 0);
  const extra = data.rows.length === 0 ? 0 : Math.max(0, Math.min(ROW_MAX - ROW_BASE, (viewHeight - needed) / data.rows.length));
  let y = 0;
  return data.rows.map((row, r) => {
    const strip = Math.floor(ROW_BASE + extra);
    const box = { ...row, y, height: strip + spanHeight(r), mid: Math.round(strip / 2), spanTop: strip };
    y += box.height;
    return box;
  });
}

export function contentHeight(rows: readonly RowBox[]): number {
  const last = rows[rows.length - 1];
  return last === undefined ? 0 : last.y + last.height;
}
