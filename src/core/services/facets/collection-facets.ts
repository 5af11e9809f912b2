// Facets of the collection-level attributes (program, cancer type, tumor
// location, species): a row's values are its collection's, so the filter is
// a clause over the collection_id codes. A collection can list several values
// and one patient ID can appear in two collections, so counts are distinct
// entities per value: for an attribute without a clause of its own, the main
// pass's distinct entities per collection summed over the collections listing
// a value, less the entities in several of those (counted from their own rows:
// 89 patients of the 25.0.5 release); with its own clause, one extra walk.

import { termClause, type Clause, type PassResult } from './count.ts';
import type { CollectionColumn, CountMode, FacetTable } from './table.ts';

/** The clause of a collection-level term filter: rows whose collection lists none of the selected values are rejected. */
export function collectionClause(t: FacetTable, c: CollectionColumn, selected: string[], orMissing = false): Clause {
  const wanted = new Uint8Array(c.values.length + 1);
  for (const v of selected) {
    const code = c.codeOf.get(v);
    if (code !== undefined) wanted[code] = 1;
  }
  // orMissing: also a collection listing no value (the SQL path's NOT IN the collections that list one).
  const accepted = Uint8Array.from(c.valuesOf, (codes) => (codes.some((x) => wanted[x] === 1) || (orMissing && codes.length === 0) ? 1 : 0));
  // A term clause over the collection_id codes; not a slot of its own: no other facet counts rows this clause alone rejects.
  return { ...termClause(t, c.def.name, c.collectionSlot, accepted), slot: -1 };
}

export interface CollectionCounts {
  /** Per value code (0: no value): entities among rows passing every other clause. */
  counts: Int32Array;
  /** The same among rows passing every clause. */
  filtered: Int32Array;
}

/** A collection-level attribute to count, and the index of its own clause (-1: none). */
export interface CollectionCount {
  column: CollectionColumn;
  own: number;
}

/**
 * Count collection-level attributes after the main pass. Those with the same
 * own clause (all of them, without a collection-level filter) accept the same
 * rows: one walk counts them together.
 */
export function countCollections(t: FacetTable, wanted: CollectionCount[], pass: PassResult, mode: CountMode): Map<string, CollectionCounts> {
  const out = new Map<string, CollectionCounts>();
  const byOwn = new Map<number, CollectionColumn[]>();
  for (const w of wanted) byOwn.set(w.own, [...(byOwn.get(w.own) ?? []), w.column]);
  for (const [own, columns] of byOwn) {
    const slot = columns[0]!.collectionSlot;
    const counted =
      t.entities[mode].ids === null
        ? columns.map((c) => rowCounts(t, c, pass, own, Int32Array.of(0)))
        : own < 0 && pass.counts[slot]!.length > 0 && pass.counted[slot] === 1
          ? columns.map((c) => fromCollections(t, c, pass, mode))
          : walk(t, columns, pass, own, mode);
    columns.forEach((c, k) => out.set(c.def.name, counted[k]!));
  }
  return out;
}

/** Entities of a count mode with rows in several collections: entity k's rows are rows[start[k] .. start[k + 1]). */
interface Spread {
  start: Uint32Array;
  rows: Uint32Array;
}
const spreads = new WeakMap<FacetTable, Map<CountMode, Spread>>();

function spreadOf(t: FacetTable, slot: number, mode: CountMode): Spread {
  let m = spreads.get(t);
  if (!m) spreads.set(t, (m = new Map()));
  let s = m.get(mode);
  if (s) return s;
  const ids = t.entities[mode].ids!;
  const { codes, width, rows } = t;
  let max = 0;
  for (let r = 0; r < rows; r++) if (ids[r]! > max) max = ids[r]!;
  const first = new Int32Array(max + 1).fill(-1);
  const slotOf = new Int32Array(max + 1).fill(-1);
  let entities = 0;
  for (let r = 0; r < rows; r++) {
    const e = ids[r]!;
    if (e === 0) continue;
    const code = codes[r * width + slot]!;
    if (first[e] === -1) first[e] = code;
    else if (first[e] !== code && slotOf[e] === -1) slotOf[e] = entities++;
  }
  const start = new Uint32Array(entities + 1);
  for (let r = 0; r < rows; r++) if (slotOf[ids[r]!]! >= 0) start[slotOf[ids[r]!]! + 1]!++;
  for (let k = 0; k < entities; k++) start[k + 1]! += start[k]!;
  const next = start.slice(0, entities);
  const list = new Uint32Array(start[entities]!);
  for (let r = 0; r < rows; r++) {
    const k = slotOf[ids[r]!]!;
    if (k >= 0) list[next[k]!++] = r;
  }
  s = { start, rows: list };
  m.set(mode, s);
  return s;
}

/**
 * A column without a clause of its own, from the main pass's distinct entities
 * per collection (every clause holding): each value sums the collections that
 * list it. An entity in several collections listing one value is in several
 * of those sums: the excess is taken off, from its own rows.
 */
