// Rows and size per value of a categorical attribute over a selection: what
// GROUP BY attribute with count(*) and sum(series_size_MB) gives.

import type { CohortIndex } from './build.ts';
import type { Selection } from './evaluate.ts';

export interface Group {
  /** null: the missing value. */
  value: string | null;
  rows: number;
  sizeMb: number;
}

/** Groups of a selection by a categorical attribute, or null when the index does not hold it. */
export function groupBy(ix: CohortIndex, sel: Selection | 'all', attribute: string): Group[] | null {
  const c = ix.columns.get(attribute);
  if (c?.kind !== 'coded' || c.values === null) return null;
  const k = c.frequency.length;
  const rows = new Float64Array(k);
  const sum = new Float64Array(k);
  const carry = new Float64Array(k);
  const { codes } = c;
  const mb = ix.sizeMb;
  const add = (r: number) => {
    const code = codes[r]!;
    rows[code]!++;
    const x = mb[r]!;
    if (x !== x) return;
    // Neumaier's compensated sum per group, as for the totals.
    const s = sum[code]!;
    const t = s + x;
    carry[code]! += Math.abs(s) >= Math.abs(x) ? s - t + x : x - t + s;
    sum[code] = t;
  };
  if (sel === 'all') for (let r = 0; r < ix.rows; r++) add(r);
  else for (let i = 0; i < sel.n; i++) add(sel.rows[i]!);
  const out: Group[] = [];
  for (let code = 0; code < k; code++) {
    if (rows[code] === 0) continue;
    out.push({ value: code === 0 ? null : c.values[code - 1]!, rows: rows[code]!, sizeMb: sum[code]! + carry[code]! });
  }
  return out;
}

/**
 * Distinct combinations of the leading manifest-order keys (1: collection,
 * 2: + patient, 3: + study) among the selected rows, as GROUP BY counts them
 * (a missing value is a group of its own). Only when the table's order is the
 * manifest order, which keeps equal combinations adjacent; else null.
 */
export function distinctPrefixes(ix: CohortIndex, sel: Selection | 'all', depth: 1 | 2 | 3): number | null {
  const c = ix.columns.get('collection_id');
  if (ix.manifestOrder !== null || c?.kind !== 'coded') return null;
  const keys = [c.codes, ix.patients, ix.studies].slice(0, depth);
  const n = sel === 'all' ? ix.rows : sel.n;
  let groups = 0;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const r = sel === 'all' ? i : sel.rows[i]!;
    let changed = prev < 0;
    for (let k = 0; k < keys.length && !changed; k++) if (keys[k]![r] !== keys[k]![prev]) changed = true;
    if (changed) groups++;
    prev = r;
  }
  return groups;
}
