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
  const mb = ix.sizeMb;
  let patients = 0;
  let studies = 0;
  let series = se === null ? n : 0;
  let instances = 0;
  let lastP = 0;
  let lastS = 0;
  let lastSe = 0;
  // Neumaier's compensated sum: the result does not depend on the rows' order.
  let sum = 0;
  let carry = 0;
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
    const x = mb[r]!;
    if (x === x) {
      const t = sum + x;
      carry += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
      sum = t;
    }
  }
  return { patients, studies, series, instances, size_mb: sum + carry };
}

/** The same totals when entities' rows are adjacent: a distinct entity is a change from the previous row's. */
function adjacentTotals(ix: TotalsSource, rows: Uint32Array, n: number): Totals {
  const p = ix.patients;
  const s = ix.studies;
  const se = ix.series;
  const ic = ix.instances;
  const mb = ix.sizeMb;
  let patients = 0;
  let studies = 0;
  let series = se === null ? n : 0;
  let lastP = 0;
  let lastS = 0;
  let lastSe = 0;
  let instances = 0;
  let sum = 0;
  let carry = 0;
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
    const x = mb[r]!;
    if (x === x) {
      const t = sum + x;
      carry += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
      sum = t;
    }
  }
  return { patients, studies, series, instances, size_mb: sum + carry };
}
