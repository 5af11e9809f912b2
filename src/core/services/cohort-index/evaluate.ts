// A /v3 filter (as applied by the compiler: values deduplicated, bounds
// checked and normalised) evaluated on the cohort index to the positions of
// the rows it selects, with the semantics of the SQL path: OR within an
// attribute, AND across attributes, exact (case-sensitive) matching, a
// missing value never selected (NULL fails IN and every comparison). The most
// selective clause (known exactly for terms from the codes' frequencies) scans
// first; the others only test the rows it kept.

import type { CompiledFilter } from '../../filters/v3.ts';
import type { RangeColumn } from '../facets/table.ts';
import type { CohortIndex } from './build.ts';
import { findString } from './identifiers.ts';

export type FiltersApplied = CompiledFilter['filters_applied'];

/** Positions rows[0..n) in ascending (table) order. */
export interface Selection {
  rows: Uint32Array;
  n: number;
}

type Clause =
  | { kind: 'coded'; codes: ArrayLike<number>; accepted: Uint8Array; estimate: number }
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

/** The clauses of a filter, or null when an attribute is not in the index (the caller then asks SQL). */
function clausesOf(ix: CohortIndex, applied: FiltersApplied): Clause[] | null {
  // A union of filters (any_of, a cart) is left to SQL: the clauses below are one conjunction.
  if (applied.any_of !== undefined && applied.any_of.length > 0) return null;
  // So are all-of values (a study-level condition) and the missing value (null) in terms.
  if (applied.all_terms !== undefined || Object.values(applied.terms).some((vs) => vs.includes(null))) return null;
  const out: Clause[] = [];
  for (const [name, all] of Object.entries(applied.terms)) {
    const values = all as string[];
    const c = ix.columns.get(name);
    if (c === undefined || c.kind === 'number') return null;
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
    let estimate = 0;
    for (const v of values) {
      const code = c.codeOf(v);
      // Code 0 is the missing value: no filter value selects it.
      if (code === undefined || code === 0 || accepted[code] === 1) continue;
      accepted[code] = 1;
      estimate += c.frequency[code]!;
    }
    out.push({ kind: 'coded', codes: c.codes, accepted, estimate });
  }
  for (const [name, r] of Object.entries(applied.ranges)) {
    const c = ix.columns.get(name);
    if (c === undefined || c.kind !== 'number') return null;
    const [lo, hi] = rangeBounds(c.column, r);
    out.push({ kind: 'number', values: c.column.values, lo, hi, estimate: ix.rows });
  }
  return out.sort((a, b) => a.estimate - b.estimate);
}

/** The positions the first clause selects, scanning every row (or its own list). */
function scan(ix: CohortIndex, c: Clause): Selection {
  if (c.kind === 'rows') return { rows: c.rows, n: c.rows.length };
  const n = ix.rows;
  const rows = new Uint32Array(c.kind === 'coded' ? c.estimate : n);
  let k = 0;
  if (c.kind === 'coded') {
    const { codes, accepted } = c;
    for (let r = 0; r < n; r++) if (accepted[codes[r]!] === 1) rows[k++] = r;
  } else {
    const { values, lo, hi } = c;
    for (let r = 0; r < n; r++) {
      const x = values[r]!;
      if (x >= lo && x <= hi) rows[k++] = r;
    }
  }
  return { rows, n: k };
}

/** Keep the selected rows the clause also selects (in place). */
function narrow(s: Selection, c: Clause): Selection {
  const { rows } = s;
  let k = 0;
  if (c.kind === 'coded') {
    const { codes, accepted } = c;
    for (let i = 0; i < s.n; i++) {
      const r = rows[i]!;
      if (accepted[codes[r]!] === 1) rows[k++] = r;
    }
  } else if (c.kind === 'number') {
    const { values, lo, hi } = c;
    for (let i = 0; i < s.n; i++) {
      const r = rows[i]!;
      const x = values[r]!;
      if (x >= lo && x <= hi) rows[k++] = r;
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

/**
 * The rows a filter selects: 'all' for a filter without clauses, null when
 * the index cannot evaluate it (an attribute it does not hold).
 */
export function selectRows(ix: CohortIndex, applied: FiltersApplied): Selection | 'all' | null {
  const clauses = clausesOf(ix, applied);
  if (clauses === null) return null;
  if (clauses.length === 0) return 'all';
  // A term none of whose values is held selects nothing: no scan.
  if (clauses[0]!.estimate === 0) return { rows: new Uint32Array(0), n: 0 };
  let s = scan(ix, clauses[0]!);
  // The first clause's own list (identifiers) is shared: narrow a copy.
  if (clauses[0]!.kind === 'rows' && clauses.length > 1) s = { rows: s.rows.slice(0, s.n), n: s.n };
  for (let i = 1; i < clauses.length && s.n > 0; i++) s = narrow(s, clauses[i]!);
  return s;
}
