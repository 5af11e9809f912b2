// One pass over the facet table for a request: every filter clause marks the
// rows it rejects, then each row counts towards every facet when no clause
// rejects it, and towards its own attribute's facet only when that
// attribute's clause is the single one rejecting it (multi-select faceting:
// an attribute's own selection does not narrow its own counts). Entities
// (patients, studies, series) are counted once per value by remembering the
// last entity counted, so each entity's rows must be adjacent in the order
// walked (table.ts guarantees it). Clauses mark rows without branching on
// each row's outcome (a filter's outcome is close to random from row to row,
// which a branch mispredicts), and a row after a row in the cohort of the same
// entity walks only the slots it changes (repeats.ts).

import type { CountMode, FacetTable, RangeColumn } from './table.ts';
import type { Totals } from '../cohort-index/totals.ts';
import { builtRepeats, repeatsOf } from './repeats.ts';
import { buildSoon } from './build-soon.ts';
import { extremes, type Counted } from './extremes.ts';

/**
 * A filter clause over the table: `rejects(fail, which, k)` adds 1 to
 * fail[row] for each row it does not select, and XORs k into which[row]
 * (so where fail is 1, which holds the index of the one rejecting clause).
 */
export interface Clause {
  attribute: string;
  /** Facet slot of the attribute, or -1 (identifiers). */
  slot: number;
  rejects: (fail: Uint8Array, which: Uint8Array, index: number) => void;
}

/** A term clause on a categorical attribute: `accepted[code]` is 1 for the selected values. */
export function termClause(t: FacetTable, attribute: string, slot: number, accepted: Uint8Array): Clause {
  return {
    attribute,
    slot,
    rejects: (fail, which, k) => {
      const { codes, width, rows } = t;
      for (let r = 0, i = slot; r < rows; r++, i += width) {
        const no = accepted[codes[i]!]! ^ 1;
        fail[r]! += no;
        which[r]! ^= k & -no;
      }
    },
  };
}

/** A range clause: numbers compared with the bounds, strings by rank (`lo`/`hi` are then ranks). */
export function rangeClause(c: RangeColumn, lo: number, hi: number): Clause {
  return {
    attribute: c.def.name,
    slot: c.slot,
    rejects: (fail, which, k) => {
      const v = c.values;
      for (let r = 0; r < v.length; r++) {
        const x = v[r]!;
        // NaN (missing) fails both comparisons, as NULL does in SQL.
        const no = (+(x >= lo) & +(x <= hi)) ^ 1;
        fail[r]! += no;
        which[r]! ^= k & -no;
      }
    },
  };
}

/** A clause given by the rows it selects (resolved by the engine). */
export function rowsClause(attribute: string, selected: Uint8Array): Clause {
  return {
    attribute,
    slot: -1,
    rejects: (fail, which, k) => {
      for (let r = 0; r < selected.length; r++) {
        const no = selected[r]! ^ 1;
        fail[r]! += no;
        which[r]! ^= k & -no;
      }
    },
  };
}

export interface PassResult {
  /** Per slot and code: entities with that code among rows passing every other clause. */
  counts: Int32Array[];
  /** Per slot and code, for slots with a clause of their own: entities among rows passing every clause (else null: equal to counts). */
  filtered: (Int32Array | null)[];
  /** Per range slot: smallest and largest value (number or rank) among the rows counted, NaN when none. */
  min: Float64Array;
  max: Float64Array;
  /** Per slot: 1 when it was counted (asked for). */
  counted: Uint8Array;
  /** Clauses rejecting each row (0: the row is in the cohort). */
  fail: Uint8Array;
  /** Index of a clause rejecting each row (meaningful where fail is 1). */
  which: Uint8Array;
}

/**
 * Count the requested slots. `slots` lists the facet slots wanted; slots with
 * a clause are counted with their own clause left out.
 */
