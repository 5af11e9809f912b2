// The totals of a row bitset (evaluate.ts's selectBits) without visiting its
// rows one by one. Rows of one patient (study, series) mostly sit in one run
// of adjacent rows, so an entity is counted once per run holding a selected
// row: a carry-propagating add over the words finds the first selected row of
// each run (below). Entities whose rows lie in several runs (a patient in two
// collections: 89 patients of the 25.0.5 release) are tested on their own
// rows. Instances and sizes are summed from per-word sums where all 32 rows
// are selected, row by row elsewhere. Built per index on first use, from its
// arrays: about 1.5 MB for a million rows.
//
// Most filters select few words (a StudyDate year: a median of 461 of the
// 32,631 words of the 25.0.5 release): the words not zero are listed once, and
// every total visits only those. The carry of the words between them (none of
// whose rows is selected) is known in advance per word (EntityRuns.lastFixed).

import type { CohortIndex } from './build.ts';
import { liveWords, popcount, wordsFor } from './bits.ts';
import type { Sparse } from './evaluate.ts';
import { microPrefix, type Totals } from './totals.ts';

interface EntityRuns {
  /** Bit r: row r starts a run (r = 0, or another id than row r - 1); the bit of row n (past the last) too. */
  starts: Uint32Array;
  /** The rows counted by runs; null when that is every row. Others belong to `split` entities or to none (id 0). */
  keep: Uint32Array | null;
  /** The rows of the entities in several runs: entity k's are rows[start[k] .. start[k + 1]). */
  split: { start: Uint32Array; rows: Uint32Array };
  /**
   * For the words of `distinct` none of whose rows is selected: word w's carry out is either its carry in
   * (a word inside one run) or fixed (fixedCarry[w]: a run starts in it). lastFixed[w]: the last word at
   * or before w whose carry is fixed, -1 if none; so a stretch of unselected words passes on the carry of
   * its last fixed word, or the carry it got when it has none.
   */
  lastFixed: Int32Array;
  fixedCarry: Uint8Array;
}

/** lastFixed and fixedCarry of EntityRuns from its run starts, for `words` words of rows. */
function carriesOf(starts: Uint32Array, words: number): { lastFixed: Int32Array; fixedCarry: Uint8Array } {
  const lastFixed = new Int32Array(words);
  const fixedCarry = new Uint8Array(words);
  let last = -1;
  for (let w = 0; w < words; w++) {
    // The sum of distinct() for a word without selected rows, with a carry in of 0 and of 1.
    const f = starts[w]!;
    const free = ~((f >>> 1) | (starts[w + 1]! << 31)) >>> 0;
    const c0 = free + f > 0xffffffff ? 1 : 0;
    const c1 = free + f + 1 > 0xffffffff ? 1 : 0;
    if (c0 === c1) {
      last = w;
      fixedCarry[w] = c0;
    }
    lastFixed[w] = last;
  }
  return { lastFixed, fixedCarry };
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
  const carries = carriesOf(starts, wordsFor(n));
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
  if (splitRows === 0) return { starts, keep: null, split: { start: new Uint32Array(1), rows: new Uint32Array(0) }, ...carries };
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
  return { starts, keep, split: { start, rows }, ...carries };
}

/**
 * Entities with a selected row. Per run, (unselected rows, minus each run's
 * last row) + (each run's first row) carries from the run's first row up to its
 * first selected row, or to its last row when none is: so the sum has a bit at
 * a selected row exactly once per run holding one. The carry stops inside its
 * run, and crosses words as an addition does.
 */
