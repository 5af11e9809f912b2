// The totals of a row bitset (evaluate.ts's selectBits) without visiting its
// rows one by one. Rows of one patient (study, series) mostly sit in one run
// of adjacent rows, so an entity is counted once per run holding a selected
// row: a carry-propagating add over the words finds the first selected row of
// each run (below). Entities whose rows lie in several runs (a patient in two
// collections: 89 patients of the 25.0.5 release) are tested on their own
// rows. Instances and sizes are summed from per-word sums where all 32 rows
// are selected, row by row elsewhere. Built per index on first use, from its
// arrays: about 1 MB for a million rows.

import type { CohortIndex } from './build.ts';
import { countBits, popcount, wordsFor } from './bits.ts';
import { microSizes, type Totals } from './totals.ts';

interface EntityRuns {
  /** Bit r: row r starts a run (r = 0, or another id than row r - 1); the bit of row n (past the last) too. */
  starts: Uint32Array;
  /** The rows counted by runs; null when that is every row. Others belong to `split` entities or to none (id 0). */
  keep: Uint32Array | null;
  /** The rows of the entities in several runs: entity k's are rows[start[k] .. start[k + 1]). */
  split: { start: Uint32Array; rows: Uint32Array };
}

function entityRuns(ids: Int32Array): EntityRuns {
  const n = ids.length;
  let max = 0;
  for (let r = 0; r < n; r++) if (ids[r]! > max) max = ids[r]!;
  const starts = new Uint32Array(wordsFor(n + 1) + 1);
  // Runs per entity, counted up to 2.
  const runs = new Uint8Array(max + 1);
  for (let r = 0; r < n; r++) {
    const e = ids[r]!;
    if (r === 0 || e !== ids[r - 1]) {
      starts[r >>> 5]! |= 1 << (r & 31);
      if (runs[e]! < 2) runs[e]!++;
    }
  }
  starts[n >>> 5]! |= 1 << (n & 31);
  // Rows without an entity (id 0) are never counted, as count(DISTINCT) skips NULL: out of the runs too.
  runs[0] = 2;
  const slot = new Int32Array(max + 1).fill(-1);
  let entities = 0;
  let splitRows = 0;
  for (let r = 0; r < n; r++) {
    const e = ids[r]!;
    if (runs[e] !== 2) continue;
    splitRows++;
    if (e !== 0 && slot[e] === -1) slot[e] = entities++;
  }
  if (splitRows === 0) return { starts, keep: null, split: { start: new Uint32Array(1), rows: new Uint32Array(0) } };
  const keep = new Uint32Array(wordsFor(n));
  const start = new Uint32Array(entities + 1);
  for (let r = 0; r < n; r++) {
    const k = slot[ids[r]!]!;
    if (k >= 0) start[k + 1]!++;
    else if (runs[ids[r]!] !== 2) keep[r >>> 5]! |= 1 << (r & 31);
  }
  for (let k = 0; k < entities; k++) start[k + 1]! += start[k]!;
  const next = start.slice(0, entities);
  const rows = new Uint32Array(start[entities]!);
  for (let r = 0; r < n; r++) {
    const k = slot[ids[r]!]!;
    if (k >= 0) rows[next[k]!++] = r;
  }
  return { starts, keep, split: { start, rows } };
}

/**
 * Entities with a selected row. Per run, (unselected rows, minus each run's
 * last row) + (each run's first row) carries from the run's first row up to its
 * first selected row, or to its last row when none is: so the sum has a bit at
 * a selected row exactly once per run holding one. The carry stops inside its
 * run, and crosses words as an addition does.
 */
