// Per-collection clinical tables (schema `clinical`): discovery through the
// dictionary clinical_index joined with the tables actually present, column
// labels and coded values, and a row reader whose cap is applied in the query.

import { memo, type AppContext } from '../context.ts';
import { didYouMean, field, invalidRequest, msg, notFound, see, type Part } from '../errors.ts';
import type { JsonValue } from '../engine/json.ts';
import { qi } from '../registry/tables.ts';
import { suggest } from '../suggest.ts';
import { fetchTablesCommand } from './missing-tables.ts';
import { closeCollectionIds, collectionIds, unknownCollectionWarning } from './collections.ts';
import { toNumber } from './numbers.ts';

export const CLINICAL_SCHEMA = 'clinical';
const JOIN_COLUMN = 'dicom_patient_id';

export interface ClinicalTableInfo {
  table_name: string;
  sql_path: string;
  /** Collection the table documents; null when clinical_index does not describe the table. */
  collection_id: string | null;
  column_count: number;
  description: string;
  row_count: number;
}

export interface ClinicalTableList {
  tables: ClinicalTableInfo[];
  warnings?: string[];
}

export interface CodedValue {
  code: string | null;
  description: string | null;
}

export interface ClinicalColumn {
  name: string;
  /** Type of the column in the SQL engine (VARCHAR, BIGINT, DOUBLE, ...). */
  type: string;
  /** The label, under the public service's name for it. */
  description: string;
  label: string;
  values: CodedValue[];
}

export interface ClinicalTableSchema {
  name: string;
  description: string;
  columns: ClinicalColumn[];
}

export interface ClinicalRows {
  columns: string[];
  /** Engine type of each column, in the order of columns. */
  types: string[];
  rows: Record<string, JsonValue>[];
  row_count: number;
  truncated: boolean;
  max_rows: number;
}

interface DictionaryEntry {
  collection_id: string | null;
  table: string;
  column: string;
  label: string | null;
  values: CodedValue[];
}

function requireClinical(ctx: AppContext): void {
  if (ctx.catalog.clinicalTables.length === 0) {
    throw notFound(
      msg`This build has no clinical tables: the database was built from a release folder without clinical/<table>/*.parquet. ${fetchTablesCommand(
        ctx,
        ['clinical'],
      )} fetches them with their dictionary, clinical_index (from s3://idc-open-metadata/bigquery_export/idc_v<release>_clinical/<table>/*.parquet, anonymously), and rebuilds. Imaging discovery (${see(
        'list_tables',
      )}) and ${see('run_sql')} still work.`,
    );
  }
}

function codedValues(v: JsonValue | undefined): CodedValue[] {
  if (!Array.isArray(v)) return [];
  const out: CodedValue[] = [];
  for (const item of v) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
    const code = item.option_code;
    const description = item.option_description;
    out.push({
      code: code === null || code === undefined ? null : String(code),
      description: description === null || description === undefined ? null : String(description),
    });
  }
  return out;
}

/** The rows of clinical_index, ordered by collection, table and column (empty when the table is absent). */
function dictionary(ctx: AppContext): Promise<DictionaryEntry[]> {
  return memo(ctx, 'clinical-dictionary', async () => {
    const live = new Set((ctx.catalog.columns.get('clinical_index') ?? []).map((c) => c.name));
    if (!live.has('short_table_name') || !live.has('column')) return [];
    const opt = (c: string) => (live.has(c) ? qi(c) : `NULL AS ${qi(c)}`);
    const rows = await ctx.engine.rows(
      `SELECT ${opt('collection_id')}, "short_table_name", "column", ${opt('column_label')}, ${opt('values')}
       FROM "clinical_index" WHERE "short_table_name" IS NOT NULL AND "column" IS NOT NULL
       ORDER BY collection_id NULLS LAST, short_table_name, "column"`,
    );
    return rows.map((r) => ({
      collection_id: r.collection_id === null ? null : String(r.collection_id),
      table: String(r.short_table_name),
      column: String(r.column),
      label: r.column_label === null ? null : String(r.column_label),
      values: codedValues(r.values),
    }));
  });
}

