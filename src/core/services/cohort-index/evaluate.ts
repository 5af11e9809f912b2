// A /v3 filter (as applied by the compiler: values deduplicated, bounds
// checked and normalised) evaluated on the cohort index to the rows it
// selects, a bitset over the rows (bits.ts), with the semantics of the SQL
// path: OR within an attribute, AND across attributes, exact (case-sensitive)
// matching, a missing value selected only by a null among the terms (NULL
// fails IN and every comparison); collection attributes and all_terms:
// more-clauses.ts. Each clause is one kind of Clause (clausesOf) and turns
// into bits through clauseBits / narrowBits. The most selective clause (known
// exactly for terms from the codes' frequencies) sets the bits first; the
// others only test the rows it set. A union (any_of) ORs the bits of its
// members and ANDs them with those of the filter's own clauses.

import type { CompiledFilter } from '../../filters/v3.ts';
import type { RangeColumn } from '../facets/table.ts';
import type { CodedColumn, CohortIndex } from './build.ts';
import { ATTRIBUTE_BY_NAME } from '../../registry/attributes.ts';
import { findString } from './identifiers.ts';
import { frequentValue, valueBits } from './value-bits.ts';
import { allTermsClause, collectionClause, withMissingClause } from './more-clauses.ts';
import { clearRows, countBits, fillRows, liveWords, rowsOfBits, setRows, setSpan, wordsFor } from './bits.ts';
import { postingsBuilt, postingsOf, rowsOfCodes } from './postings.ts';
import { buildSoon } from '../facets/build-soon.ts';
import { rangeOrderOf, rangeSpan, setOrderRows, type RangeOrder } from './range-order.ts';

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
  /** A range: values in [lo, hi]; exactly the rows order.rows[from .. to), so estimate = to - from. */
  | { kind: 'number'; values: Float64Array; lo: number; hi: number; order: RangeOrder; from: number; to: number; estimate: number }
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
    const { values } = c.column;
    const order = rangeOrderOf(values);
    const [from, to] = rangeSpan(order, values, lo, hi);
    out.push({ kind: 'number', values, lo, hi, order, from, to, estimate: to - from });
  }
  for (const [name, values] of Object.entries(applied.all_terms ?? {})) {
    const c = ix.columns.get(name);
    if (c?.kind !== 'coded' || !add(allTermsClause(ix, c, values))) return null;
  }
  return out.sort((a, b) => a.estimate - b.estimate);
}

/**
 * Rows (of n) of a coded clause in each word; `narrow`: only words already set, ANDed (a later clause),
 * those of `live` (the words that may be set, ascending: Sparse) when it is known.
 */
function codeWords(codes: Uint16Array | Uint32Array, accepted: Uint8Array, n: number, bits: Uint32Array, narrow: boolean, live: Sparse | null): void {
  if (narrow) {
    // Only the rows still selected are tested: a word of a narrow selection holds a few of its 32.
    for (let i = 0, m = live === null ? bits.length : live.n; i < m; i++) {
      const w = live === null ? i : live.words[i]!;
      let y = bits[w]!;
      if (y === 0) continue;
      let x = 0;
      for (const base = w << 5; y !== 0; ) {
        const low = y & -y;
        y ^= low;
        if (accepted[codes[base + 31 - Math.clz32(low)]!] === 1) x |= low;
      }
      bits[w] = x;
    }
    return;
  }
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    let x = 0;
    for (let j = 0, r = w << 5; j < 32; j++, r++) x |= accepted[codes[r]!]! << j;
    bits[w] = x;
  }
  if (full << 5 < n) {
    let x = 0;
    for (let r = full << 5; r < n; r++) x |= accepted[codes[r]!]! << (r & 31);
    bits[full] = x;
  }
}