function distinct(e: EntityRuns, sel: Uint32Array): number {
  const { starts, keep } = e;
  let count = 0;
  let carry = 0;
  for (let w = 0; w < sel.length; w++) {
    const s = keep === null ? sel[w]! : sel[w]! & keep[w]!;
    const f = starts[w]!;
    const ends = (f >>> 1) | (starts[w + 1]! << 31);
    const sum = ((~s & ~ends) >>> 0) + f + carry;
    carry = sum > 0xffffffff ? 1 : 0;
    const first = (sum >>> 0) & s;
    if (first !== 0) count += popcount(first);
  }
  const { start, rows } = e.split;
  for (let k = 0; k + 1 < start.length; k++) {
    for (let i = start[k]!; i < start[k + 1]!; i++) {
      const r = rows[i]!;
      if ((sel[r >>> 5]! >>> (r & 31)) & 1) {
        count++;
        break;
      }
    }
  }
  return count;
}

/** Per word, the sum of its rows' numbers (missing ones left out). */
function wordSums(values: Float64Array): Float64Array {
  const out = new Float64Array(wordsFor(values.length));
  for (let r = 0; r < values.length; r++) {
    const x = values[r]!;
    if (x === x) out[r >>> 5]! += x;
  }
  return out;
}

interface Prepared {
  patients: EntityRuns;
  studies: EntityRuns;
  series: EntityRuns | null;
  instanceWords: Float64Array;
  /** Sizes in millionths of a MB (exact integer sums), and their word sums; null: summed with compensation instead. */
  units: Float64Array | null;
  unitWords: Float64Array | null;
}

const prepared = new WeakMap<CohortIndex, Prepared>();

function prepare(ix: CohortIndex): Prepared {
  let p = prepared.get(ix);
  if (p) return p;
  const units = microSizes(ix.sizeMb);
  p = {
    patients: entityRuns(ix.patients),
    studies: entityRuns(ix.studies),
    series: ix.series === null ? null : entityRuns(ix.series),
    instanceWords: wordSums(ix.instances),
    units,
    unitWords: units === null ? null : wordSums(units),
  };
  prepared.set(ix, p);
  return p;
}

/** Summed instances and size (MB) of the rows of `sel`. */
function sums(ix: CohortIndex, p: Prepared, sel: Uint32Array): [number, number] {
  const { instances, sizeMb } = ix;
  const { instanceWords, units, unitWords } = p;
  let inst = 0;
  let size = 0;
  if (units === null || unitWords === null) {
    // Neumaier's compensated sum, in row order as totals.ts's.
    let carry = 0;
    for (let w = 0; w < sel.length; w++) {
      for (let x = sel[w]!, base = w << 5; x !== 0; ) {
        const low = x & -x;
        const r = base + 31 - Math.clz32(low);
        x ^= low;
        const k = instances[r]!;
        if (k === k) inst += k;
        const m = sizeMb[r]!;
        if (m === m) {
          const t = size + m;
          carry += Math.abs(size) >= Math.abs(m) ? size - t + m : m - t + size;
          size = t;
        }
      }
    }
    return [inst, size + carry];
  }
  // Whole numbers (instances, millionths of a MB) add exactly in any order: a word with more rows
  // selected than not is its word's sum less the rows left out.
  const last = sel.length - 1;
  const tail = (ix.rows & 31) === 0 ? -1 : (1 << (ix.rows & 31)) - 1;
  for (let w = 0; w < sel.length; w++) {
    let x = sel[w]!;
    if (x === 0) continue;
    const base = w << 5;
    let sign = 1;
    if (popcount(x) > 16) {
      inst += instanceWords[w]!;
      size += unitWords[w]!;
      x = ~x & (w === last ? tail : -1);
      sign = -1;
    }
    while (x !== 0) {
      const low = x & -x;
      const r = base + 31 - Math.clz32(low);
      x ^= low;
      const k = instances[r]!;
      if (k === k) inst += sign * k;
      const u = units[r]!;
      if (u === u) size += sign * u;
    }
  }
  return [inst, size / 1e6];
}

/** Totals of the rows of a bitset of the index's rows. */
export function bitTotals(ix: CohortIndex, sel: Uint32Array): Totals {
  const p = prepare(ix);
  const [instances, size_mb] = sums(ix, p, sel);
  return {
    patients: distinct(p.patients, sel),
    studies: distinct(p.studies, sel),
    series: p.series === null ? countBits(sel) : distinct(p.series, sel),
    instances,
    size_mb,
  };
}
