// A page of /v3/cohort/table from the cohort index: the order of the
// selection's series (sorted on a column the index holds) or of its groups
// (collections, patients, studies: in the default order or sorted on an
// aggregate), as the SQL path's ORDER BY <sort> <order> NULLS LAST, <keys>
// gives it. The rows' details come from the index (collections) or from the
// engine by row id (patients, studies, series), never by running the filter
// again. null: the index cannot order this table (a column it does not hold,
// a table order other than the manifest order); the caller asks SQL.

import { memo, type AppContext } from '../../context.ts';
import type { Row } from '../../engine/engine.ts';
import { round } from '../numbers.ts';
import { qi } from '../../registry/tables.ts';
import type { CohortIndex } from './build.ts';
import type { Selection } from './evaluate.ts';
import { BUILD_QUERY_MS } from './identifiers.ts';

export type GroupLevel = 'collections' | 'patients' | 'studies';

/** Sort keys as ranks: 1..max in the engine's ascending order, 0 missing. */
interface Ranks {
  rank: ArrayLike<number>;
  max: number;
}

const ranked = new WeakMap<object, Ranks>();

function maxOf(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > m) m = a[i]!;
  return m;
}

/** Numbers (NaN missing) as ranks of their distinct values. */
function numberRanks(values: Float64Array): Ranks {
  let r = ranked.get(values);
  if (r) return r;
  const present = values.filter((x) => x === x).sort();
  let k = 0;
  for (let i = 0; i < present.length; i++) if (i === 0 || present[i] !== present[k - 1]) present[k++] = present[i]!;
  const distinct = present.subarray(0, k);
  const rank = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (x !== x) continue;
    let lo = 0;
    let hi = k - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (distinct[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    rank[i] = lo + 1;
  }
  r = { rank, max: k };
  ranked.set(values, r);
  return r;
}

/** Table columns the index holds no values of: their ranks are read from the engine once, on the first sort on them. */
export const ENGINE_RANKED = new Set(['StudyDescription', 'SeriesDescription', 'SeriesNumber']);
const engineRanked = new WeakMap<CohortIndex, Map<string, Ranks>>();

/**
 * Makes a column of ENGINE_RANKED sortable from the index: each row's rank in
 * the engine's own ORDER BY of the column (one query per release and column,
 * 4 bytes per row), kept beside the index. A no-op for other columns.
 */
export async function loadEngineRanks(ctx: AppContext, ix: CohortIndex, name: string | null): Promise<void> {
  if (name === null || !ENGINE_RANKED.has(name) || engineRanked.get(ix)?.has(name)) return;
  if (!(ctx.catalog.columns.get('index') ?? []).some((c) => c.name === name)) return;
  const r = await memo(ctx, `table-ranks:${name}`, async () => {
    const rank = new Uint32Array(ix.rows);
    let max = 0;
    await ctx.engine.produce(
      `SELECT rowid::INTEGER AS r, dense_rank() OVER (ORDER BY ${qi(name)})::INTEGER AS k FROM "index" WHERE ${qi(name)} IS NOT NULL`,
      [],
      (chunk) => {
        const rid = chunk.getColumnVector(0);
        const k = chunk.getColumnVector(1);
        for (let j = 0; j < chunk.rowCount; j++) {
          const v = k.getItem(j) as number;
          rank[ix.table.positionOf[rid.getItem(j) as number]!] = v;
          if (v > max) max = v;
        }
        return true;
      },
      { timeoutMs: BUILD_QUERY_MS },
    );
    return { rank, max } as Ranks;
  });
  let m = engineRanked.get(ix);
  if (!m) engineRanked.set(ix, (m = new Map()));
  m.set(name, r);
}

/** The ranks of a series-level column the index holds (or whose ranks loadEngineRanks read), or null. */
export function columnRanks(ix: CohortIndex, name: string): Ranks | null {
  const loaded = engineRanked.get(ix)?.get(name);
  if (loaded) return loaded;
  if (name === 'PatientID' || name === 'StudyInstanceUID') {
    // Entity ids are the ranks of the identifiers in the engine's order (facets/table.ts dictionaries).
    const ids = name === 'PatientID' ? ix.patients : ix.studies;
    let r = ranked.get(ids);
    if (!r) ranked.set(ids, (r = { rank: ids, max: maxOf(ids) }));
    return r;
  }
  const c = ix.columns.get(name);
  if (c === undefined) return null;
  if (c.kind === 'coded') {
    if (c.values !== null) return { rank: c.codes, max: c.frequency.length - 1 };
    if (name === 'SeriesInstanceUID' && ix.series !== null) {
      let r = ranked.get(ix.series);
      if (!r) ranked.set(ix.series, (r = { rank: ix.series, max: maxOf(ix.series) }));
      return r;
    }
    return null;
  }
  if (c.kind === 'rows') {
    // One row per value, the dictionary in the engine's order: a row's rank is its value's index.
    let r = ranked.get(c.dict);
    if (!r) {
      const rank = new Uint32Array(ix.rows);
      for (let i = 0; i < c.dict.targets.length; i++) rank[c.dict.targets[i]!] = i + 1;
      ranked.set(c.dict, (r = { rank, max: c.dict.targets.length }));
    }
    return r;
  }
  // Numbers, or the ranks of dates among their sorted strings: ranked once.
  return numberRanks(c.column.values);
}

/** Manifest rank of a position (the unique tail of every order). */
const tailOf = (ix: CohortIndex, p: number) => (ix.manifestRank === null ? p : ix.manifestRank[p]!);

/**
 * Positions of the selection's series [offset, offset + size) sorted on a
 * column, missing values last, ties in manifest order; null when the index
 * does not hold it. A count per sort rank finds the rank the page ends in, so
 * only the rows up to it are sorted, not the whole selection.
 */
export function sortedSeries(ix: CohortIndex, sel: Selection | 'all', sort: string, desc: boolean, offset: number, size: number): Uint32Array | null {
  const r = columnRanks(ix, sort);
  if (r === null) return null;
  const m = ix.rows;
  // rank and tail in one exactly representable number.
  if ((r.max + 2) * m >= Number.MAX_SAFE_INTEGER) return null;
  const n = sel === 'all' ? ix.rows : sel.n;
  const end = Math.min(n, offset + size);
  if (offset >= end) return new Uint32Array(0);
  const { rank, max } = r;
  const at = (i: number) => (sel === 'all' ? i : sel.rows[i]!);
  // The rank a row sorts by: 1.. in the requested direction, a missing value after every other.
  const keyOf = (p: number) => {
    const k = rank[p]!;
    return k === 0 ? max + 1 : desc ? max + 1 - k : k;
  };
  const count = new Uint32Array(max + 2);
  const keyed = new Uint32Array(n);
  for (let i = 0; i < n; i++) count[(keyed[i] = keyOf(at(i)))]!++;
  let last = 1;
  let before = 0;
  while (before + count[last]! < end) before += count[last++]!;
  // Rows before the last rank all count; of the last rank, in table order (= manifest order when
  // manifestRank is null) only as many as the page still needs.
  let quota = ix.manifestRank === null ? end - before : count[last]!;
  const keys = new Float64Array(before + quota);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const key = keyed[i]!;
    if (key < last || (key === last && quota-- > 0)) keys[k++] = key * m + tailOf(ix, at(i));
  }
  keys.sort();
  const out = new Uint32Array(end - offset);
  for (let i = offset; i < end; i++) {
    const t = keys[i]! % m;
    out[i - offset] = ix.manifestOrder === null ? t : ix.manifestOrder[t]!;
  }
  return out;
}