/** The same for a range clause. NaN (missing) fails both comparisons, as NULL does in SQL. */
function rangeWords(values: Float64Array, lo: number, hi: number, n: number, bits: Uint32Array, narrow: boolean, live: Sparse | null): void {
  if (narrow) {
    for (let i = 0, m = live === null ? bits.length : live.n; i < m; i++) {
      const w = live === null ? i : live.words[i]!;
      let y = bits[w]!;
      if (y === 0) continue;
      let x = 0;
      for (const base = w << 5; y !== 0; ) {
        const low = y & -y;
        y ^= low;
        const v = values[base + 31 - Math.clz32(low)]!;
        if (v >= lo && v <= hi) x |= low;
      }
      bits[w] = x;
    }
    return;
  }
  const full = n >>> 5;
  for (let w = 0; w < full; w++) {
    let x = 0;
    for (let j = 0, r = w << 5; j < 32; j++, r++) {
      const v = values[r]!;
      x |= (+(v >= lo) & +(v <= hi)) << j;
    }
    bits[w] = x;
  }
  if (full << 5 < n) {
    let x = 0;
    for (let r = full << 5; r < n; r++) {
      const v = values[r]!;
      x |= (+(v >= lo) & +(v <= hi)) << (r & 31);
    }
    bits[full] = x;
  }
}

/**
 * Rows a clause touches to set its bits from a list of rows instead of
 * testing every row (its postings, its range's rows in value order, or those
 * of the complement, whichever is shorter); Infinity when it should scan.
 */
function directCost(ix: CohortIndex, c: Clause): number {
  if (c.kind === 'rows') return c.rows.length;
  const fewer = Math.min(c.estimate, ix.rows - c.estimate);
  // A term's postings (4 bytes per row, built on first use) only when they spare most of a scan.
  return c.kind === 'number' || fewer * POSTINGS_SHARE < ix.rows ? fewer : Infinity;
}

/** A term clause's postings are read instead of every row's code when it touches under 1 / POSTINGS_SHARE of the rows. */
const POSTINGS_SHARE = 2;

/**
 * The rows of a clause into every word of `bits`, from lists of rows (see directCost). When the clause's
 * rows are set on cleared bits, `summary` (cleared here) gets the words written and true is returned.
 */
function directBits(ix: CohortIndex, c: Clause, bits: Uint32Array, summary: Uint32Array | null): boolean {
  const n = ix.rows;
  summary?.fill(0);
  if (c.kind === 'rows') {
    bits.fill(0);
    setRows(bits, c.rows, summary);
    return true;
  }
  if (c.kind === 'number') {
    const { order } = c;
    if ((c.to - c.from) * 2 <= n) {
      bits.fill(0);
      setOrderRows(bits, order, c.from, c.to, true, summary);
      return true;
    }
    // Nearly every row: all, less those outside the range (missing values included).
    fillRows(bits, n);
    setOrderRows(bits, order, 0, c.from, false, null);
    setOrderRows(bits, order, c.to, n, false, null);
    return false;
  }
  const { start, rows } = postingsOf(c.column);
  if (c.estimate * 2 <= n) {
    bits.fill(0);
    for (const code of c.list) {
      // A value's rows ascend: one whose rows are adjacent (a collection's, in manifest order) is a span, set a word at a time unread.
      const a = start[code]!;
      const b = start[code + 1]!;
      if (b > a && rows[b - 1]! - rows[a]! === b - 1 - a) setSpan(bits, rows[a]!, rows[b - 1]!, summary);
      else setRows(bits, rows.subarray(a, b), summary);
    }
    return true;
  }
  fillRows(bits, n);
  for (let code = 0; code + 1 < start.length; code++) if (c.accepted[code] !== 1) clearRows(bits, rows.subarray(start[code]!, start[code + 1]!));
  return false;
}

/** At most this many values of a term clause are read from their bitsets (value-bits.ts); more are tested row by row. */
const VALUE_SETS = 4;

/**
 * Whether a term clause is to be tested row by row because its column's postings are not built yet:
 * building them (a counting sort of every row) costs more than one scan, so the first filters on a
 * column after start scan it, and the postings are built right after (on a later turn of the event loop).
 */