/** Exact row count of every clinical table, computed once. */
function rowCounts(ctx: AppContext): Promise<Map<string, number>> {
  return memo(ctx, 'clinical-row-counts', async () => {
    const names = ctx.catalog.clinicalTables;
    const out = new Map<string, number>();
    if (names.length === 0) return out;
    const sql = names.map((n) => `SELECT ? AS t, count(*) AS n FROM ${qi(CLINICAL_SCHEMA)}.${qi(n)}`).join(' UNION ALL ');
    for (const r of await ctx.engine.rows(sql, names)) out.set(String(r.t), toNumber(r.n));
    return out;
  });
}

function liveColumns(ctx: AppContext, table: string) {
  return ctx.catalog.columns.get(`${CLINICAL_SCHEMA}.${table}`) ?? [];
}

function hasJoinColumn(ctx: AppContext, table: string): boolean {
  return liveColumns(ctx, table).some((c) => c.name === JOIN_COLUMN);
}

function joinHint(ctx: AppContext, table: string): string {
  return hasJoinColumn(ctx, table) ? ` Join to imaging with ${JOIN_COLUMN} = index.PatientID (not by series).` : '';
}

function describeTable(ctx: AppContext, table: string, collections: string[]): string {
  const of = collections.length > 0 ? ` of collection ${collections.join(', ')}` : '';
  return `Clinical data${of}; query it in SQL as ${CLINICAL_SCHEMA}.${table}.${joinHint(ctx, table)}`;
}

/** Clinical tables present in the build, optionally of one collection; ordered by collection_id, table_name. */
export async function listClinicalTables(ctx: AppContext, collectionId?: string): Promise<ClinicalTableList> {
  requireClinical(ctx);
  const all = await memo(ctx, 'clinical-tables', async () => {
    const present = new Set(ctx.catalog.clinicalTables);
    const counts = await rowCounts(ctx);
    const pairs = new Map<string, { collection_id: string | null; table: string }>();
    for (const e of await dictionary(ctx)) {
      if (!present.has(e.table)) continue;
      pairs.set(`${e.collection_id ?? ''}\u0000${e.table}`, { collection_id: e.collection_id, table: e.table });
    }
    const documented = new Set([...pairs.values()].map((p) => p.table));
    for (const t of present) if (!documented.has(t)) pairs.set(`\u0000${t}`, { collection_id: null, table: t });
    const list = [...pairs.values()].map(
      (p): ClinicalTableInfo => ({
        table_name: p.table,
        sql_path: `${CLINICAL_SCHEMA}.${p.table}`,
        collection_id: p.collection_id,
        column_count: liveColumns(ctx, p.table).length,
        description: describeTable(ctx, p.table, p.collection_id === null ? [] : [p.collection_id]),
        row_count: counts.get(p.table) ?? 0,
      }),
    );
    const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    return list.sort(
      (a, b) =>
        (a.collection_id === null ? 1 : 0) - (b.collection_id === null ? 1 : 0) ||
        cmp(a.collection_id ?? '', b.collection_id ?? '') ||
        cmp(a.table_name, b.table_name),
    );
  });
  if (collectionId === undefined || collectionId === '') return { tables: all };
  const tables = all.filter((t) => t.collection_id === collectionId);
  if (tables.length > 0) return { tables };
  if (!(await collectionIds(ctx)).has(collectionId)) {
    return { tables, warnings: [unknownCollectionWarning(collectionId, await closeCollectionIds(ctx, collectionId))] };
  }
  return { tables, warnings: [`Collection '${collectionId}' has no clinical tables in this build.`] };
}