/** The selection's groups: starts[g] .. starts[g + 1] index the selected rows of group g, in the default (manifest) order. */
interface Groups {
  rows: ArrayLike<number>;
  starts: Uint32Array;
  count: number;
}

function groupsOf(ix: CohortIndex, sel: Selection | 'all', depth: number): Groups | null {
  const c = ix.columns.get('collection_id');
  // Groups are runs of the selection only when the table's order is the manifest order.
  if (ix.manifestOrder !== null || c?.kind !== 'coded') return null;
  const keys = [c.codes, ix.patients, ix.studies].slice(0, depth);
  const n = sel === 'all' ? ix.rows : sel.n;
  const at = (i: number) => (sel === 'all' ? i : sel.rows[i]!);
  const starts = new Uint32Array(n + 1);
  let g = 0;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const r = at(i);
    let changed = prev < 0;
    for (let k = 0; k < keys.length && !changed; k++) if (keys[k]![r] !== keys[k]![prev]) changed = true;
    if (changed) starts[g++] = i;
    prev = r;
  }
  starts[g] = n;
  return { rows: sel === 'all' ? identity(n) : sel.rows, starts: starts.subarray(0, g + 1), count: g };
}

function identity(n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}

/** Distinct non-zero ids among each group's rows (count(DISTINCT) per group). */
function distinctPerGroup(g: Groups, ids: Int32Array, which: ArrayLike<number>): Float64Array {
  const stamp = new Int32Array(maxOf(ids) + 1);
  const out = new Float64Array(which.length);
  for (let w = 0; w < which.length; w++) {
    const k = which[w]!;
    let count = 0;
    for (let i = g.starts[k]!; i < g.starts[k + 1]!; i++) {
      const id = ids[g.rows[i]!]!;
      if (id !== 0 && stamp[id] !== k + 1) {
        stamp[id] = k + 1;
        count++;
      }
    }
    out[w] = count;
  }
  return out;
}

