// The row count of a /v2 manifest preview (its totalFound) from the cohort
// index instead of the plan's countSql, where the two are the same number:
// - /v2 reads the release's index itself (source.ts, kind 'index'), joined to
//   collections_index one row per collection and to its own totals one row
//   per series (checked once per release below), so the plan's rows are the
//   index's rows;
// - the count is of selected rows (a series key among the fields) or of
//   distinct patients or studies (the only field), none of them missing;
// - every filter is a string attribute the index holds as a dictionary (or a
//   collection-level one, below), with ASCII values: filters/v2.ts's stringCondition then selects exactly the
//   dictionary values whose ASCII-lowered form equals a lowered value, or
//   matches a '%' pattern (everything else literal: it escapes '_' and '\'),
//   and the missing value for "None". Lowering changes no non-ASCII
//   character into ASCII except U+0130 and U+212A: a dictionary holding
//   either is left to SQL. A collection-level filter (CancerType,
//   tcia_species, tcia_tumorLocation) is matched the same way on the whole
//   cells of collections_index (read once), as the collection_id values it
//   selects ("None": a missing cell, or no row there).
// Those dictionary values become /v3 terms, evaluated by the index's own
// machinery (evaluate.ts) and counted by bit-totals.ts. Anything else: null,
// and the caller runs countSql.

import { memo, releaseContext, type AppContext } from '../../context.ts';
import { qi } from '../../registry/tables.ts';
import { lookupFilter } from '../../registry/v2-api.ts';
import { bitTotals } from '../cohort-index/bit-totals.ts';
import { countBits } from '../cohort-index/bits.ts';
import { readyCohortIndex, type CodedColumn, type CohortIndex, type IndexedColumn } from '../cohort-index/build.ts';
import { selectBits, type FiltersApplied } from '../cohort-index/evaluate.ts';
import { stringAt, type SortedStrings } from '../cohort-index/identifiers.ts';
import type { IndexCountable } from './plan.ts';
import { FROM_COLLECTIONS, FROM_INDEX } from './source.ts';

/** How the counts of a release's previews were answered (a test checks the index path is taken). */
export interface CountStats {
  index: number;
  sql: number;
}
const stats = new WeakMap<AppContext, CountStats>();

export function v2CountStats(ctx: AppContext): CountStats {
  let s = stats.get(releaseContext(ctx));
  if (!s) stats.set(releaseContext(ctx), (s = { index: 0, sql: 0 }));
  return s;
}

/** Every character ASCII (the values a filter may have for the index to count it). */
const isAscii = (v: string) => [...v].every((ch) => ch.charCodeAt(0) < 0x80);
/** Non-ASCII characters whose lower case is ASCII (İ -> i, Kelvin sign -> k). */
const LOWERS_TO_ASCII = /[\u0130\u212a]/;
/** Digits and separators: filters/v2.ts compares these with plain equality, the same as lowered. */
const CASELESS = /^[0-9.\-: /]*$/;