/** The short name of a clinical table present in the build, or a 404 that says what to use. */
function resolveTable(ctx: AppContext, name: string): string {
  requireClinical(ctx);
  const short = name.startsWith(`${CLINICAL_SCHEMA}.`) ? name.slice(CLINICAL_SCHEMA.length + 1) : name;
  if (ctx.catalog.clinicalTables.includes(short)) return short;
  const parts: Part[] = [`Unknown clinical table '${name}': not found.`];
  if (ctx.catalog.tables.includes(name)) {
    parts.push(...msg` '${name}' is a main table, not a clinical one: read its schema with ${see('get_table_schema', { table: name })}.`);
  } else {
    parts.push(didYouMean(suggest(short, ctx.catalog.clinicalTables)));
  }
  parts.push(...msg` ${see('list_clinical_tables')} lists the clinical tables (optionally of one ${field('collection_id')}).`);
  throw notFound(parts);
}

/** Columns of a clinical table with their labels and coded values from clinical_index. */
export async function clinicalTableSchema(ctx: AppContext, name: string): Promise<ClinicalTableSchema> {
  const table = resolveTable(ctx, name);
  return memo(ctx, `clinical-schema:${table}`, async () => {
    const entries = (await dictionary(ctx)).filter((e) => e.table === table);
    const byColumn = new Map<string, DictionaryEntry>();
    const byLower = new Map<string, DictionaryEntry>();
    for (const e of entries) {
      // The first entry wins (ordered by collection); a later one fills a missing label.
      const prev = byColumn.get(e.column);
      if (!prev || (prev.label === null && e.label !== null)) byColumn.set(e.column, e);
      if (!byLower.has(e.column.toLowerCase())) byLower.set(e.column.toLowerCase(), e);
    }
    const collections = [...new Set(entries.map((e) => e.collection_id).filter((c): c is string => c !== null))];
    const columns = liveColumns(ctx, table).map((c): ClinicalColumn => {
      const e = byColumn.get(c.name) ?? byLower.get(c.name.toLowerCase());
      // description is the public service's member (the label); label and values are ours.
      return { name: c.name, type: c.type, description: e?.label ?? '', label: e?.label ?? '', values: e?.values ?? [] };
    });
    return {
      name: `${CLINICAL_SCHEMA}.${table}`,
      description:
        describeTable(ctx, table, collections) +
        ' Clinical data is not harmonized across collections; labels and coded values come from clinical_index.',
      columns,
    };
  });
}

/**
 * At most `maxRows` rows of a clinical table in a deterministic order
 * (dicom_patient_id, then every column). The cap is applied by the query:
 * one more row than asked is read to set `truncated`.
 */
export async function clinicalRows(ctx: AppContext, name: string, maxRows: number): Promise<ClinicalRows> {
  const table = resolveTable(ctx, name);
  const cap = ctx.config.clinicalMaxRowsCap;
  if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > cap) {
    throw invalidRequest(msg`${field('max_rows')} must be an integer from 1 to ${cap}; got ${JSON.stringify(maxRows)}.`);
  }
  const live = liveColumns(ctx, table);
  const names = live.map((c) => c.name);
  const order = [...names.filter((n) => n === JOIN_COLUMN), ...names.filter((n) => n !== JOIN_COLUMN)].map(qi);
  const result = await ctx.engine.query(
    `SELECT * FROM ${qi(CLINICAL_SCHEMA)}.${qi(table)}${order.length > 0 ? ` ORDER BY ${order.join(', ')}` : ''} LIMIT ?`,
    [maxRows + 1],
  );
  const truncated = result.rows.length > maxRows;
  const rows = truncated ? result.rows.slice(0, maxRows) : result.rows;
  const typeOf = new Map(live.map((c) => [c.name, c.type]));
  const types = result.columns.map((c) => typeOf.get(c) ?? '');
  return { columns: result.columns, types, rows, row_count: rows.length, truncated, max_rows: maxRows };
}
