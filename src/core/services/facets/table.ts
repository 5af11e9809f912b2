// The facet table: the columns of `index` that facets count, held in memory
// as small integer codes (loaded once per opened database; the data never
// changes). Counting distinct patients per value for every attribute is one
// pass over these arrays (see count.ts); the engine's count(DISTINCT) per
// group costs about 100 ms per attribute at full scale, which is why this
// exists. About 90 bytes per series: ~80 MB for the full corpus.

import { existsSync } from 'node:fs';
import { indexFileOf } from '../cohort-index/file.ts';
import { collectionValues, hasCollectionColumn, type CollectionValues } from '../../filters/collection-values.ts';
import { memo, type AppContext } from '../../context.ts';
import { ATTRIBUTES, type AttributeDef } from '../../registry/attributes.ts';
import { qi } from '../../registry/tables.ts';
import { binOf, dateEdges, numericEdges, type Edges } from './bins.ts';

export type CountMode = 'patients' | 'studies' | 'series';
export const COUNT_MODES: readonly CountMode[] = ['patients', 'studies', 'series'];

/** A categorical term attribute: codes 1..values.length index the sorted dictionary; 0 is a missing value. */
export interface TermColumn {
  kind: 'term';
  def: AttributeDef;
  slot: number;
  values: string[];
  codeOf: Map<string, number>;
}

/**
 * A range attribute: its facet code is bin + 1 (0 = missing). `values` holds
 * each row's number, or for string attributes (dates) the rank of its value
 * in `sorted` (1-based); NaN when missing. Filters compare these.
 */
export interface RangeColumn {
  kind: 'range';
  def: AttributeDef;
  slot: number;
  edges: Edges;
  values: Float64Array;
  /** Sorted distinct values of a string attribute; null for numbers. */
  sorted: string[] | null;
}

/** A term attribute that identifies rows (UIDs, PatientID): not enumerated; a filter on it is resolved by the engine. */
export interface IdentifierColumn {
  kind: 'identifier';
  def: AttributeDef;
}

/**
 * A fact of the series' collection (registry: `collection`): rows are read
 * through the codes of the collection_id slot; `valuesOf[collection code]`
 * lists the codes (1..values.length) of that collection's values.
 */
export interface CollectionColumn {
  kind: 'collection';
  def: AttributeDef;
  /** Slot of collection_id, whose codes the rows carry. */
  collectionSlot: number;
  values: string[];
  codeOf: Map<string, number>;
  valuesOf: Int32Array[];
}

export type FacetColumn = TermColumn | RangeColumn | IdentifierColumn | CollectionColumn;

/** What a count counts: entity ids per row (0 = missing, not counted), and a row order in which each entity's rows are adjacent. */
export interface Entity {
  /** null: every row is its own entity (id = row + 1). */
  ids: Int32Array | null;
  /** null: the table's own row order already keeps each entity's rows together. */
  order: Uint32Array | null;
}

export interface FacetTable {
  rows: number;
  /** Facet slots per row. */
  width: number;
  /** Row-major facet codes: codes[row * width + slot]. */
  codes: Uint16Array | Uint32Array;
  /** Codes per slot (dictionary size or bins, plus the missing code 0). */
  slotSizes: number[];
  columns: Map<string, FacetColumn>;
  entities: Record<CountMode, Entity>;
  /** Row position of each engine rowid of `index` (-1 when absent). */
  positionOf: Int32Array;
}

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|REAL|DECIMAL)/i;
const INTEGER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT)/i;

/** A dictionary CTE: distinct non-missing values of a column, ranked 1.. in the engine's own order. */
function dictionary(name: string, col: string, cast = ''): string {
  return `${name} AS (SELECT v, (row_number() OVER (ORDER BY v))::INTEGER AS code FROM (SELECT DISTINCT ${qi(col)}${cast} AS v FROM "index" WHERE ${qi(col)} IS NOT NULL))`;
}

/** Whether the rows of each entity are adjacent in the table's order; else a stable counting sort by entity. */
function entityOrder(ids: Int32Array, maxId: number): Uint32Array | null {
  const seen = new Uint8Array(maxId + 1);
  let prev = -1;
  let adjacent = true;
  for (let r = 0; r < ids.length; r++) {
    const e = ids[r]!;
    if (e === prev) continue;
    if (seen[e] === 1 && e !== 0) {
      adjacent = false;
      break;
    }
    seen[e] = 1;
    prev = e;
  }
  if (adjacent) return null;
  // Entities ranked by their first row, not by id: the order is then the table's own except where an
  // entity's later rows are pulled up to its first ones (a patient in two collections), so a walk in
  // it reads the table nearly in sequence instead of jumping between collections.
  const rank = new Int32Array(maxId + 1).fill(-1);
  let ranks = 0;
  for (let r = 0; r < ids.length; r++) if (rank[ids[r]!]! < 0) rank[ids[r]!] = ranks++;
  const start = new Uint32Array(ranks + 1);
  for (let r = 0; r < ids.length; r++) start[rank[ids[r]!]! + 1]!++;
  for (let k = 1; k <= ranks; k++) start[k]! += start[k - 1]!;
  const order = new Uint32Array(ids.length);
  for (let r = 0; r < ids.length; r++) order[start[rank[ids[r]!]!]!++] = r;
  return order;
}

