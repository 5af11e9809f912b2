// Counts the cohort index answered, kept per index by the filter's canonical
// form: the release never changes while it is open, so an answer stays true,
// and a filter asked again (an explorer refreshing, a benchmark, an agent
// retrying) costs a lookup instead of a pass over the rows.

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { CohortIndex } from './build.ts';
import { bitTotals, bitTotalsReady, prepareBitTotals } from './bit-totals.ts';
import { buildSoon } from '../facets/build-soon.ts';
import { totalsOf } from './totals.ts';
import { countBits, rowsOfBits, summaryFor, wordsFor } from './bits.ts';
import { selectSparse, type FiltersApplied, type SparseScratch } from './evaluate.ts';
import type { Totals } from './totals.ts';

/** The filter as applied, in a canonical order: attribute names and term values sorted. */
export function canonical(applied: FiltersApplied): string {
  const part = (a: Omit<FiltersApplied, 'any_of'>) => [
    Object.keys(a.terms)
      .sort()
      .map((k) => [k, [...a.terms[k]!].sort()]),
    Object.keys(a.ranges)
      .sort()
      .map((k) => [k, a.ranges[k]!.gte ?? null, a.ranges[k]!.lte ?? null]),
    Object.keys(a.all_terms ?? {})
      .sort()
      .map((k) => [k, [...a.all_terms![k]!].sort()]),
  ];
  const subs = applied.any_of?.map(part);
  return JSON.stringify(subs && subs.length > 0 ? [...part(applied), subs] : part(applied));
}

/** Most term values of a filter keyed by its canonical form. Past them the key is a digest of the filter as given: a
 * pasted list of 45,000 PatientIDs took longer to sort than to count, and 5,000 keys of a megabyte each would hold
 * gigabytes. (The same list in another order is then another key: it is counted again, never answered wrongly.) */
export const MAX_KEY_VALUES = 1000;

/** The key an answer of this filter is kept under. */
export function answerKey(applied: FiltersApplied): string {
  let n = 0;
  for (const a of [applied, ...(applied.any_of ?? [])]) {
    for (const vs of Object.values(a.terms)) n += vs.length;
    for (const vs of Object.values(a.all_terms ?? {})) n += vs.length;
  }
  return n > MAX_KEY_VALUES ? `#${createHash('sha256').update(JSON.stringify(applied)).digest('base64')}` : canonical(applied);
}

/** Answers kept per index: a few hundred bytes each. */
const KEPT = 5000;

interface State {
  answers: LRUCache<string, Totals>;
  /** The bits of a selection and its live words, reused: the counting below is synchronous, so one set of buffers serves every request. */
  scratch: Uint32Array;
  sparse: SparseScratch;
}
const states = new WeakMap<CohortIndex, State>();

/**
 * The totals of the first selections counted after start, from their rows: bitTotals' structures cost
 * more than such a count (tens of ms for a million rows), so they are built right after it instead.
 */
function firstTotals(ix: CohortIndex, bits: Uint32Array): Totals {
  buildSoon(ix, () => prepareBitTotals(ix));
  const rows = new Uint32Array(countBits(bits));
  return totalsOf(ix, rows, rowsOfBits(bits, rows));
}

/** The totals of a filter from the index (remembered), or null when the index cannot evaluate it. */
export function indexTotals(ix: CohortIndex, applied: FiltersApplied): Totals | null {
  let st = states.get(ix);
  if (!st) {
    const words = wordsFor(ix.rows);
    st = { answers: new LRUCache({ max: KEPT }), scratch: new Uint32Array(words), sparse: { words: new Uint32Array(words), summary: new Uint32Array(summaryFor(words)) } };
    states.set(ix, st);
  }
  const key = answerKey(applied);
  const kept = st.answers.get(key);
  if (kept) return kept;
  const sel = selectSparse(ix, applied, st.scratch, st.sparse);
  if (sel === null) return null;
  const totals = sel === 'all' ? ix.all : bitTotalsReady(ix) ? bitTotals(ix, sel.bits, sel.live) : firstTotals(ix, sel.bits);
  st.answers.set(key, totals);
  return totals;
}
