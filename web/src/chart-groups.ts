// The bars of a categorical chart: spellings of one value that differ only in
// case ("Breast", "breast") are one bar and one choice selecting them all, and
// the bars that stand for several raw values (such a group, or the "others"
// after the first few) are counted by the service as a cohort (the cohort and
// any of those values), so a patient with two of them is counted once and no
// bar exceeds the cohort's total. A multi-valued attribute's counts do not add.

import { useEffect, useState } from 'preact/hooks';
import { post, type CountMode, type Filter, type TermFacet, type Totals } from './api.ts';

export interface Bar {
  label: string;
  /** The raw values the bar stands for (one choice selects them all). */
  values: string[];
  /** Exact when `exact`; else the largest of its values' counts until the service's count arrives. */
  count: number;
  exact: boolean;
  others: boolean;
}

/** Case variants of one value grouped (the most frequent spelling names the group), largest first. */
export function groupValues(facet: TermFacet): { key: string; values: string[]; counts: number[] }[] {
  const groups = new Map<string, { key: string; values: string[]; counts: number[] }>();
  const sorted = facet.values.filter((v) => v.filtered_count > 0).sort((a, b) => b.filtered_count - a.filtered_count);
  for (const v of sorted) {
    const k = v.value.trim().toLowerCase();
    const g = groups.get(k) ?? { key: v.value, values: [], counts: [] };
    g.values.push(v.value);
    g.counts.push(v.filtered_count);
    groups.set(k, g);
  }
  return [...groups.values()];
}

/** The cohort narrowed to the series with any of these values of one attribute. */
function narrowed(filter: Filter, attr: string, values: string[]): Filter {
  return { ...filter, any_of: [{ terms: { [attr]: values }, ranges: {} }] };
}

/** The chart's bars: the first `top` groups and one "others" bar, with exact counts asked of /v3/cohort/counts where a bar holds several values. */
export function useBars(attr: string, facet: TermFacet, filter: Filter, mode: CountMode, top: number): Bar[] {
  const groups = groupValues(facet);
  const shown = groups.slice(0, top);
  const rest = groups.slice(top).flatMap((g) => g.values);
  const bars: Bar[] = shown.map((g) => ({ label: g.key, values: g.values, count: Math.max(...g.counts), exact: g.values.length === 1, others: false }));
  if (rest.length > 0) bars.push({ label: `${groups.length - top} others`, values: rest, count: 0, exact: false, others: true });
  const asks = bars.filter((b) => !b.exact);
  const key = JSON.stringify([attr, filter, mode, asks.map((b) => b.values)]);
  const [exact, setExact] = useState<{ key: string; counts: number[] } | null>(null);
  useEffect(() => {
    if (asks.length === 0) return;
    const ac = new AbortController();
    Promise.all(asks.map((b) => post<Totals>('/v3/cohort/counts', narrowed(filter, attr, b.values), ac.signal)))
      .then((ts) => setExact({ key, counts: ts.map((t) => t[mode]) }))
      .catch(() => {}); // the bars keep their lower bounds; "others" stays hidden
    return () => ac.abort();
  }, [key]);
  if (exact?.key === key) asks.forEach((b, i) => Object.assign(b, { count: exact.counts[i]!, exact: true }));
  // Until counted, "others" is left out rather than shown as a sum that may exceed the total.
  const drawn = bars.filter((b) => !b.others).sort((x, y) => y.count - x.count);
  return [...drawn, ...bars.filter((b) => b.others && b.exact)];
}