export function countPass(t: FacetTable, clauses: Clause[], slots: number[], mode: CountMode): PassResult {
  const { rows, width, codes } = t;
  const fail = new Uint8Array(rows);
  const which = new Uint8Array(rows);
  clauses.forEach((c, k) => c.rejects(fail, which, k));

  const offsets = new Int32Array(width + 1);
  for (let s = 0; s < width; s++) offsets[s + 1] = offsets[s]! + t.slotSizes[s]!;
  const counts = new Int32Array(offsets[width]!);
  const last = new Int32Array(offsets[width]!);
  const wanted = new Uint8Array(width);
  for (const s of slots) wanted[s] = 1;
  const want = Int32Array.from(slots);

  // Slots with their own clause also get counts under every clause.
  const own = [...new Set(clauses.map((c) => c.slot).filter((s) => s >= 0 && wanted[s] === 1))];
  const ownSlots = Int32Array.from(own);
  const fcounts = new Int32Array(offsets[width]!);
  const flast = new Int32Array(offsets[width]!);
  const clauseSlot = Int32Array.from(clauses, (c) => (c.slot >= 0 && wanted[c.slot] === 1 ? c.slot : -1));

  const entity = t.entities[mode];
  const ids = entity.ids;
  const order = entity.order;
  const nWant = want.length;
  const wantOffset = Int32Array.from(want, (s) => offsets[s]!);
  const nOwn = ownSlots.length;
  // Built after the first pass of the mode rather than in it (a first pass without them walks every slot, as exactly).
  let rep = builtRepeats(t, mode);
  if (rep === undefined) {
    buildSoon(entity, () => repeatsOf(t, mode));
    rep = null;
  }
  let wantMask = 0;
  for (const s of want) wantMask |= 1 << s;
  let ownMask = 0;
  for (const s of own) ownMask |= 1 << s;
  // Whether the row walked just before was in the cohort (counted for every slot).
  let prevIn = false;
  for (let i = 0; i < rows; i++) {
    const r = order === null ? i : order[i]!;
    const f = fail[r]!;
    const e = ids === null ? r + 1 : ids[r]!;
    // e === 0: no entity, not counted, as count(DISTINCT) skips NULL.
    if (f > 1 || e === 0) {
      prevIn = false;
      continue;
    }
    const base = r * width;
    if (f === 0 && rep !== null) {
      // After a row in the cohort, a slot repeating its code is already counted for this entity.
      const fresh = prevIn ? ~rep[i]! : -1;
      prevIn = true;
      for (let m = fresh & wantMask; m !== 0; m &= m - 1) {
        const s = 31 - Math.clz32(m & -m);
        const x = offsets[s]! + codes[base + s]!;
        if (last[x] !== e) {
          last[x] = e;
          counts[x]!++;
        }
      }
      for (let m = fresh & ownMask; m !== 0; m &= m - 1) {
        const s = 31 - Math.clz32(m & -m);
        const x = offsets[s]! + codes[base + s]!;
        if (flast[x] !== e) {
          flast[x] = e;
          fcounts[x]!++;
        }
      }
      continue;
    }
    prevIn = false;
    if (f === 0) {
      if (ids === null) {
        // Every row its own entity (series): nothing to count twice.
        for (let k = 0; k < nWant; k++) counts[wantOffset[k]! + codes[base + want[k]!]!]!++;
      } else {
        for (let k = 0; k < nWant; k++) {
          const x = wantOffset[k]! + codes[base + want[k]!]!;
          if (last[x] !== e) {
            last[x] = e;
            counts[x]!++;
          }
        }
      }
      for (let k = 0; k < nOwn; k++) {
        const s = ownSlots[k]!;
        const x = offsets[s]! + codes[base + s]!;
        if (flast[x] !== e) {
          flast[x] = e;
          fcounts[x]!++;
        }
      }
    } else {
      const s = clauseSlot[which[r]!]!;
      if (s < 0) continue;
      const x = offsets[s]! + codes[base + s]!;
      if (last[x] !== e) {
        last[x] = e;
        counts[x]!++;
      }
    }
  }

  // Extremes of the range slots wanted, over the rows counted for them (extremes.ts).
  const min = new Float64Array(width).fill(NaN);
  const max = new Float64Array(width).fill(NaN);
  const counted: Counted = { fail, which, clauseSlot, entity };
  for (const c of t.columns.values()) {
    if (c.kind === 'range' && wanted[c.slot] === 1) {
      [min[c.slot], max[c.slot]] = extremes(t, c, counts.subarray(offsets[c.slot]!, offsets[c.slot + 1]!), counted);
    }
  }
  const ownSet = new Set(own);
  return {
    counts: Array.from({ length: width }, (_, s) => counts.subarray(offsets[s]!, offsets[s + 1]!)),
    filtered: Array.from({ length: width }, (_, s) => (ownSet.has(s) ? fcounts.subarray(offsets[s]!, offsets[s + 1]!) : null)),
    min,
    max,
    counted: wanted,
    fail,
    which,
  };
}

// One shape of totals for the facet pass and the cohort index.
export type { Totals } from '../cohort-index/totals.ts';

/**
 * Distinct patients, studies and series, instances and size of the rows in
 * the cohort, in one walk in table order; null when that order does not keep
 * each entity's rows together (the engine counts then).
 */
export function cohortTotals(t: FacetTable, fail: Uint8Array): Totals | null {
  const { patients, studies, series } = t.entities;
  const instances = t.columns.get('instanceCount');
  const size = t.columns.get('series_size_MB');
  if (patients.order || studies.order || series.order || instances?.kind !== 'range' || size?.kind !== 'range') return null;
  const p = patients.ids!;
  const st = studies.ids!;
  const se = series.ids;
  const ic = instances.values;
  const mb = size.values;
  const out: Totals = { patients: 0, studies: 0, series: 0, instances: 0, size_mb: 0 };
  let lastP = 0;
  let lastS = 0;
  let lastSe = 0;
  // Neumaier's compensated sum, so the size does not depend on the row count's rounding.
  let sum = 0;
  let carry = 0;
  for (let r = 0; r < fail.length; r++) {
    if (fail[r] !== 0) continue;
    const a = p[r]!;
    if (a !== 0 && a !== lastP) {
      lastP = a;
      out.patients++;
    }
    const b = st[r]!;
    if (b !== 0 && b !== lastS) {
      lastS = b;
      out.studies++;
    }
    const c = se === null ? r + 1 : se[r]!;
    if (c !== 0 && c !== lastSe) {
      lastSe = c;
      out.series++;
    }
    const n = ic[r]!;
    if (n === n) out.instances += n;
    const x = mb[r]!;
    if (x === x) {
      const t2 = sum + x;
      carry += Math.abs(sum) >= Math.abs(x) ? sum - t2 + x : x - t2 + sum;
      sum = t2;
    }
  }
  out.size_mb = sum + carry;
  return out;
}
