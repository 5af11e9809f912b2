// The cohort index of an opened release: every filterable attribute of
// `index` as dictionary codes or numbers, patients/studies/series as integer
// ids, and the rows' manifest order, so a /v3 filter is answered in memory
// (evaluate.ts) instead of by a scan in the engine. It extends the facet table
// (facets/table.ts, the codes and numbers), adding column-major codes for fast
// clause scans, the identifier dictionaries, the manifest order and the
// whole release's totals. Read from its file beside the database (file.ts,
// written when the database is built) before the server listens; without a
// usable file, built in the background at start-up and the file written.
// IDQS_COHORT_INDEX=off leaves every answer to SQL.

import { existsSync } from 'node:fs';
import { memo, releaseContext, type AppContext } from '../../context.ts';
import { ATTRIBUTES } from '../../registry/attributes.ts';
import { addCollectionColumns, facetTable, loadFacetTable, type FacetTable, type RangeColumn, type TermColumn } from '../facets/table.ts';
import { indexFileOf, indexKey, readIndexFile, saveIndexFile, type LoadResult } from './file.ts';
import { MANIFEST_ORDER } from '../../rules/manifest-order.ts';
import { BUILD_QUERY_MS, entityDictionary, findString, rowDictionary, type SortedStrings } from './identifiers.ts';
import { totalsOf, type Totals } from './totals.ts';

/** A term attribute as one code per row (0 = missing) and the rows per code. */
export interface CodedColumn {
  kind: 'coded';
  codes: Uint16Array | Uint32Array | Int32Array;
  /** Rows holding each code. */
  frequency: Int32Array;
  /** The code of a filter value, or undefined when no row holds it. */
  codeOf: (value: string) => number | undefined;
  /** The value of each code 1.. (values[code - 1]); null for identifiers. */
  values: string[] | null;
  /** An identifier's dictionary (codeOf searches it); kept to write the index to its file. */
  dict?: SortedStrings;
}

/** A range attribute: numbers, or for strings (dates) ranks into `column.sorted`. */
export interface NumberColumn {
  kind: 'number';
  column: RangeColumn;
}

/** An identifier unique per row (SeriesInstanceUID): a value is at most one row. */
export interface RowIdColumn {
  kind: 'rows';
  dict: SortedStrings;
}

export type IndexedColumn = CodedColumn | NumberColumn | RowIdColumn;

export interface CohortIndex {
  table: FacetTable;
  rows: number;
  /** The attributes the index can evaluate; a filter naming any other is answered by SQL. */
  columns: Map<string, IndexedColumn>;
  patients: Int32Array;
  studies: Int32Array;
  /** null: every row is its own series. */
  series: Int32Array | null;
  instances: Float64Array;
  sizeMb: Float64Array;
  /** Row positions in manifest order (null: the table's order is the manifest order). */
  manifestOrder: Uint32Array | null;
  /** Manifest rank of each position (null with manifestOrder). */
  manifestRank: Uint32Array | null;
  /** Engine rowid of each position. */
  rowidOf: Int32Array;
  /** Each entity's rows are adjacent in table order. */
  adjacent: boolean;
  /** Totals of the whole release. */
  all: Totals;
}

function frequencies(codes: ArrayLike<number>, size: number): Int32Array {
  const f = new Int32Array(size);
  for (let r = 0; r < codes.length; r++) f[codes[r]!]!++;
  return f;
}

function termColumn(t: FacetTable, c: TermColumn): CodedColumn {
  const codes = t.codes instanceof Uint16Array ? new Uint16Array(t.rows) : new Uint32Array(t.rows);
  for (let r = 0, i = c.slot; r < t.rows; r++, i += t.width) codes[r] = t.codes[i]!;
  return { kind: 'coded', codes, frequency: frequencies(codes, t.slotSizes[c.slot]!), codeOf: (v) => c.codeOf.get(v), values: c.values };
}

function entityColumn(ids: Int32Array, dict: SortedStrings, find: (d: SortedStrings, v: string) => number): CodedColumn {
  let max = 0;
  for (let i = 0; i < dict.targets.length; i++) if (dict.targets[i]! > max) max = dict.targets[i]!;
  return {
    kind: 'coded',
    codes: ids,
    values: null,
    dict,
    frequency: frequencies(ids, max + 1),
    codeOf: (v) => {
      const i = find(dict, v);
      return i < 0 ? undefined : dict.targets[i];
    },
  };
}