/** One column the loader reads: a SELECT expression over `index` AS i, with the dictionary it joins, if any. */
interface Read {
  expr: string;
  cte?: string;
  join?: string;
  /** Receives the values of one chunk, with the row position of each. */
  store: (values: (number | null)[], positions: Int32Array) => void;
}

function dictionaryRead(name: string, col: string, store: Read['store']): Read {
  return { expr: `coalesce(${name}.code, 0)`, cte: dictionary(name, col, '::VARCHAR'), join: `LEFT JOIN ${name} ON i.${qi(col)}::VARCHAR = ${name}.v`, store };
}

/** Columns per query: the engine's chunks of a few columns at a time stay small. */
const READS_PER_QUERY = 4;

export async function loadFacetTable(ctx: AppContext): Promise<FacetTable> {
  const e = ctx.engine;
  const types = new Map((ctx.catalog.columns.get('index') ?? []).map((c) => [c.name, c.type]));
  const facts = await e.one(
    `SELECT count(*) AS n, coalesce(max(rowid), -1) AS max_rowid, count(DISTINCT SeriesInstanceUID) AS series, count(SeriesInstanceUID) AS with_series FROM "index"`,
  );
  const rows = Number(facts!.n);
  const seriesUnique = Number(facts!.series) === rows && Number(facts!.with_series) === rows;

  const columns = new Map<string, FacetColumn>();
  const slotted: (TermColumn | RangeColumn)[] = [];
  for (const def of ATTRIBUTES) {
    if (def.collection) continue; // read through collection_id, below
    const type = types.get(def.name);
    if (type === undefined) continue; // a release without this column: no facet
    if (def.kind === 'term' && !def.categorical) {
      columns.set(def.name, { kind: 'identifier', def });
      continue;
    }
    const slot = slotted.length;
    let col: TermColumn | RangeColumn;
    if (def.kind === 'term') {
      const values = await distinctStrings(ctx, def.name);
      col = { kind: 'term', def, slot, values, codeOf: new Map(values.map((v, i) => [v, i + 1])) };
    } else if (NUMERIC.test(type)) {
      const mm = await e.one(`SELECT min(${qi(def.name)})::DOUBLE AS lo, max(${qi(def.name)})::DOUBLE AS hi FROM "index"`);
      const edges = mm?.lo === null || mm?.lo === undefined ? [] : numericEdges(Number(mm.lo), Number(mm.hi), INTEGER.test(type));
      col = { kind: 'range', def, slot, edges, values: new Float64Array(rows), sorted: null };
    } else {
      const sorted = await distinctStrings(ctx, def.name);
      const edges = sorted.length > 0 ? dateEdges(sorted[0]!, sorted.at(-1)!) : [];
      col = { kind: 'range', def, slot, edges, values: new Float64Array(rows), sorted };
    }
    columns.set(def.name, col);
    slotted.push(col);
  }

  const width = slotted.length;
  const slotSizes = slotted.map((c) => (c.kind === 'term' ? c.values.length + 1 : Math.max(0, c.edges.length - 1) + 1));
  const codes = Math.max(0, ...slotSizes) <= 0xffff ? new Uint16Array(rows * width) : new Uint32Array(rows * width);
  const patient = new Int32Array(rows);
  const study = new Int32Array(rows);
  const series = seriesUnique ? null : new Int32Array(rows);

  const into = (a: Int32Array): Read['store'] => (values, at) => {
    for (let j = 0; j < values.length; j++) a[at[j]!] = values[j]!;
  };
  const reads: Read[] = [dictionaryRead('d_patient', 'PatientID', into(patient)), dictionaryRead('d_study', 'StudyInstanceUID', into(study))];
  if (series) reads.push(dictionaryRead('d_series', 'SeriesInstanceUID', into(series)));
  for (const c of slotted) {
    const s = c.slot;
    if (c.kind === 'term') {
      reads.push(dictionaryRead(`d${s}`, c.def.name, (values, at) => {
        for (let j = 0; j < values.length; j++) codes[at[j]! * width + s] = values[j]!;
      }));
    } else if (c.sorted === null) {
      const numbers = c.values;
      reads.push({
        expr: `i.${qi(c.def.name)}::DOUBLE`,
        store: (values, at) => {
          for (let j = 0; j < values.length; j++) {
            const v = values[j];
            const x = v === null || v === undefined ? NaN : v;
            numbers[at[j]!] = x;
            codes[at[j]! * width + s] = Number.isNaN(x) || c.edges.length < 2 ? 0 : binOf(c.edges, x) + 1;
          }
        },
      });
    } else {
      // A value's bin, per dictionary rank.
      const binOfRank = Uint32Array.from(c.sorted, (v) => (c.edges.length < 2 ? 0 : binOf(c.edges, v) + 1));
      const ranks = c.values;
      reads.push(dictionaryRead(`d${s}`, c.def.name, (values, at) => {
        for (let j = 0; j < values.length; j++) {
          const rank = values[j]!;
          ranks[at[j]!] = rank === 0 ? NaN : rank;
          codes[at[j]! * width + s] = rank === 0 ? 0 : binOfRank[rank - 1]!;
        }
      }));
    }
  }

  // Rows keep the table's own order (position = rowid when rowids are dense),
  // in which the build keeps each patient's and study's series together.
  const positionOf = new Int32Array(Number(facts!.max_rowid) + 1).fill(-1);
  const dense = positionOf.length === rows;
  if (!dense) {
    let pos = 0;
    for (const chunk of (await e.materialize(`SELECT rowid::INTEGER FROM "index"`)).chunks) {
      const v = chunk.getColumnVector(0);
      for (let j = 0; j < chunk.rowCount; j++) positionOf[v.getItem(j) as number] = pos++;
    }
  } else {
    for (let r = 0; r < rows; r++) positionOf[r] = r;
  }

  const groups: Read[][] = [];
  for (let i = 0; i < reads.length; i += READS_PER_QUERY) groups.push(reads.slice(i, i + READS_PER_QUERY));
  await Promise.all(
    groups.map(async (g) => {
      const ctes = g.flatMap((r) => (r.cte ? [r.cte] : []));
      const sql =
        `${ctes.length > 0 ? `WITH ${ctes.join(', ')} ` : ''}SELECT i.rowid::INTEGER, ${g.map((r) => r.expr).join(', ')} ` +
        `FROM "index" i ${g.flatMap((r) => (r.join ? [r.join] : [])).join(' ')}`;
      for (const chunk of (await e.materialize(sql)).chunks) {
        const n = chunk.rowCount;
        const at = new Int32Array(n);
        const rid = chunk.getColumnVector(0);
        for (let j = 0; j < n; j++) at[j] = positionOf[rid.getItem(j) as number]!;
        g.forEach((r, k) => {
          const v = chunk.getColumnVector(k + 1);
          const values = new Array<number | null>(n);
          for (let j = 0; j < n; j++) values[j] = v.getItem(j) as number | null;
          r.store(values, at);
        });
      }
    }),
  );

  const maxOf = (a: Int32Array) => a.reduce((m, x) => (x > m ? x : m), 0);
  const table: FacetTable = {
    rows,
    width,
    codes,
    slotSizes,
    columns,
    entities: {
      patients: { ids: patient, order: entityOrder(patient, maxOf(patient)) },
      studies: { ids: study, order: entityOrder(study, maxOf(study)) },
      series: series ? { ids: series, order: entityOrder(series, maxOf(series)) } : { ids: null, order: null },
    },
    positionOf,
  };
  await addCollectionColumns(ctx, table);
  return table;
}

