import type { Row, WindowData } from '../../src/core/timeline/protocol';

/** Height of the time axis at the top of the canvas. */
export const HEADER = 22;
/** Width of the lane names on the left. */
export const GUTTER = 132;
/** A lane's event strip; spans stack below it. */
export const ROW_BASE = 28;
export const SPAN_ROW = 7;
/** Where the event markers and arrow ends sit inside a row. */
export const ROW_MID = 14;

export interface RowBox extends Row {
  y: number;
  height: number;
}

/** Rows stacked top to bottom (in content coordinates, below the header), tall enough for their spans. */
export function layoutRows(data: WindowData): RowBox[] {
  const depth = new Int32Array(data.rows.length).fill(-1);
  for (let s = 0; s < data.spans.row.length; s++) depth[data.spans.row[s]] = Math.max(depth[data.spans.row[s]], data.spans.depth[s]);
  let y = 0;
  return data.rows.map((row, r) => {
    const height = ROW_BASE + (depth[r] >= 0 ? (Math.min(depth[r], 7) + 1) * SPAN_ROW + 2 : 0);
    const box = { ...row, y, height };
    y += height;
    return box;
  });
}

export function contentHeight(rows: readonly RowBox[]): number {
  const last = rows[rows.length - 1];
  return last === undefined ? 0 : last.y + last.height;
}