/** Compensated sum of series_size_MB over each group, rounded as the SQL path rounds it. */
function sizePerGroup(ix: CohortIndex, g: Groups, which: ArrayLike<number>): Float64Array {
  const out = new Float64Array(which.length);
  for (let w = 0; w < which.length; w++) {
    const k = which[w]!;
    let sum = 0;
    let carry = 0;
    for (let i = g.starts[k]!; i < g.starts[k + 1]!; i++) {
      const x = ix.sizeMb[g.rows[i]!]!;
      if (x !== x) continue;
      const t = sum + x;
      carry += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
      sum = t;
    }
    out[w] = round(sum + carry, 3);
  }
  return out;
}

/** Smallest rank among each group's rows (min(...) per group); NaN when all miss it. */
function minRankPerGroup(g: Groups, r: Ranks, which: ArrayLike<number>): Float64Array {
  const out = new Float64Array(which.length);
  for (let w = 0; w < which.length; w++) {
    const k = which[w]!;
    let best = Infinity;
    for (let i = g.starts[k]!; i < g.starts[k + 1]!; i++) {
      const x = r.rank[g.rows[i]!]!;
      if (x !== 0 && x < best) best = x;
    }
    out[w] = best === Infinity ? NaN : best;
  }
  return out;
}

const KEY_COLUMNS = ['collection_id', 'PatientID', 'StudyInstanceUID'];

/** Each group's value of a sortable column of its level (NaN: missing), or null when the index cannot compute it. */
function groupKeys(ix: CohortIndex, g: Groups, column: string): Float64Array | null {
  const all = identity(g.count);
  if (column === 'series') return Float64Array.from(all, (k) => g.starts[k + 1]! - g.starts[k]!);
  if (column === 'size_MB') return sizePerGroup(ix, g, all);
  if (column === 'patients') return distinctPerGroup(g, ix.patients, all);
  if (column === 'studies') return distinctPerGroup(g, ix.studies, all);
  const r = columnRanks(ix, column);
  if (r === null || !(KEY_COLUMNS.includes(column) || ['PatientSex', 'StudyDate', 'StudyDescription'].includes(column))) return null;
  // A key column is one value per group; the others are their min.
  return minRankPerGroup(g, r, all);
}

/** The groups on the page, in the table's order. */
function pageGroups(ix: CohortIndex, g: Groups, sort: string | null, desc: boolean, offset: number, size: number): Uint32Array | null {
  const end = Math.min(g.count, offset + size);
  if (offset >= end) return new Uint32Array(0);
  if (sort === null) return identity(end).subarray(offset);
  const keys = groupKeys(ix, g, sort);
  if (keys === null) return null;
  const order = identity(g.count);
  // ORDER BY key <order> NULLS LAST, then the group keys ascending (the group's index).
  order.sort((a, b) => {
    const x = keys[a]!;
    const y = keys[b]!;
    // NaN (missing) after every value, in either direction.
    const missing = +(x !== x) - +(y !== y);
    if (missing !== 0) return missing;
    if (x !== y && x === x) return desc ? y - x : x - y;
    return a - b;
  });
  return order.subarray(offset, end);
}

/** Values of a coded column among a group's rows, sorted, as list(DISTINCT ... ORDER BY ...) FILTER (WHERE NOT NULL) gives them. */
function distinctValues(ix: CohortIndex, g: Groups, k: number, name: string): string[] | null | undefined {
  const c = ix.columns.get(name);
  if (c?.kind !== 'coded' || c.values === null) return undefined;
  const seen = new Uint8Array(c.frequency.length);
  for (let i = g.starts[k]!; i < g.starts[k + 1]!; i++) seen[c.codes[g.rows[i]!]!] = 1;
  const out: string[] = [];
  for (let code = 1; code < seen.length; code++) if (seen[code] === 1) out.push(c.values[code - 1]!);
  return out.length === 0 ? null : out;
}