/** The collection-level attributes, read through the codes of collection_id (from collections_index, a small table). */
export async function addCollectionColumns(ctx: AppContext, t: FacetTable): Promise<void> {
  const byCollection = t.columns.get('collection_id');
  if (byCollection?.kind !== 'term') return;
  for (const def of ATTRIBUTES) {
    if (def.collection && hasCollectionColumn(ctx, def)) t.columns.set(def.name, collectionColumn(def, byCollection, await collectionValues(ctx, def)));
  }
}

function collectionColumn(def: AttributeDef, byCollection: TermColumn, cv: CollectionValues): CollectionColumn {
  const values = [...cv.collectionsOf.keys()].sort();
  const codeOf = new Map(values.map((v, i) => [v, i + 1]));
  const valuesOf = [new Int32Array(0), ...byCollection.values.map((id) => Int32Array.from(cv.byCollection.get(id) ?? [], (v) => codeOf.get(v)!))];
  return { kind: 'collection', def, collectionSlot: byCollection.slot, values, codeOf, valuesOf };
}

async function distinctStrings(ctx: AppContext, col: string): Promise<string[]> {
  const rows = await ctx.engine.rows(`SELECT DISTINCT ${qi(col)}::VARCHAR AS v FROM "index" WHERE ${qi(col)} IS NOT NULL ORDER BY 1`);
  return rows.map((r) => String(r.v));
}

/** The facet table of an opened database, loaded once (start it early with warmFacets); `load`: how, when this is the first call. */
export function facetTable(ctx: AppContext, load = () => loadFacetTable(ctx)): Promise<FacetTable> {
  return memo(ctx, 'facet-table', load);
}

/** Start loading the facet table in the background (a failure is reported by the first request). */
export function warmFacets(ctx: AppContext): void {
  // The cohort index's file holds this table: its loading (started at the same time) provides it, without a scan.
  if (ctx.config.cohortIndex !== 'off' && existsSync(indexFileOf(ctx.engine.options.path))) return;
  facetTable(ctx).catch(() => {});
}
