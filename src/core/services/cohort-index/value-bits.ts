// The rows of a coded column's frequent values as bitsets (Modality CT is two
// fifths of the 25.0.5 release, nlst a fifth), built from the value's postings
// on first use and kept in a cache bounded in bytes. A clause on such values
// then costs a pass over words rather than over its rows: as a later clause
// (CT or MR after a StudyDate window) it ANDs the words still set with theirs,
// as the first it ORs them. Rare values are left to their postings (setting a
// few rows costs less than a pass over the words).

import { LRUCache } from 'lru-cache';
import type { CodedColumn } from './build.ts';
import { postingsOf } from './postings.ts';
import { setRows, wordsFor } from './bits.ts';

/** Values holding at least one row in FREQUENT words (on average) get a bitset. */
const FREQUENT = 32;
/** Bytes of bitsets kept at most (a million rows: 128 KB each, so 128 of them). */
const BUDGET = 16 * 1024 * 1024;

const ids = new WeakMap<CodedColumn['codes'], number>();
let nextId = 0;
const kept = new LRUCache<string, Uint32Array>({ maxSize: BUDGET, sizeCalculation: (b) => b.byteLength });

/** Whether a value of the column (a code) is frequent enough to be read from a bitset. */
export function frequentValue(c: CodedColumn, code: number, rows: number): boolean {
  return c.frequency[code]! * FREQUENT >= rows;
}

/** The rows of a value of the column as a bitset of `rows` rows (not to be written). */
export function valueBits(c: CodedColumn, code: number, rows: number): Uint32Array {
  let id = ids.get(c.codes);
  if (id === undefined) ids.set(c.codes, (id = nextId++));
  const key = `${id}:${code}`;
  let bits = kept.get(key);
  if (bits === undefined) {
    const p = postingsOf(c);
    bits = new Uint32Array(wordsFor(rows));
    setRows(bits, p.rows.subarray(p.start[code]!, p.start[code + 1]!));
    kept.set(key, bits);
  }
  return bits;
}