function scanFirst(c: Clause): boolean {
  if (c.kind !== 'coded' || postingsBuilt(c.column)) return false;
  const column = c.column;
  buildSoon(column.codes, () => postingsOf(column));
  return true;
}

/** The bitsets of a term clause's values when every one is frequent (value-bits.ts), else null. */
function valueSets(ix: CohortIndex, c: Clause): Uint32Array[] | null {
  if (c.kind !== 'coded' || c.list.length > VALUE_SETS || !postingsBuilt(c.column)) return null;
  for (const code of c.list) if (!frequentValue(c.column, code, ix.rows)) return null;
  return c.list.map((code) => valueBits(c.column, code, ix.rows));
}

/** The rows of a clause by testing each row's value; `narrow`: only the words already set (those of `live` when known), ANDed. */
function scanBits(ix: CohortIndex, c: Exclude<Clause, { kind: 'rows' }>, bits: Uint32Array, narrow: boolean, live: Sparse | null): void {
  if (c.kind === 'coded') codeWords(c.codes, c.accepted, ix.rows, bits, narrow, live);
  else rangeWords(c.values, c.lo, c.hi, ix.rows, bits, narrow, live);
}

/** The rows of a clause, into every word of `bits`; true when `summary` holds the words written (see directBits). */
function clauseBits(ix: CohortIndex, c: Clause, bits: Uint32Array, summary: Uint32Array | null): boolean {
  if (c.kind !== 'rows' && scanFirst(c)) {
    scanBits(ix, c, bits, false, null);
    return false;
  }
  const sets = valueSets(ix, c);
  // Frequent values: their bitsets ORed, a pass over the words, when that is cheaper than setting their rows.
  if (sets !== null && sets.length * bits.length < directCost(ix, c)) {
    bits.set(sets[0]!);
    for (let k = 1; k < sets.length; k++) {
      const other = sets[k]!;
      for (let w = 0; w < bits.length; w++) bits[w]! |= other[w]!;
    }
    return false;
  }
  if (c.kind === 'rows' || directCost(ix, c) < ix.rows) return directBits(ix, c, bits, summary);
  scanBits(ix, c, bits, false, null);
  return false;
}

/**
 * Keep the rows of `bits` the clause also selects (in place); `selected`: at most this many rows of `bits`
 * are set; `live`: the only words that may be set, when known.
 */
function narrowBits(ix: CohortIndex, bits: Uint32Array, c: Clause, selected: number, live: Sparse | null): void {
  const direct = directCost(ix, c);
  const words = live === null ? bits.length : live.n;
  const sets = valueSets(ix, c);
  // Frequent values: the words still set ANDed with the OR of their bitsets, when that beats testing the rows.
  if (sets !== null && sets.length * words < Math.min(selected, direct)) {
    for (let i = 0; i < words; i++) {
      const w = live === null ? i : live.words[i]!;
      if (bits[w] === 0) continue;
      let m = 0;
      for (let k = 0; k < sets.length; k++) m |= sets[k]![w]!;
      bits[w]! &= m;
    }
    return;
  }
  // Testing the rows still selected, or the clause's own bits ANDed: whichever touches fewer rows.
  if (c.kind !== 'rows' && (selected <= direct || direct === Infinity || scanFirst(c))) {
    scanBits(ix, c, bits, true, live);
    return;
  }
  const own = new Uint32Array(bits.length);
  directBits(ix, c, own, null);
  for (let i = 0, m = live === null ? bits.length : live.n; i < m; i++) {
    const w = live === null ? i : live.words[i]!;
    bits[w]! &= own[w]!;
  }
}

/**
 * The words of a selection that may hold a selected row, ascending: words[0 .. n). Every other word is
 * zero; a listed word may be zero too (a later clause cleared it). Filled by selectSparse.
 */
