// The clause kinds of a /v3 filter beyond plain values of an indexed column,
// each built from arrays the index already holds (nothing new is stored or
// loaded), with the semantics the SQL compiler (filters/v3.ts) gives them:
// - null among a categorical attribute's terms: the rows missing a value (code 0);
// - a collection-level attribute (program_id, cancer_types, ...): the codes
//   of the collections whose values (any element of a list column) match,
//   then a term clause over collection_id; null: a collection listing none,
//   or a row without a collection;
// - all_terms: the rows of every study that holds each of the values in some
//   row (a row without a study is never selected, as NULL IN (...) is not);
//   its rows are kept per column and values (a bounded LRU) for the next filter.

import { LRUCache } from 'lru-cache';
import type { CodedColumn, CohortIndex } from './build.ts';
import { rowsOfCodes } from './postings.ts';

/** A clause as evaluate.ts takes it: codes tested against `accepted` (or read from postings), or a list of rows. */
export type MoreClause =
  | { kind: 'coded'; column: CodedColumn; codes: Uint16Array | Uint32Array; accepted: Uint8Array; list: number[]; estimate: number }
  | { kind: 'rows'; rows: Uint32Array; estimate: number };

/** A clause over a coded column from its accepted codes; null when the column's codes cannot be scanned as codes. */
function codedClause(c: CodedColumn, accepted: Uint8Array): MoreClause | null {
  if (c.codes instanceof Int32Array) return null;
  const list: number[] = [];
  let estimate = 0;
  for (let code = 0; code < accepted.length; code++) {
    if (accepted[code] !== 1) continue;
    list.push(code);
    estimate += c.frequency[code]!;
  }
  return { kind: 'coded', column: c, codes: c.codes, accepted, list, estimate };
}

/** Terms of a categorical column with null (the missing value, code 0) among them. */
export function withMissingClause(c: CodedColumn, values: (string | null)[]): MoreClause | null {
  if (c.values === null) return null;
  const accepted = new Uint8Array(c.frequency.length);
  accepted[0] = 1;
  for (const v of values) {
    if (v === null) continue;
    const code = c.codeOf(v);
    if (code !== undefined) accepted[code] = 1;
  }
  return codedClause(c, accepted);
}

/** A collection-level attribute's terms as a term clause over collection_id; null when the index lacks either column. */
export function collectionClause(ix: CohortIndex, name: string, values: (string | null)[]): MoreClause | null {
  const col = ix.table.columns.get(name);
  const ids = ix.columns.get('collection_id');
  const idColumn = ix.table.columns.get('collection_id');
  if (col?.kind !== 'collection' || ids?.kind !== 'coded' || idColumn?.kind !== 'term' || col.collectionSlot !== idColumn.slot) return null;
  // valuesOf is indexed by the collection_id codes of the facet table, which the coded column shares.
  if (col.valuesOf.length !== ids.frequency.length) return null;
  const wanted = new Uint8Array(col.values.length + 1);
  for (const v of values) {
    const code = v === null ? undefined : col.codeOf.get(v);
    if (code !== undefined) wanted[code] = 1;
  }
  const orMissing = values.includes(null);
  const accepted = new Uint8Array(col.valuesOf.length);
  for (let k = 0; k < col.valuesOf.length; k++) {
    const held = col.valuesOf[k]!;
    let hit = orMissing && held.length === 0;
    for (let i = 0; i < held.length && !hit; i++) hit = wanted[held[i]!] === 1;
    accepted[k] = hit ? 1 : 0;
  }
  return codedClause(ids, accepted);
}

const studyCounts = new WeakMap<Int32Array, number>();

/** Entity ids run 1..max (0: none). */
function maxId(ids: Int32Array): number {
  let m = studyCounts.get(ids);
  if (m !== undefined) return m;
  m = 0;
  for (let r = 0; r < ids.length; r++) if (ids[r]! > m) m = ids[r]!;
  studyCounts.set(ids, m);
  return m;
}

/** Rows of all_terms clauses, per column and values: a cohort refined facet by facet asks for the same one again. */
const allTermsRows = new WeakMap<CodedColumn, LRUCache<string, Uint32Array>>();
/** Bytes of rows kept per column. */
const KEPT_BYTES = 32 * 1024 * 1024;

/** all_terms of a categorical column: every row of each study holding all the values; null when the column is not categorical codes. */
export function allTermsClause(ix: CohortIndex, c: CodedColumn, values: string[]): MoreClause | null {
  if (c.values === null) return null;
  let kept = allTermsRows.get(c);
  if (!kept) allTermsRows.set(c, (kept = new LRUCache<string, Uint32Array>({ maxSize: KEPT_BYTES, sizeCalculation: (rows) => rows.byteLength + 64 })));
  const key = JSON.stringify([...new Set(values)].sort());
  let rows = kept.get(key);
  if (!rows) {
    rows = studyRows(ix, c, values);
    // Too large for the cache: computed again next time.
    if (rows.byteLength + 64 <= KEPT_BYTES) kept.set(key, rows);
  }
  // A list kept for later requests: evaluate.ts reads it, never writes it (a 'rows' clause is shared).
  return { kind: 'rows', rows, estimate: rows.length };
}

function studyRows(ix: CohortIndex, c: CodedColumn, values: string[]): Uint32Array {
  const codes = [...new Set(values)].map((v) => c.codeOf(v));
  // A value no row holds: no study has it.
  if (codes.some((code) => code === undefined || code === 0)) return new Uint32Array(0);
  const studies = ix.studies;
  const held = new Int32Array(maxId(studies) + 1);
  const lastValue = new Int32Array(held.length);
  for (let i = 0; i < codes.length; i++) {
    const rows = rowsOfCodes(c, [codes[i]!], c.frequency[codes[i]!]!);
    for (let j = 0; j < rows.length; j++) {
      const s = studies[rows[j]!]!;
      // Counted once per value however many of the study's rows hold it.
      if (lastValue[s] !== i + 1) {
        lastValue[s] = i + 1;
        held[s]!++;
      }
    }
  }
  held[0] = 0;
  const need = codes.length;
  let qualifying = 0;
  for (let s = 1; s < held.length; s++) if (held[s] === need) qualifying++;
  if (qualifying === 0) return new Uint32Array(0);
  const out = new Uint32Array(ix.rows + 1);
  let k = 0;
  for (let r = 0; r < ix.rows; r++) {
    out[k] = r;
    k += +(held[studies[r]!] === need);
  }
  // A copy of its length: the cache holds what it keeps, not the buffer for every row.
  return out.slice(0, k);
}
