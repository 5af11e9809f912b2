// Which histogram bins to draw: the bins a few stray values sit in (dates
// of 1880 among scans of the 2000s) would squeeze the data into a sliver,
// so thin tails holding at most TAIL of the total are left off the axis and
// counted in a note instead.

import type { Bound, Bucket } from './api.ts';

const TAIL = 0.005;

export interface ShownBins<B> {
  shown: B[];
  /** Count left off before and after the bins shown (a bin's `key` counts). */
  before: number;
  after: number;
  /** Lowest and highest bound of the bins left off on each side, when any. */
  from: Bound | null;
  to: Bound | null;
}

export function mainBins<B extends Bucket & { gte: Bound; lt: Bound }>(bins: B[], key: 'count' | 'filtered_count'): ShownBins<B> {
  const total = bins.reduce((a, b) => a + b[key], 0);
  if (total === 0) return { shown: [], before: 0, after: 0, from: null, to: null };
  const budget = total * TAIL;
  let first = 0;
  let before = 0;
  while (first < bins.length - 1 && before + bins[first]![key] <= budget) before += bins[first++]![key];
  let last = bins.length - 1;
  let after = 0;
  while (last > first && after + bins[last]![key] <= budget) after += bins[last--]![key];
  // Empty bins at either end are never worth drawing.
  while (first < last && bins[first]![key] === 0) first++;
  while (last > first && bins[last]![key] === 0) last--;
  const lowest = bins.findIndex((b) => b[key] > 0);
  let highest = bins.length - 1;
  while (highest > 0 && bins[highest]![key] === 0) highest--;
  return {
    shown: bins.slice(first, last + 1),
    before,
    after,
    from: before > 0 ? bins[lowest]!.gte : null,
    to: after > 0 ? bins[highest]!.lt : null,
  };
}