async function manifestOrderOf(ctx: AppContext, t: FacetTable): Promise<Uint32Array | null> {
  const order = new Uint32Array(t.rows);
  let i = 0;
  let identity = true;
  await ctx.engine.produce(
    `SELECT rowid::INTEGER FROM "index" ORDER BY ${MANIFEST_ORDER}, rowid`,
    [],
    (chunk) => {
      const v = chunk.getColumnVector(0);
      for (let j = 0; j < chunk.rowCount; j++, i++) {
        const p = t.positionOf[v.getItem(j) as number]!;
        order[i] = p;
        if (p !== i) identity = false;
      }
      return true;
    },
    { timeoutMs: BUILD_QUERY_MS },
  );
  return identity ? null : order;
}

async function buildIndex(ctx: AppContext): Promise<CohortIndex> {
  const t = await facetTable(ctx);
  const types = new Map((ctx.catalog.columns.get('index') ?? []).map((c) => [c.name, c.type]));
  const patients = t.entities.patients.ids!;
  const studies = t.entities.studies.ids!;
  const series = t.entities.series.ids;
  const seriesUnique = series === null;

  const columns = new Map<string, IndexedColumn>();
  for (const def of ATTRIBUTES) {
    const c = t.columns.get(def.name);
    // Only text columns: IN on another type casts the values, which the dictionary does not reproduce.
    if (!c || (def.kind === 'term' && types.get(def.name) !== 'VARCHAR')) continue;
    if (c.kind === 'term') columns.set(def.name, termColumn(t, c));
    else if (c.kind === 'range') columns.set(def.name, { kind: 'number', column: c });
    else if (def.name === 'PatientID' || def.name === 'StudyInstanceUID') {
      const dict = await entityDictionary(ctx, def.name);
      if (dict) columns.set(def.name, entityColumn(def.name === 'PatientID' ? patients : studies, dict, findString));
    } else if (def.name === 'SeriesInstanceUID') {
      const dict = seriesUnique ? await rowDictionary(ctx, def.name, t.positionOf) : await entityDictionary(ctx, def.name);
      if (dict) columns.set(def.name, seriesUnique ? { kind: 'rows', dict } : entityColumn(series, dict, findString));
    }
    // Any other identifier stays with SQL.
  }

  const numbers = (name: string) => {
    const c = t.columns.get(name);
    return c?.kind === 'range' ? c.values : new Float64Array(t.rows).fill(NaN);
  };
  const manifestOrder = await manifestOrderOf(ctx, t);
  let manifestRank: Uint32Array | null = null;
  if (manifestOrder) {
    manifestRank = new Uint32Array(t.rows);
    for (let i = 0; i < t.rows; i++) manifestRank[manifestOrder[i]!] = i;
  }
  const rowidOf = new Int32Array(t.rows);
  for (let rid = 0; rid < t.positionOf.length; rid++) {
    const p = t.positionOf[rid]!;
    if (p >= 0) rowidOf[p] = rid;
  }
  const ix: Omit<CohortIndex, 'all'> = {
    table: t,
    rows: t.rows,
    adjacent: t.entities.patients.order === null && t.entities.studies.order === null && t.entities.series.order === null,
    columns,
    patients,
    studies,
    series,
    instances: numbers('instanceCount'),
    sizeMb: numbers('series_size_MB'),
    manifestOrder,
    manifestRank,
    rowidOf,
  };
  const everyRow = new Uint32Array(t.rows);
  for (let r = 0; r < t.rows; r++) everyRow[r] = r;
  return { ...ix, all: totalsOf(ix, everyRow, t.rows) };
}

const ready = new WeakMap<AppContext, CohortIndex>();

/** How the index of an opened database came to be: loaded from its file, or built (and why the file was not used). */
export interface IndexOrigin {
  loaded: boolean;
  /** Why the file was not used (absent, stale, damaged); null when loaded. */
  reason: string | null;
  /** What became of writing the file after a build: written, present, or why not; a promise while it runs. */
  saved: Promise<string> | null;
}
const origins = new WeakMap<AppContext, IndexOrigin>();

/** How the index came to be (undefined before the first call of cohortIndex). */
export const indexOrigin = (ctx: AppContext): IndexOrigin | undefined => origins.get(releaseContext(ctx));

