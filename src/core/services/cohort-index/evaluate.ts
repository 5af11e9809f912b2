// A /v3 filter (as applied by the compiler: values deduplicated, bounds
// checked and normalised) evaluated on the cohort index to the positions of
// the rows it selects, with the semantics of the SQL path: OR within an
// attribute, AND across attributes, exact (case-sensitive) matching, a
// missing value selected only by a null among the terms (NULL fails IN and
// every comparison); collection attributes and all_terms: more-clauses.ts. The most
// selective clause (known exactly for terms from the codes' frequencies) scans
// first; the others only test the rows it kept. A union (any_of) marks the
// rows of its members and keeps those of the filter's own clauses.

import type { CompiledFilter } from '../../filters/v3.ts';
import type { RangeColumn } from '../facets/table.ts';
import type { CodedColumn, CohortIndex } from './build.ts';
import { ATTRIBUTE_BY_NAME } from '../../registry/attributes.ts';
import { findString } from './identifiers.ts';
import { allTermsClause, collectionClause, withMissingClause } from './more-clauses.ts';
import { rowsOfCodes } from './postings.ts';

export type FiltersApplied = CompiledFilter['filters_applied'];
/** A filter without a union: its clauses all hold. */
type Conjunction = Omit<FiltersApplied, 'any_of'>;

/** Positions rows[0..n) in ascending (table) order. */
export interface Selection {
  rows: Uint32Array;
  n: number;
}

type Clause =
  /** A categorical attribute: each row's code tested against `accepted`, or the rows of `list` read from its postings. */
  | { kind: 'coded'; column: CodedColumn; codes: Uint16Array | Uint32Array; accepted: Uint8Array; list: number[]; estimate: number }
  | { kind: 'number'; values: Float64Array; lo: number; hi: number; estimate: number }
  | { kind: 'rows'; rows: Uint32Array; estimate: number };