/** The selection's groups of a level and those on the page, in the table's order; null when the index cannot order them. */
export function orderedGroups(ix: CohortIndex, sel: Selection | 'all', level: GroupLevel, sort: string | null, desc: boolean, offset: number, size: number): { g: Groups; page: Uint32Array } | null {
  const g = groupsOf(ix, sel, level === 'collections' ? 1 : level === 'patients' ? 2 : 3);
  const page = g && pageGroups(ix, g, sort, desc, offset, size);
  return g && page && { g, page };
}

/** Most selected rows a page of patients or studies reads from the engine by row id. */
const MAX_PAGE_ROWS = 100_000;

/**
 * A page of grouped rows from the index, or null (the caller asks SQL).
 * Collections are computed here; patients and studies are grouped by the
 * engine over the row ids of their selected rows (`select`: the level's own
 * columns, `keys`: its GROUP BY).
 */
export async function groupedPage(
  ctx: AppContext,
  ix: CohortIndex,
  sel: Selection | 'all',
  level: GroupLevel,
  select: string,
  sort: string | null,
  desc: boolean,
  offset: number,
  size: number,
): Promise<{ rows: Row[]; total: number } | null> {
  const depth = level === 'collections' ? 1 : level === 'patients' ? 2 : 3;
  await loadEngineRanks(ctx, ix, sort);
  const ordered = orderedGroups(ix, sel, level, sort, desc, offset, size);
  if (ordered === null) return null;
  const { g, page } = ordered;
  if (level === 'collections') {
    const c = ix.columns.get('collection_id');
    if (c?.kind !== 'coded' || c.values === null) return null;
    const patients = distinctPerGroup(g, ix.patients, page);
    const studies = distinctPerGroup(g, ix.studies, page);
    const sizes = sizePerGroup(ix, g, page);
    const rows: Row[] = [];
    for (let w = 0; w < page.length; w++) {
      const k = page[w]!;
      const code = c.codes[g.rows[g.starts[k]!]!]!;
      const modalities = distinctValues(ix, g, k, 'Modality');
      const licenses = distinctValues(ix, g, k, 'license_short_name');
      if (modalities === undefined || licenses === undefined) return null;
      rows.push({
        collection_id: code === 0 ? null : c.values[code - 1]!,
        patients: patients[w]!,
        studies: studies[w]!,
        series: g.starts[k + 1]! - g.starts[k]!,
        size_MB: sizes[w]!,
        modalities,
        licenses,
      });
    }
    return { rows, total: g.count };
  }
  let n = 0;
  for (const k of page) n += g.starts[k + 1]! - g.starts[k]!;
  if (n > MAX_PAGE_ROWS) return null;
  if (n === 0) return { rows: [], total: g.count };
  // Each selected row's page slot, then the engine groups those rows by row id (never by the filter).
  const slot = new Map<number, number>();
  let lo = Infinity;
  let hi = -Infinity;
  page.forEach((k, w) => {
    for (let i = g.starts[k]!; i < g.starts[k + 1]!; i++) {
      const id = ix.rowidOf[g.rows[i]!]!;
      slot.set(id, w);
      if (id < lo) lo = id;
      if (id > hi) hi = id;
    }
  });
  const keys = KEY_COLUMNS.slice(0, depth);
  // Row ids are integers of our own, written inline; the bounds let the engine skip the row groups outside them.
  const found = await ctx.engine.rows(
    `SELECT ${select}, min(rowid) AS "__first" FROM "index" WHERE rowid BETWEEN ${lo} AND ${hi} AND rowid IN (${[...slot.keys()].join(', ')}) GROUP BY ${keys.join(', ')}`,
  );
  const rows: (Row | undefined)[] = Array.from({ length: page.length }, () => undefined);
  for (const { __first, ...row } of found) rows[slot.get(Number(__first))!] = row;
  if (found.length !== page.length || rows.some((r) => r === undefined)) throw new Error('cohort index: a group of the page was not found by row id');
  return { rows: rows as Row[], total: g.count };
}

