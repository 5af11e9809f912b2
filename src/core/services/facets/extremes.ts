// Smallest and largest value of a range attribute among the rows a facet
// counts, found after the pass instead of comparing every row's value in it:
// the pass's counts tell the lowest and highest bins holding a counted row,
// and the rows in ascending order of value (range-order.ts, shared with the
// cohort index's range filters; 4 bytes per row, built once per column) give
// each bin's rows, so only the rows of those two bins that are not counted
// are read before the extremes, usually none.

import { builtRangeOrder, rangeOrderOf } from '../cohort-index/range-order.ts';
import { buildSoon } from './build-soon.ts';
import type { Entity, FacetTable, RangeColumn } from './table.ts';

/** Whether the row at position r is counted for slot s: in the cohort, or rejected only by a clause on s. */
export interface Counted {
  fail: Uint8Array;
  which: Uint8Array;
  /** Facet slot of each clause (-1: none). */
  clauseSlot: Int32Array;
  entity: Entity;
}

function isCounted(k: Counted, s: number, r: number): boolean {
  const e = k.entity.ids === null ? r + 1 : k.entity.ids[r]!;
  if (e === 0) return false;
  const f = k.fail[r]!;
  return f === 0 || (f === 1 && k.clauseSlot[k.which[r]!] === s);
}

/** [min, max] (numbers, or ranks for strings) of column c over the counted rows, NaN when none; `counts` per code (bin + 1) from the pass. */
export function extremes(t: FacetTable, c: RangeColumn, counts: Int32Array, k: Counted): [number, number] {
  const s = c.slot;
  // No bins (values the edges could not be drawn for): every counted row is read.
  if (c.edges.length < 2) return scan(c, k);
  let lowBin = 1;
  while (lowBin < counts.length && counts[lowBin] === 0) lowBin++;
  let highBin = counts.length - 1;
  while (highBin >= 1 && counts[highBin] === 0) highBin--;
  if (lowBin > highBin) return [NaN, NaN];
  // The first facets after start read every row rather than wait for the order (~0.2 s a column), built right after.
  const order = builtRangeOrder(c.values);
  if (order === undefined) {
    buildSoon(c.values, () => rangeOrderOf(c.values));
    return scan(c, k);
  }
  const { rows, present } = order;
  const { codes, width } = t;
  const code = (i: number) => codes[rows[i]! * width + s]!;
  // Codes ascend with the values: the first position of the lowest bin, the last of the highest.
  let a = 0;
  let b = present;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (code(mid) < lowBin) a = mid + 1;
    else b = mid;
  }
  let min = NaN;
  for (let i = a; i < present && code(i) === lowBin; i++) {
    if (isCounted(k, s, rows[i]!)) {
      min = c.values[rows[i]!]!;
      break;
    }
  }
  a = 0;
  b = present;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (code(mid) <= highBin) a = mid + 1;
    else b = mid;
  }
  let max = NaN;
  for (let i = a - 1; i >= 0 && code(i) === highBin; i--) {
    if (isCounted(k, s, rows[i]!)) {
      max = c.values[rows[i]!]!;
      break;
    }
  }
  return [min, max];
}

function scan(c: RangeColumn, k: Counted): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let r = 0; r < c.values.length; r++) {
    const x = c.values[r]!;
    if (!(x >= lo && x <= hi) && x === x && isCounted(k, c.slot, r)) {
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
  }
  return lo <= hi ? [lo, hi] : [NaN, NaN];
}