export interface Sparse {
  words: Uint32Array;
  n: number;
}

/** Buffers of selectSparse: the words of a selection (wordsFor(rows)) and their summary (summaryFor of that). */
export interface SparseScratch {
  words: Uint32Array;
  summary: Uint32Array;
}

/** The rows a conjunction of clauses selects (see selectBits), and its live words when `scratch` is given and they are known. */
function conjunctionBits(ix: CohortIndex, applied: Conjunction, into: Uint32Array | undefined, scratch: SparseScratch | null = null): { bits: Uint32Array; live: Sparse | null } | 'all' | null {
  const clauses = clausesOf(ix, applied);
  if (clauses === null) return null;
  if (clauses.length === 0) return 'all';
  const bits = into ?? new Uint32Array(wordsFor(ix.rows));
  // A term none of whose values is held selects nothing: no scan.
  if (clauses[0]!.estimate === 0) {
    bits.fill(0);
    return { bits, live: scratch && { words: scratch.words, n: 0 } };
  }
  // The most selective clause first: the others only test the rows it set (or AND their own bits), in the
  // words it wrote when it set its rows one list at a time (a few of them, for a narrow clause).
  const summarised = clauseBits(ix, clauses[0]!, bits, scratch?.summary ?? null);
  const live = scratch !== null && summarised ? { words: scratch.words, n: liveWords(bits, scratch.summary, scratch.words) } : null;
  // The rows still selected are at most the fewest any clause so far selects (the first's estimate: they are sorted, and
  // exact for terms and ranges): a bound that spares counting the bits before each clause.
  for (let i = 1; i < clauses.length; i++) narrowBits(ix, bits, clauses[i]!, clauses[0]!.estimate, live);
  return { bits, live };
}

/**
 * The rows a filter selects, as a bitset (bits.ts): 'all' for a filter
 * without clauses (or whose clauses select every row), null when the index
 * cannot evaluate it (an attribute it does not hold). Written into `into`
 * when given (wordsFor(ix.rows) words the caller reuses). A union (any_of)
 * selects the rows of the filter's own clauses that any of its members
 * selects, as the SQL path's AND (... OR ...) does.
 */
export function selectBits(ix: CohortIndex, applied: FiltersApplied, into?: Uint32Array): Uint32Array | 'all' | null {
  const s = selectSparse(ix, applied, into);
  return s === null || s === 'all' ? s : s.bits;
}

/**
 * selectBits, and with `scratch` the words of the selection that may be set (Sparse; null when not
 * known, as for a union or a clause that selects most rows), for totals that visit only those.
 */
export function selectSparse(ix: CohortIndex, applied: FiltersApplied, into?: Uint32Array, scratch: SparseScratch | null = null): { bits: Uint32Array; live: Sparse | null } | 'all' | null {
  const base = conjunctionBits(ix, applied, into, scratch);
  const members = applied.any_of ?? [];
  if (base === null || members.length === 0) return base;
  const words = wordsFor(ix.rows);
  const union = new Uint32Array(words);
  const member = new Uint32Array(words);
  for (const m of members) {
    const s = conjunctionBits(ix, m, member);
    if (s === null) return null;
    // A member selecting every row: the union restricts nothing.
    if (s === 'all') return base;
    for (let w = 0; w < words; w++) union[w]! |= s.bits[w]!;
  }
  if (base === 'all') return { bits: union, live: null };
  for (let w = 0; w < words; w++) base.bits[w]! &= union[w]!;
  return base;
}

/** The rows a filter selects as positions, ascending (see selectBits); `into` has room for ix.rows. */
export function selectRows(ix: CohortIndex, applied: FiltersApplied, into?: Uint32Array): Selection | 'all' | null {
  const bits = selectBits(ix, applied);
  if (bits === null || bits === 'all') return bits;
  const rows = into ?? new Uint32Array(countBits(bits));
  return { rows, n: rowsOfBits(bits, rows) };
}
