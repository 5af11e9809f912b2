// Facets of the collection-level attributes (program, cancer type, tumor
// location, species): a row's values are its collection's, so the filter is
// a clause over the collection_id codes, and the counts are one extra walk
// after the main pass (one for all of them). A collection can list several values and one patient
// ID can appear in two collections, so counts are distinct entities per
// value, never sums of per-collection counts.

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
    const counted = t.entities[mode].ids === null ? columns.map((c) => rowCounts(t, c, pass, own, Int32Array.of(0))) : walk(t, columns, pass, own, mode);
    columns.forEach((c, k) => out.set(c.def.name, counted[k]!));
  }
  return out;
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