/** First index in ascending `sorted` whose value is >= v (or > v when `strict`). */
function bound(sorted: string[], v: string, strict: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (strict ? sorted[mid]! <= v : sorted[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A range as bounds on the column's numbers, or on the ranks of its sorted strings. */
export function rangeBounds(c: RangeColumn, r: { gte?: number | string; lte?: number | string }): [number, number] {
  if (c.sorted === null) return [r.gte === undefined ? -Infinity : Number(r.gte), r.lte === undefined ? Infinity : Number(r.lte)];
  // Ranks 1..n of the sorted distinct values; the engine compares these strings the same way.
  const lo = r.gte === undefined ? 1 : bound(c.sorted, String(r.gte), false) + 1;
  const hi = r.lte === undefined ? c.sorted.length : bound(c.sorted, String(r.lte), true);
  return [lo, hi];
}

interface Extent {
  min: number;
  max: number;
  missing: boolean;
}
const extents = new WeakMap<Float64Array, Extent>();

/** Smallest and largest value of a range column, and whether any row misses it (computed once). */
function extentOf(values: Float64Array): Extent {
  let e = extents.get(values);
  if (e) return e;
  e = { min: Infinity, max: -Infinity, missing: false };
  for (let r = 0; r < values.length; r++) {
    const x = values[r]!;
    if (x !== x) e.missing = true;
    else {
      if (x < e.min) e.min = x;
      if (x > e.max) e.max = x;
    }
  }
  extents.set(values, e);
  return e;
}

/**
 * The clauses of a filter, most selective first, without those that select
 * every row (a range spanning a column no row misses, every value of an
 * attribute); null when an attribute is not in the index (the caller then asks SQL:
 * a term attribute whose column is not text, an identifier without its dictionary).
 */
function clausesOf(ix: CohortIndex, applied: Conjunction): Clause[] | null {
  const out: Clause[] = [];
  const add = (c: Clause | null): boolean => {
    if (c === null) return false;
    if (c.estimate !== ix.rows) out.push(c);
    return true;
  };
  for (const [name, all] of Object.entries(applied.terms)) {
    const c = ix.columns.get(name);
    // A fact of the series' collection, or the missing value among the terms (more-clauses.ts).
    if (c === undefined && ATTRIBUTE_BY_NAME.get(name)?.collection) {
      if (!add(collectionClause(ix, name, all))) return null;
      continue;
    }
    if (c === undefined || c.kind === 'number') return null;
    if (all.includes(null)) {
      if (c.kind !== 'coded' || !add(withMissingClause(c, all))) return null;
      continue;
    }
    const values = all as string[];
    if (c.kind === 'rows') {
      const found: number[] = [];
      for (const v of values) {
        const i = findString(c.dict, v);
        if (i >= 0) found.push(c.dict.targets[i]!);
      }
      const rows = Uint32Array.from(found).sort();
      out.push({ kind: 'rows', rows, estimate: rows.length });
      continue;
    }
    const accepted = new Uint8Array(c.frequency.length);
    const list: number[] = [];
    let estimate = 0;
    for (const v of values) {
      const code = c.codeOf(v);
      // Code 0 is the missing value: no filter value selects it.
      if (code === undefined || code === 0 || accepted[code] === 1) continue;
      accepted[code] = 1;
      list.push(code);
      estimate += c.frequency[code]!;
    }
    if (estimate === ix.rows) continue;
    // Identifiers (entity ids, Int32Array) are read from their postings only, so the code scans below
    // always see one kind of array (V8 runs a loop over several kinds about three times slower).
    if (c.values === null || c.codes instanceof Int32Array) out.push({ kind: 'rows', rows: rowsOfCodes(c, list, estimate), estimate });
    else out.push({ kind: 'coded', column: c, codes: c.codes, accepted, list, estimate });
  }
  for (const [name, r] of Object.entries(applied.ranges)) {
    const c = ix.columns.get(name);
    if (c === undefined || c.kind !== 'number') return null;
    const [lo, hi] = rangeBounds(c.column, r);
    const e = extentOf(c.column.values);
    if (!e.missing && lo <= e.min && hi >= e.max) continue;
    out.push({ kind: 'number', values: c.column.values, lo, hi, estimate: ix.rows });
  }
  for (const [name, values] of Object.entries(applied.all_terms ?? {})) {
    const c = ix.columns.get(name);
    if (c?.kind !== 'coded' || !add(allTermsClause(ix, c, values))) return null;
  }
  return out.sort((a, b) => a.estimate - b.estimate);
}

/**
 * The positions the first clause selects: its own list, its values' postings,
 * or a scan of every row into `into`. `shared`: the rows are a list the index
 * keeps, not to be written.
 */
function scan(ix: CohortIndex, c: Clause, into: Uint32Array | undefined): { sel: Selection; shared: boolean } {
  if (c.kind === 'rows') return { sel: { rows: c.rows, n: c.rows.length }, shared: true };
  // One value, or a few rare ones: their postings instead of a pass over every row.
  if (c.kind === 'coded' && (c.list.length === 1 || c.estimate * 16 < ix.rows)) {
    const rows = rowsOfCodes(c.column, c.list, c.estimate);
    return { sel: { rows, n: rows.length }, shared: c.list.length === 1 };
  }
  const n = ix.rows;
  const rows = into ?? new Uint32Array((c.kind === 'coded' ? c.estimate : n) + 1);
  return { sel: { rows, n: c.kind === 'coded' ? scanCodes(c.codes, c.accepted, n, rows) : scanRange(c.values, c.lo, c.hi, n, rows) }, shared: false };
}

// The loops below write every row and advance past it only when it is kept: no branch to mispredict,
// about three times faster than an if on rows kept at random. `rows` has room for one more than it keeps.
function scanCodes(codes: Uint16Array | Uint32Array, accepted: Uint8Array, n: number, rows: Uint32Array): number {
  let k = 0;
  for (let r = 0; r < n; r++) {
    rows[k] = r;
    k += accepted[codes[r]!]!;
  }
  return k;
}

function scanRange(values: Float64Array, lo: number, hi: number, n: number, rows: Uint32Array): number {
  let k = 0;
  for (let r = 0; r < n; r++) {
    const x = values[r]!;
    rows[k] = r;
    // NaN (missing) fails both comparisons, as NULL does in SQL.
    k += +(x >= lo) & +(x <= hi);
  }
  return k;
}

/** Keep the selected rows the clause also selects (in place). */
function narrow(s: Selection, c: Clause): Selection {
  const { rows } = s;
  let k = 0;
  if (c.kind === 'coded') {
    const { codes, accepted } = c;
    for (let i = 0; i < s.n; i++) {
      const r = rows[i]!;
      rows[k] = r;
      k += accepted[codes[r]!]!;
    }
  } else if (c.kind === 'number') {
    const { values, lo, hi } = c;
    for (let i = 0; i < s.n; i++) {
      const r = rows[i]!;
      const x = values[r]!;
      rows[k] = r;
      k += +(x >= lo) & +(x <= hi);
    }
  } else {
    // Both ascending: a merge.
    let j = 0;
    for (let i = 0; i < s.n; i++) {
      const r = rows[i]!;
      while (j < c.rows.length && c.rows[j]! < r) j++;
      if (j < c.rows.length && c.rows[j] === r) rows[k++] = r;
    }
  }
  return { rows, n: k };
}

/** The rows a conjunction of clauses selects (see selectRows). */
function selectConjunction(ix: CohortIndex, applied: Conjunction, into: Uint32Array | undefined): Selection | 'all' | null {
  const clauses = clausesOf(ix, applied);
  if (clauses === null) return null;
  if (clauses.length === 0) return 'all';
  // A term none of whose values is held selects nothing: no scan.
  if (clauses[0]!.estimate === 0) return { rows: new Uint32Array(0), n: 0 };
  const first = scan(ix, clauses[0]!, into);
  let s = first.sel;
  // A list the index keeps is shared: narrow a copy.
  if (first.shared && clauses.length > 1) {
    const copy = into ?? new Uint32Array(s.n);
    copy.set(s.rows.subarray(0, s.n));
    s = { rows: copy, n: s.n };
  }
  for (let i = 1; i < clauses.length && s.n > 0; i++) s = narrow(s, clauses[i]!);
  return s;
}

/**
 * The rows a filter selects: 'all' for a filter without clauses (or whose
 * clauses select every row), null when the index cannot evaluate it (an
 * attribute it does not hold). The rows may be a list the index keeps (not to
 * be written), or `into` when given (a buffer of ix.rows the caller reuses).
 * A union (any_of) selects the rows of the filter's own clauses that any of
 * its members selects, as the SQL path's AND (... OR ...) does.
 */
export function selectRows(ix: CohortIndex, applied: FiltersApplied, into?: Uint32Array): Selection | 'all' | null {
  const base = selectConjunction(ix, applied, into);
  const members = applied.any_of ?? [];
  if (base === null || members.length === 0) return base;
  const marked = new Uint8Array(ix.rows);
  for (const m of members) {
    const s = selectConjunction(ix, m, undefined);
    if (s === null) return null;
    // A member selecting every row: the union restricts nothing.
    if (s === 'all') return base;
    for (let i = 0; i < s.n; i++) marked[s.rows[i]!] = 1;
  }
  if (base === 'all') {
    const rows = into ?? new Uint32Array(ix.rows + 1);
    let k = 0;
    for (let r = 0; r < ix.rows; r++) {
      rows[k] = r;
      k += marked[r]!;
    }
    return { rows, n: k };
  }
  // In place when the base's rows are `into`; else (they may be a list the index keeps) into a new array.
  const rows = base.rows === into ? into : new Uint32Array(base.n + 1);
  let k = 0;
  for (let i = 0; i < base.n; i++) {
    const r = base.rows[i]!;
    rows[k] = r;
    k += marked[r]!;
  }
  return { rows, n: k };
}
