// The counts of a set of rows: distinct patients, studies and series (each
// counted once however its rows are ordered, NULL never counted, as
// count(DISTINCT) does), summed instances and size.

export interface Totals {
  patients: number;
  studies: number;
  series: number;
  instances: number;
  size_mb: number;
}

export interface TotalsSource {
  /** Each patient's, study's and series' rows are adjacent in table order (then a selection in that order counts by change). */
  adjacent: boolean;
  patients: Int32Array;
  studies: Int32Array;
  series: Int32Array | null;
  instances: Float64Array;
  sizeMb: Float64Array;
}

function maxOf(a: Int32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > m) m = a[i]!;
  return m;
}

const maxima = new WeakMap<Int32Array, number>();
/** A seen-flag per entity id; id 0 (no entity, NULL) starts seen, so it is never counted. */
function seenArray(ids: Int32Array): Uint8Array {
  let m = maxima.get(ids);
  if (m === undefined) {
    m = maxOf(ids);
    maxima.set(ids, m);
  }
  const seen = new Uint8Array(m + 1);
  seen[0] = 1;
  return seen;
}

/** Totals of rows[0..n) (positions, ascending). */
export function totalsOf(ix: TotalsSource, rows: Uint32Array, n: number): Totals {
  if (ix.adjacent) return adjacentTotals(ix, rows, n);
  const p = ix.patients;
  const s = ix.studies;
  const se = ix.series;
  const seenP = seenArray(p);
  const seenS = seenArray(s);
  const seenSe = se === null ? null : seenArray(se);
  const ic = ix.instances;
  let patients = 0;
  let studies = 0;
  let series = se === null ? n : 0;
  let instances = 0;
  let lastP = 0;
  let lastS = 0;
  let lastSe = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    // Rows come mostly grouped by entity: the flags are read only where the entity changes.
    const a = p[r]!;
    if (a !== lastP) {
      if (seenP[a] === 0) {
        seenP[a] = 1;
        patients++;
      }
      lastP = a;
    }
    const b = s[r]!;
    if (b !== lastS) {
      if (seenS[b] === 0) {
        seenS[b] = 1;
        studies++;
      }
      lastS = b;
    }
    if (seenSe !== null) {
      const c = se![r]!;
      if (c !== lastSe) {
        if (seenSe[c] === 0) {
          seenSe[c] = 1;
          series++;
        }
        lastSe = c;
      }
    }
    const k = ic[r]!;
    if (k === k) instances += k;
  }
  return { patients, studies, series, instances, size_mb: sizeOf(ix.sizeMb, rows, n) };
}

/** The same totals when entities' rows are adjacent: a distinct entity is a change from the previous row's. */
function adjacentTotals(ix: TotalsSource, rows: Uint32Array, n: number): Totals {
  const p = ix.patients;
  const s = ix.studies;
  const se = ix.series;
  const ic = ix.instances;
  let patients = 0;
  let studies = 0;
  let series = se === null ? n : 0;
  let lastP = 0;
  let lastS = 0;
  let lastSe = 0;
  let instances = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    const a = p[r]!;
    patients += +(a !== lastP) & +(a !== 0);
    lastP = a;
    const b = s[r]!;
    studies += +(b !== lastS) & +(b !== 0);
    lastS = b;
    if (se !== null) {
      const c = se[r]!;
      series += +(c !== lastSe) & +(c !== 0);
      lastSe = c;
    }
    const k = ic[r]!;
    if (k === k) instances += k;
  }
  return { patients, studies, series, instances, size_mb: sizeOf(ix.sizeMb, rows, n) };
}

const MICRO = 1e6;
const micros = new WeakMap<Float64Array, Float64Array | null>();

/** A size (MB) in whole millionths of a MB, or -1 when it is not a whole number of them (or negative). */
function wholeMicros(x: number): number {
  const u = Math.round(x * MICRO);
  return u / MICRO === x && u >= 0 ? u : -1;
}

/**
 * Sizes in millionths of a MB summed over the rows before each row (n + 1
 * numbers; a missing size adds nothing), when every size is a whole number of
 * them (the releases give bytes / 10^6) and the total is below 2^53: such
 * sums are exact in any order, so a row's size is prefix[r + 1] - prefix[r]
 * and a run of adjacent rows' is the difference at its ends. null otherwise.
 */
export function microPrefix(mb: Float64Array): Float64Array | null {
  let m = micros.get(mb);
  if (m !== undefined) return m;
  m = new Float64Array(mb.length + 1);
  let total = 0;
  for (let r = 0; r < mb.length; r++) {
    const x = mb[r]!;
    if (x === x) {
      const u = wholeMicros(x);
      if (u < 0) {
        m = null;
        break;
      }
      total += u;
    }
    m[r + 1] = total;
  }
  if (m !== null && total > Number.MAX_SAFE_INTEGER) m = null;
  micros.set(mb, m);
  return m;
}

/** Summed size (MB) of rows[0..n), missing sizes left out; the same whatever the rows' order. */
function sizeOf(mb: Float64Array, rows: Uint32Array, n: number): number {
  // Before the prefix sums are built (the first counts after start), whole millionths summed here: the same exact
  // sum for these rows, without a pass over every row of the release.
  if (!micros.has(mb)) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const x = mb[rows[i]!]!;
      if (x !== x) continue;
      const u = wholeMicros(x);
      if (u < 0) return compensatedSize(mb, rows, n);
      sum += u;
    }
    if (sum <= Number.MAX_SAFE_INTEGER) return sum / MICRO;
  }
  const prefix = microPrefix(mb);
  if (prefix !== null) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const r = rows[i]!;
      sum += prefix[r + 1]! - prefix[r]!;
    }
    return sum / MICRO;
  }
  return compensatedSize(mb, rows, n);
}

/** Summed size (MB) of rows[0..n) by Neumaier's compensated sum, for sizes that are not whole millionths. */
function compensatedSize(mb: Float64Array, rows: Uint32Array, n: number): number {
  let sum = 0;
  let carry = 0;
  for (let i = 0; i < n; i++) {
    const x = mb[rows[i]!]!;
    if (x === x) {
      const t = sum + x;
      carry += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
      sum = t;
    }
  }
  return sum + carry;
}