function distinct(e: EntityRuns, sel: Uint32Array, live: Uint32Array | null, nLive: number): number {
  const { starts, keep, lastFixed, fixedCarry } = e;
  let count = 0;
  let carry = 0;
  // Every word, or only the words of `live` (every word not zero, maybe some that are), the carry of the words skipped between them from lastFixed.
  const n = live === null ? sel.length : nLive;
  for (let i = 0, prev = -1; i < n; i++) {
    const w = live === null ? i : live[i]!;
    if (w > prev + 1) {
      const v = lastFixed[w - 1]!;
      if (v > prev) carry = fixedCarry[v]!;
    }
    prev = w;
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

/**
 * Instances summed over the rows before each row (n + 1 numbers; a missing
 * count adds nothing): the instances of a run of adjacent rows are the
 * difference at its ends. Whole numbers: exact below 2^53, and 4 bytes a row
 * while the release's total fits in 32 bits.
 */
function instancePrefix(instances: Float64Array, total: number): Float64Array | Uint32Array {
  const out = total <= 0xffffffff ? new Uint32Array(instances.length + 1) : new Float64Array(instances.length + 1);
  let sum = 0;
  for (let r = 0; r < instances.length; r++) {
    const k = instances[r]!;
    if (k === k) sum += k;
    out[r + 1] = sum;
  }
  return out;
}

interface Prepared {
  patients: EntityRuns;
  studies: EntityRuns;
  series: EntityRuns | null;
  /** instancePrefix of the rows' instances. */
  instances: Float64Array | Uint32Array;
  /** microPrefix of the rows' sizes; null: summed with compensation, row by row, instead. */
  units: Float64Array | null;
  /** Scratch for the words of a selection not zero (bitTotals is synchronous: one serves every call). */
  live: Uint32Array;
}

/** A selection is visited word by word from its list of live words when fewer than 1 in SPARSE words are live. */
const SPARSE = 4;

const prepared = new WeakMap<CohortIndex, Prepared>();

/** Whether bitTotals has its structures for this index (built by its first call, or by prepareBitTotals). */
export function bitTotalsReady(ix: CohortIndex): boolean {
  return prepared.has(ix);
}

/** Build bitTotals' structures for this index now (about 80 ms for a million rows). */
export function prepareBitTotals(ix: CohortIndex): void {
  prepare(ix);
}

function prepare(ix: CohortIndex): Prepared {
  let p = prepared.get(ix);
  if (p) return p;
  p = {
    patients: entityRuns(ix.patients),
    studies: entityRuns(ix.studies),
    series: ix.series === null ? null : entityRuns(ix.series),
    instances: instancePrefix(ix.instances, ix.all.instances),
    units: microPrefix(ix.sizeMb),
    live: new Uint32Array(wordsFor(ix.rows)),
  };
  prepared.set(ix, p);
  return p;
}

/** Summed instances and size (MB) of the rows of `sel`. */
function sums(ix: CohortIndex, p: Prepared, sel: Uint32Array, live: Uint32Array | null, nLive: number): [number, number] {
  const { instances, units } = p;
  const n = live === null ? sel.length : nLive;
  let inst = 0;
  let size = 0;
  if (units === null) {
    // Neumaier's compensated sum, in row order as totals.ts's.
    const { sizeMb } = ix;
    let carry = 0;
    for (let i = 0; i < n; i++) {
      const w = live === null ? i : live[i]!;
      for (let x = sel[w]!, base = w << 5; x !== 0; ) {
        const low = x & -x;
        const r = base + 31 - Math.clz32(low);
        x ^= low;
        inst += instances[r + 1]! - instances[r]!;
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
  // Whole numbers (instances, millionths of a MB) add exactly in any order: each run of adjacent selected
  // rows of a word adds the prefix sums after its last row and takes those before its first.
  for (let i = 0; i < n; i++) {
    const w = live === null ? i : live[i]!;
    const x = sel[w]!;
    if (x === 0) continue;
    const base = w << 5;
    for (let first = x & ~(x << 1); first !== 0; ) {
      const low = first & -first;
      first ^= low;
      const r = base + 31 - Math.clz32(low);
      inst -= instances[r]!;
      size -= units[r]!;
    }
    for (let last = x & ~(x >>> 1); last !== 0; ) {
      const low = last & -last;
      last ^= low;
      const r = base + 32 - Math.clz32(low);
      inst += instances[r]!;
      size += units[r]!;
    }
  }
  return [inst, size / 1e6];
}

/**
 * Totals of the rows of a bitset of the index's rows; `known`: its words that may be set, when the
 * selection knows them (selectSparse), which spares a pass over every word to find them.
 */
export function bitTotals(ix: CohortIndex, sel: Uint32Array, known: Sparse | null = null): Totals {
  const p = prepare(ix);
  // The words not zero, when they are few enough that visiting them one by one beats a pass over every word.
  const live = known === null ? p.live : known.words;
  const nLive = known === null ? liveWords(sel, null, live) : known.n;
  const sparse = nLive * SPARSE < sel.length ? live : null;
  const [instances, size_mb] = sums(ix, p, sel, sparse, nLive);
  let series = 0;
  if (p.series === null) for (let i = 0; i < nLive; i++) series += popcount(sel[live[i]!]!);
  return {
    patients: distinct(p.patients, sel, sparse, nLive),
    studies: distinct(p.studies, sel, sparse, nLive),
    series: p.series === null ? series : distinct(p.series, sel, sparse, nLive),
    instances,
    size_mb,
  };
}