const fileOf = (ctx: AppContext) => indexFileOf(ctx.engine.options.path);

/** The index from its file, else built from the engine and then written to the file (in the background). */
async function loadOrBuild(ctx: AppContext, key: string, loading: Promise<LoadResult>): Promise<CohortIndex> {
  const r = await loading;
  if ('index' in r) {
    origins.set(releaseContext(ctx), { loaded: true, reason: null, saved: null });
    return r.index;
  }
  // Every build says why the file was not used (a first start has none: not worth a warning).
  if (r.reason !== 'absent') ctx.engine.events.emit('operator', { level: 'warn', msg: `cohort index file not used, building the index from the database: ${r.reason}`, file: fileOf(ctx) });
  const ix = await buildIndex(ctx);
  const saved = saveIndexFile(ix, fileOf(ctx), key).catch((e: Error) => `not written: ${e.message}`);
  origins.set(releaseContext(ctx), { loaded: false, reason: r.reason, saved });
  if (r.reason !== 'absent') {
    void saved.then((outcome) => ctx.engine.events.emit('operator', { level: outcome === 'written' ? 'info' : 'warn', msg: `cohort index file after the rebuild: ${outcome}`, file: fileOf(ctx) }));
  }
  return ix;
}

/** The cohort index of the opened release (loaded or built on first call), or null when the configuration turns it off. */
export function cohortIndex(ctx: AppContext): Promise<CohortIndex | null> {
  if (ctx.config.cohortIndex === 'off') return Promise.resolve(null);
  return memo(ctx, 'cohort-index', async () => {
    const file = fileOf(ctx);
    // Taken before the build reads the database, so a file written from this build names this database.
    const key = indexKey(ctx.dataset.identity, ctx.engine.options.path);
    const present = existsSync(file);
    const loading: Promise<LoadResult> = present
      ? readIndexFile(file, key, (t) => addCollectionColumns(ctx, t), (why) => dropChanged(ctx, why)).catch((e: Error) => ({ reason: `damaged (${e.message})` }))
      : Promise.resolve({ reason: 'absent' });
    // The file holds the facet table too: facets wait for it rather than scan the engine for the same arrays.
    if (present) {
      facetTable(ctx, async () => {
        const r = await loading;
        return 'index' in r ? r.index.table : loadFacetTable(ctx);
      }).catch(() => {});
    }
    reading.set(releaseContext(ctx), loading);
    const ix = await loadOrBuild(ctx, key, loading);
    ready.set(releaseContext(ctx), ix);
    return ix;
  });
}

const reading = new WeakMap<AppContext, Promise<LoadResult>>();

/**
 * The file changed under the running server (a part read on first use failed its checksum): the index and
 * the facet table read from it are dropped, so answers come from SQL (and facets wait) while both are read
 * or built again, the file then rewritten; the operator is told why.
 */
function dropChanged(ctx: AppContext, why: string): void {
  const release = releaseContext(ctx);
  ctx.engine.events.emit('operator', { level: 'warn', msg: `cohort index file changed under the running server; dropping the index and building it again (SQL answers meanwhile): ${why}`, file: fileOf(ctx) });
  ready.delete(release);
  reading.delete(release);
  release.memo.delete('cohort-index');
  release.memo.delete('facet-table');
  warmCohortIndex(ctx);
}

/**
 * At start-up: waits for the index when its file is there (a read of the file,
 * well under a second even for the full corpus, so the first count is answered
 * from memory); else starts building it in the background and returns at once.
 */
export async function startCohortIndex(ctx: AppContext): Promise<void> {
  warmCohortIndex(ctx);
  const loading = reading.get(releaseContext(ctx));
  if (!loading || !('index' in (await loading))) return;
  await cohortIndex(ctx).catch(() => {});
}

/**
 * The index if it is built; else null, and its build is started: until it is
 * ready, answers come from SQL, so start-up is not held back by the build.
 */
export function readyCohortIndex(ctx: AppContext): CohortIndex | null {
  const ix = ready.get(releaseContext(ctx));
  if (ix) return ix;
  warmCohortIndex(ctx);
  return null;
}

/** Start building the index in the background (a failure is reported by the first request that awaits it). */
export function warmCohortIndex(ctx: AppContext): void {
  cohortIndex(ctx).catch(() => {});
}
