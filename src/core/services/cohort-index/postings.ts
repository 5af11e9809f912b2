// Per-value row lists of a coded column of the cohort index, so a term clause
// selects its rows without scanning every row's code (nlst is a fifth of the
// release; a PatientID is a dozen rows). Built from the index's own arrays on
// a column's first filter (a counting sort: one pass, 4 bytes per row) and
// kept for the release; the index's layout and loading are unchanged.

import type { CodedColumn } from './build.ts';

/** Rows of code k are rows[start[k] .. start[k + 1]), ascending. */
export interface Postings {
  start: Uint32Array;
  rows: Uint32Array;
}

const built = new WeakMap<CodedColumn['codes'], Postings>();

/** Whether the column's postings are built (postingsOf builds them on its first call). */
export function postingsBuilt(c: CodedColumn): boolean {
  return built.has(c.codes);
}

export function postingsOf(c: CodedColumn): Postings {
  let p = built.get(c.codes);
  if (p) return p;
  const k = c.frequency.length;
  const start = new Uint32Array(k + 1);
  for (let code = 0; code < k; code++) start[code + 1] = start[code]! + c.frequency[code]!;
  const next = start.slice(0, k);
  const rows = new Uint32Array(c.codes.length);
  const { codes } = c;
  for (let r = 0; r < codes.length; r++) rows[next[codes[r]!]!++] = r;
  p = { start, rows };
  built.set(c.codes, p);
  return p;
}

/**
 * The rows holding any of these codes, ascending. One code is a view of its
 * list (not to be written); several are marked on a row map and read back in
 * order, which costs a pass over the rows only when the lists are long.
 */
export function rowsOfCodes(c: CodedColumn, codes: number[], total: number): Uint32Array {
  const { start, rows } = postingsOf(c);
  if (codes.length === 1) return rows.subarray(start[codes[0]!]!, start[codes[0]! + 1]!);
  const out = new Uint32Array(total);
  let k = 0;
  for (const code of codes) {
    out.set(rows.subarray(start[code]!, start[code + 1]!), k);
    k += start[code + 1]! - start[code]!;
  }
  // Short lists: sorting them is cheaper than a pass over every row.
  if (total * 16 < c.codes.length) return out.sort();
  const mark = new Uint8Array(c.codes.length);
  for (let i = 0; i < total; i++) mark[out[i]!] = 1;
  k = 0;
  for (let r = 0; r < mark.length; r++) if (mark[r] === 1) out[k++] = r;
  return out;
}