function fromCollections(t: FacetTable, c: CollectionColumn, pass: PassResult, mode: CountMode): CollectionCounts {
  const slot = c.collectionSlot;
  const perCollection = pass.filtered[slot] ?? pass.counts[slot]!;
  const n = c.values.length + 1;
  const counts = new Int32Array(n);
  const none = Int32Array.of(0);
  const listedBy = (code: number) => (c.valuesOf[code]!.length === 0 ? none : c.valuesOf[code]!);
  for (let code = 0; code < perCollection.length; code++) {
    if (perCollection[code] === 0) continue;
    for (const x of listedBy(code)) counts[x]! += perCollection[code]!;
  }
  const { start, rows } = spreadOf(t, slot, mode);
  const { fail } = pass;
  const { codes, width } = t;
  const seenCode = new Int32Array(t.slotSizes[slot]!).fill(-1);
  const times = new Int32Array(n);
  for (let k = 0; k + 1 < start.length; k++) {
    const touched: number[] = [];
    for (let i = start[k]!; i < start[k + 1]!; i++) {
      const r = rows[i]!;
      if (fail[r] !== 0) continue;
      const code = codes[r * width + slot]!;
      if (seenCode[code] === k) continue;
      seenCode[code] = k;
      for (const x of listedBy(code)) {
        if (times[x] === 0) touched.push(x);
        times[x]!++;
      }
    }
    for (const x of touched) {
      counts[x]! -= times[x]! - 1;
      times[x] = 0;
    }
  }
  return { counts, filtered: counts };
}

/** One walk in entity order for columns sharing an own clause; `own` is the index of that clause, or -1. */
function walk(t: FacetTable, columns: CollectionColumn[], pass: PassResult, own: number, mode: CountMode): CollectionCounts[] {
  const sizes = columns.map((c) => c.values.length + 1);
  const counts = sizes.map((n) => new Int32Array(n));
  const filtered = sizes.map((n) => new Int32Array(n));
  const last = sizes.map((n) => new Int32Array(n));
  const flast = sizes.map((n) => new Int32Array(n));
  const valuesOf = columns.map((c) => c.valuesOf);
  const { fail, which } = pass;
  const { codes, width, rows } = t;
  const slot = columns[0]!.collectionSlot;
  const ids = t.entities[mode].ids!;
  const order = t.entities[mode].order;
  const none = Int32Array.of(0);
  const nc = columns.length;
  // An entity's rows come together and nearly always from one collection: once its collection's values
  // are counted (and counted as filtered), its further rows there change nothing and are skipped.
  let prevE = -1;
  let prevCode = -1;
  let done = false;
  let doneFiltered = false;
  for (let i = 0; i < rows; i++) {
    const r = order === null ? i : order[i]!;
    const f = fail[r]!;
    if (f > 1 || (f === 1 && which[r] !== own)) continue;
    const e = ids[r]!;
    if (e === 0) continue;
    const code = codes[r * width + slot]!;
    if (e !== prevE || code !== prevCode) {
      prevE = e;
      prevCode = code;
      done = false;
      doneFiltered = false;
    }
    if (done && (doneFiltered || f !== 0)) continue;
    for (let k = 0; k < nc; k++) {
      const listed = valuesOf[k]![code]!;
      const vs = listed.length === 0 ? none : listed;
      const cl = last[k]!;
      const fl = flast[k]!;
      for (let j = 0; j < vs.length; j++) {
        const x = vs[j]!;
        if (cl[x] !== e) {
          cl[x] = e;
          counts[k]![x]!++;
        }
        if (f === 0 && fl[x] !== e) {
          fl[x] = e;
          filtered[k]![x]!++;
        }
      }
    }
    done = true;
    if (f === 0) doneFiltered = true;
  }
  return columns.map((_, k) => ({ counts: counts[k]!, filtered: filtered[k]! }));
}

/**
 * The same counts when every row is its own entity (series): no entity is
 * counted twice, so rows are tallied per collection once and each
 * collection's tally added to the values it lists.
 */
function rowCounts(t: FacetTable, c: CollectionColumn, pass: PassResult, own: number, none: Int32Array): CollectionCounts {
  const n = c.values.length + 1;
  const counts = new Int32Array(n);
  const filtered = new Int32Array(n);
  const { fail, which } = pass;
  const { codes, width, rows } = t;
  const slot = c.collectionSlot;
  const tally = new Int32Array(t.slotSizes[slot]!);
  const ftally = new Int32Array(t.slotSizes[slot]!);
  for (let r = 0, i = slot; r < rows; r++, i += width) {
    const f = fail[r]!;
    if (f > 1 || (f === 1 && which[r] !== own)) continue;
    tally[codes[i]!]!++;
    if (f === 0) ftally[codes[i]!]!++;
  }
  for (let code = 0; code < tally.length; code++) {
    if (tally[code] === 0) continue;
    const listed = c.valuesOf[code]!;
    for (const x of listed.length === 0 ? none : listed) {
      counts[x]! += tally[code]!;
      filtered[x]! += ftally[code]!;
    }
  }
  return { counts, filtered };
}
