// The rows of a range column of the cohort index in ascending order of their
// value, so a range clause knows exactly how many rows it selects (two binary
// searches) and sets their bits without testing every row: a narrow window,
// or for a window holding nearly every row, the complement. Built from the
// column's own numbers on its first filter (4 bytes per row, about 100 ms for
// a million rows) and kept for the release; the index's layout and loading
// are unchanged. Where the rows of a value come in runs of adjacent rows (a
// study's series share its date), the runs' starts are kept too (at most 2
// bytes per row) and a window's rows are set a run at a time.

/** rows[0..present) ascending by value (ties in row order); rows[present..) are the rows missing a value. */
export interface RangeOrder {
  rows: Uint32Array;
  present: number;
  /**
   * Where each run of adjacent rows (r, r + 1, ...) starts in `rows`, then rows.length: a study's series
   * share its StudyDate and follow one another, so a date's rows come in runs. null when runs would
   * average under two rows (a series-level number), where they would spare little.
   */
  runs: Uint32Array | null;
}

import { clearRows, clearSpan, setRows, setSpan } from './bits.ts';

const built = new WeakMap<Float64Array, RangeOrder>();

/** Index of the first of ascending `sorted` that is >= x (or > x when `strict`). */
function lowerBound(sorted: Float64Array, x: number, strict: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (strict ? sorted[mid]! <= x : sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The order if it was built already (nothing is built here). */
export function builtRangeOrder(values: Float64Array): RangeOrder | undefined {
  return built.get(values);
}

export function rangeOrderOf(values: Float64Array): RangeOrder {
  let o = built.get(values);
  if (o) return o;
  const n = values.length;
  // The distinct values (a native sort of a copy), then a counting sort of the rows by their value's rank.
  // Copied by hand: TypedArray filter gathers its elements in a temporary JS array first (boxed numbers, ~25 MB for a million).
  let present0 = 0;
  for (let r = 0; r < n; r++) if (values[r] === values[r]) present0++;
  const all = new Float64Array(present0);
  for (let r = 0, j = 0; r < n; r++) if (values[r] === values[r]) all[j++] = values[r]!;
  all.sort();
  let k = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[k - 1]) all[k++] = all[i]!;
  const distinct = all.subarray(0, k);
  const rank = new Int32Array(n);
  const start = new Uint32Array(k + 2);
  for (let r = 0; r < n; r++) {
    const x = values[r]!;
    // Missing values rank last.
    const q = x === x ? lowerBound(distinct, x, false) : k;
    rank[r] = q;
    start[q + 1]!++;
  }
  for (let q = 0; q <= k; q++) start[q + 1]! += start[q]!;
  const present = start[k]!;
  const rows = new Uint32Array(n);
  for (let r = 0; r < n; r++) rows[start[rank[r]!]!++] = r;
  o = { rows, present, runs: runsOf(rows) };
  built.set(values, o);
  return o;
}

/** RangeOrder.runs of `rows`. */
function runsOf(rows: Uint32Array): Uint32Array | null {
  let k = 0;
  for (let p = 0; p < rows.length; p++) if (p === 0 || rows[p] !== rows[p - 1]! + 1) k++;
  if (k * 2 > rows.length) return null;
  const runs = new Uint32Array(k + 1);
  k = 0;
  for (let p = 0; p < rows.length; p++) if (p === 0 || rows[p] !== rows[p - 1]! + 1) runs[k++] = p;
  runs[k] = rows.length;
  return runs;
}

/**
 * Set (or clear, when `set` is false) the bits of the rows at positions [from, to) of `o.rows`, a run of
 * adjacent rows at a time: read from the runs when the order has them (a dense StudyDate year of
 * nlst: about a quarter as many as its rows), else found in the rows. `summary` as in setSpan.
 */
export function setOrderRows(bits: Uint32Array, o: RangeOrder, from: number, to: number, set: boolean, summary: Uint32Array | null): void {
  const { rows, runs } = o;
  if (from >= to) return;
  if (runs === null) {
    const part = rows.subarray(from, to);
    if (set) setRows(bits, part, summary);
    else clearRows(bits, part);
    return;
  }
  // The run holding position `from`: the last that starts at or before it.
  let lo = 0;
  let hi = runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (runs[mid]! <= from) lo = mid;
    else hi = mid - 1;
  }
  for (let k = lo, p = from; p < to; k++) {
    const end = Math.min(runs[k + 1]!, to);
    const a = rows[p]!;
    if (set) setSpan(bits, a, a + (end - p) - 1, summary);
    else clearSpan(bits, a, a + (end - p) - 1);
    p = end;
  }
}

/** The positions [from, to) in `o.rows` of the rows whose value is in [lo, hi]. */
export function rangeSpan(o: RangeOrder, values: Float64Array, lo: number, hi: number): [number, number] {
  const search = (x: number, strict: boolean) => {
    let a = 0;
    let b = o.present;
    while (a < b) {
      const mid = (a + b) >>> 1;
      const v = values[o.rows[mid]!]!;
      if (strict ? v <= x : v < x) a = mid + 1;
      else b = mid;
    }
    return a;
  };
  const from = search(lo, false);
  return [from, Math.max(from, search(hi, true))];
}