const asciiLower = (v: string) => v.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** A '%' pattern as filters/v2.ts writes it (lower(col) LIKE lower(?) with '_' and '\' escaped): '%' any run, the rest literal. */
function likeRegex(pattern: string): RegExp {
  const parts = asciiLower(pattern)
    .split('%')
    .map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`);
}

/** Tests a lowered dictionary value against the filter's values (ASCII). */
function matcher(values: string[]): (lowered: string) => boolean {
  const exact = new Set(values.filter((v) => !v.includes('%')).map(asciiLower));
  const likes = values.filter((v) => v.includes('%')).map(likeRegex);
  return (l) => exact.has(l) || likes.some((re) => re.test(l));
}

/** Lowered dictionary values of a categorical column (values[code - 1]); null when one could lower into ASCII. */
const loweredValues = new WeakMap<CodedColumn, string[] | null>();
function loweredOf(c: CodedColumn): string[] | null {
  if (loweredValues.has(c)) return loweredValues.get(c)!;
  const vs = c.values!;
  const out = vs.some((v) => LOWERS_TO_ASCII.test(v)) ? null : vs.map(asciiLower);
  loweredValues.set(c, out);
  return out;
}

/** Identifier dictionaries larger than this are only looked up, never scanned. */
const SCAN_LIMIT = 200_000;

/** An identifier dictionary: 'caseless' when every value is digits and separators; else its values by lowered form (small ones); null: SQL. */
type Folded = 'caseless' | Map<string, string[]> | null;
const foldedDicts = new WeakMap<SortedStrings, Folded>();
function foldedOf(d: SortedStrings): Folded {
  if (foldedDicts.has(d)) return foldedDicts.get(d)!;
  const bytes = d.bytes;
  let caseless = true;
  for (let i = 0; i < bytes.length && caseless; i++) {
    const b = bytes[i]!;
    caseless = (b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x2d || b === 0x3a || b === 0x20 || b === 0x2f;
  }
  let out: Folded = null;
  if (caseless) out = 'caseless';
  else if (d.targets.length <= SCAN_LIMIT) {
    const m = new Map<string, string[]>();
    let sure = true;
    for (let i = 0; i < d.targets.length && sure; i++) {
      const v = stringAt(d, i);
      sure = !LOWERS_TO_ASCII.test(v);
      const l = asciiLower(v);
      const list = m.get(l);
      if (list) list.push(v);
      else m.set(l, [v]);
    }
    out = sure ? m : null;
  }
  foldedDicts.set(d, out);
  return out;
}

/** The column's values a filter's values select (as exact /v3 terms), null among them for "None"; null when not exactly known here. */
function termsOf(c: IndexedColumn, values: string[]): (string | null)[] | null {
  if (!values.every(isAscii)) return null;
  const none = values.includes('None');
  if (c.kind === 'coded' && c.values !== null) {
    const lowered = loweredOf(c);
    if (!lowered) return null;
    const hit = matcher(values);
    const out: (string | null)[] = [];
    for (let i = 0; i < lowered.length; i++) if (hit(lowered[i]!)) out.push(c.values[i]!);
    if (none) out.push(null);
    return out;
  }
  const dict = c.kind === 'rows' ? c.dict : c.kind === 'coded' ? c.dict : undefined;
  // An identifier is never missing in the index: "None" is left to SQL, as are dictionaries it cannot fold.
  if (!dict || none) return null;
  const folded = foldedOf(dict);
  if (folded === null) return null;
  if (folded === 'caseless') {
    // No value has a letter: only a value of digits and separators can equal one; a pattern would need a scan.
    if (values.some((v) => v.includes('%'))) return null;
    return [...new Set(values.filter((v) => CASELESS.test(v)))];
  }
  const out: string[] = [];
  // Exact values by their lowered form; patterns over every value.
  for (const v of values) if (!v.includes('%')) out.push(...(folded.get(asciiLower(v)) ?? []));
  const likes = values.filter((v) => v.includes('%'));
  if (likes.length === 0) return out;
  const hit = matcher(likes);
  for (const [l, originals] of folded) if (hit(l)) out.push(...originals);
  return [...new Set(out)];
}

/** collections_index's cells of the collection-level /v2 columns, by collection_id (read once: one row per collection). */
interface Cells {
  ids: string[];
  cells: Map<string, (string | null)[]>;
}
function collectionCells(ctx: AppContext): Promise<Cells> {
  return memo(ctx, 'v2-index-count-cells', async () => {
    const have = new Set((ctx.catalog.columns.get('collections_index') ?? []).filter((c) => c.type === 'VARCHAR').map((c) => c.name));
    const cols = Object.values(FROM_COLLECTIONS).filter((c) => have.has(c));
    const rows = have.has('collection_id') ? await ctx.engine.rows(`SELECT ${['collection_id', ...cols].map(qi).join(', ')} FROM collections_index`) : [];
    const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
    return { ids: rows.map((r) => String(r.collection_id)), cells: new Map(cols.map((c) => [c, rows.map((r) => str(r[c]))])) };
  });
}

/**
 * A collection-level filter (a cell of collections_index, LEFT JOINed on
 * collection_id) as the index's collection_id values it selects; "None" also
 * selects collections without a row there, and rows without a collection.
 */
function collectionTerms(ix: CohortIndex, all: Cells, column: string, values: string[]): (string | null)[] | null {
  const cells = all.cells.get(column);
  const ids = ix.columns.get('collection_id');
  if (!cells || ids?.kind !== 'coded' || ids.values === null || !values.every(isAscii)) return null;
  if (cells.some((c) => c !== null && LOWERS_TO_ASCII.test(c))) return null;
  const hit = matcher(values);
  const none = values.includes('None');
  const out: (string | null)[] = [];
  all.ids.forEach((id, k) => {
    const cell = cells[k]!;
    if (cell === null ? none : hit(asciiLower(cell))) out.push(id);
  });
  if (none) {
    const listed = new Set(all.ids);
    out.push(...ids.values.filter((v) => !listed.has(v)), null);
  }
  return out;
}

/** The filter set as /v3 terms on the index, or null when one filter cannot be evaluated exactly. */
async function appliedOf(ctx: AppContext, ix: CohortIndex, filters: Record<string, (string | number)[]>): Promise<FiltersApplied | null> {
  // Values each column may take; two filters on one column (collection_id and a collection-level one) intersect.
  const allowed = new Map<string, Set<string | null>>();
  const allow = (column: string, t: (string | null)[]) => {
    const before = allowed.get(column);
    allowed.set(column, before ? new Set(t.filter((v) => before.has(v))) : new Set(t));
  };
  for (const [name, values] of Object.entries(filters)) {
    const f = lookupFilter(name);
    if (!f || f.suffix !== null || f.attribute.source !== 'dicom_pivot' || f.attribute.type === 'Categorical Numeric') return null;
    if (values.some((v) => typeof v !== 'string')) return null;
    const cellColumn = FROM_COLLECTIONS[f.attribute.name];
    if (cellColumn !== undefined) {
      const t = collectionTerms(ix, await collectionCells(ctx), cellColumn, values as string[]);
      if (t === null) return null;
      allow('collection_id', t);
      continue;
    }
    const column = FROM_INDEX[f.attribute.name];
    const c = column === undefined ? undefined : ix.columns.get(column);
    if (!c || c.kind === 'number') return null;
    const t = termsOf(c, values as string[]);
    if (t === null) return null;
    allow(column!, t);
  }
  return { terms: Object.fromEntries([...allowed].map(([k, v]) => [k, [...v]])), ranges: {} };
}

/**
 * The release's relations keep the index's rows: collection_id unique in
 * collections_index (a LEFT JOIN adds no row), SeriesInstanceUID unique and
 * present in the index (the totals join keeps every row once). Checked once.
 */
function rowsAreIndexRows(ctx: AppContext): Promise<boolean> {
  return memo(ctx, 'v2-index-count-rows', async () => {
    const series = await ctx.engine.one(`SELECT count(*) = count(DISTINCT "SeriesInstanceUID") AS ok FROM "index"`);
    if (series?.ok !== true) return false;
    if (!ctx.catalog.tables.includes('collections_index')) return true;
    const cols = await ctx.engine.one(`SELECT count(*) = count(DISTINCT collection_id) AS ok FROM collections_index`);
    return cols?.ok === true;
  });
}

/** Whether an id array has a row without an entity (id 0): SQL would count it as one more (NULL) group. */
const missingIds = new WeakMap<Int32Array, boolean>();
function hasMissing(ids: Int32Array): boolean {
  let m = missingIds.get(ids);
  if (m === undefined) {
    m = ids.includes(0);
    missingIds.set(ids, m);
  }
  return m;
}

/** The count from the index, or null when it cannot be given exactly (or the index is not ready). */
export async function indexCount(ctx: AppContext, of: IndexCountable): Promise<number | null> {
  const ix = readyCohortIndex(ctx);
  if (!ix) return null;
  if (of.level === 'patients' && hasMissing(ix.patients)) return null;
  if (of.level === 'studies' && hasMissing(ix.studies)) return null;
  const applied = await appliedOf(ctx, ix, of.filters);
  if (!applied || !(await rowsAreIndexRows(ctx))) return null;
  const sel = selectBits(ix, applied);
  if (sel === null) return null;
  if (of.level === 'series') return sel === 'all' ? ix.rows : countBits(sel);
  const totals = sel === 'all' ? ix.all : bitTotals(ix, sel);
  return of.level === 'patients' ? totals.patients : totals.studies;
}
