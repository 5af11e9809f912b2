// What a chart of a SQL result plots: which columns are numbers (by the
// engine's type, so a text column of digits stays a category), a sensible
// first choice of axes, and the points themselves. Rows whose value is not a
// finite number are left out and counted, never drawn as zero.

import type { Cell, SqlResult } from './api.ts';

export type SqlChartKind = 'bar' | 'line' | 'scatter';

/** Most bars one chart draws: past that a bar chart is unreadable (the rest are counted, not drawn). */
export const MAX_BARS = 100;

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|REAL|DECIMAL(\(\d+,\s*\d+\))?)$/i;

/** Whether the engine typed a column as a number. */
export const isNumericType = (type: string | undefined) => NUMERIC.test((type ?? '').trim());

export function numericColumns(r: Pick<SqlResult, 'columns' | 'types'>): string[] {
  return r.columns.filter((_, i) => isNumericType(r.types[i]));
}

/** A value as a number, or null when it is none (NULL, text, NaN). */
export function numberOf(v: Cell | undefined): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** The first choice of axes: categories along x (the first non-numeric column) and the first other numeric column up. */
export function defaultAxes(r: Pick<SqlResult, 'columns' | 'types'>): { x: string; y: string; kind: SqlChartKind } | null {
  const nums = numericColumns(r);
  if (nums.length === 0) return null;
  const category = r.columns.find((c) => !nums.includes(c));
  if (category) return { x: category, y: nums[0]!, kind: 'bar' };
  if (nums.length < 2) return null;
  return { x: nums[0]!, y: nums[1]!, kind: 'scatter' };
}

export interface Points {
  /** Category labels (bar, line) in row order; empty for scatter. */
  labels: string[];
  /** y per label (bar, line), or {x, y} pairs (scatter). */
  values: number[];
  xy: { x: number; y: number }[];
  /** Rows left out: a missing or non-numeric value, or past MAX_BARS bars. */
  skipped: number;
}

export function pointsOf(r: Pick<SqlResult, 'rows'>, kind: SqlChartKind, x: string, y: string): Points {
  const out: Points = { labels: [], values: [], xy: [], skipped: 0 };
  for (const row of r.rows) {
    const yv = numberOf(row[y]);
    if (kind === 'scatter') {
      const xv = numberOf(row[x]);
      if (xv === null || yv === null) out.skipped++;
      else out.xy.push({ x: xv, y: yv });
      continue;
    }
    if (yv === null || (kind === 'bar' && out.labels.length >= MAX_BARS)) {
      out.skipped++;
      continue;
    }
    const xv = row[x];
    out.labels.push(xv === null || xv === undefined ? '(null)' : typeof xv === 'object' ? JSON.stringify(xv) : String(xv));
    out.values.push(yv);
  }
  return out;
}
