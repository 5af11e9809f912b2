// The SQL of a /v2 manifest: one row per distinct combination of the
// requested fields over the instances the filter set selects, ordered by the
// fields (ascending, nulls first, in request order), with the count members
// of the granularity and group_size. Every field value of dicom_pivot except
// the instance ones is constant within a series, so unless instance fields or
// instance filters are involved the plan works on the series table and the
// per-series totals built with the database (hundreds of thousands of rows
// instead of tens of millions). Values are bound; identifiers come from the
// registry.

import { invalidQuery } from '../../errors.ts';
import type { Param } from '../../engine/engine.ts';
import type { JsonValue } from '../../engine/json.ts';
import { compileV2Filter, type Sql } from '../../filters/v2.ts';
import { qi } from '../../registry/tables.ts';
import { granularityOf, lookupField, lookupFilter, type Granularity, type V2Field } from '../../registry/v2-api.ts';
import { fieldWhyNot, filterWhyNot, notAnswerable, type V2Rows } from './source.ts';
import type { ManifestQuery } from './token.ts';

export interface ManifestPlan {
  granularity: Granularity;
  /** Output columns: the fields (as requested), then count members, then group_size. */
  columns: string[];
  /** Sort key columns (the fields); empty when the manifest is one row of totals. */
  keys: string[];
  /** The manifest query, ordered. */
  sql: string;
  params: Param[];
  /** The same query without ORDER BY, for paging. */
  unordered: string;
  /** One row, `n`: rows of the whole manifest. */
  countSql: string;
  countParams: Param[];
  /** What countSql counts where the cohort index may count it too (index-count.ts); null: SQL only. */
  countOf: IndexCountable | null;
}

/**
 * A manifest whose row count is a count of the index's rows (keyed by series)
 * or of its distinct patients or studies (the only field), over the filter set
 * as applied: possible only when /v2 reads the index itself.
 */
export interface IndexCountable {
  level: 'series' | 'studies' | 'patients';
  filters: Record<string, (string | number)[]>;
}

/** A store URL of one instance: s3:// on both stores (cloud2 through its S3-compatible endpoint); gcs_url keeps gs://. */
function urlExpr(bucketColumn: string, scheme: string): string {
  return `'${scheme}://' || s.${qi(bucketColumn)} || '/' || s.crdc_series_uuid || '/' || i.crdc_instance_uuid || '.dcm'`;
}

function fieldExpr(field: V2Field, key: string): string {
  switch (field.name) {
    case 'cloud1_url':
      return urlExpr('aws_bucket', 's3');
    case 'cloud2_url':
      return urlExpr('gcs_bucket', key === 'gcs_url' ? 'gs' : 's3');
    case 'cloud1_bucket':
      return 's.aws_bucket';
    case 'cloud2_bucket':
      return 's.gcs_bucket';
  }
  switch (field.level) {
    case 'instance':
      return `i.${qi(field.name)}`;
    case 'clinical':
      return `c.${qi(field.name)}`;
    case 'biospecimen':
      return `b.${qi(field.name)}`;
    default:
      return `s.${qi(field.name)}`;
  }
}

/** Fields unique per instance / per series: with one of them, rows need no grouping. */
const INSTANCE_KEYS = new Set(['SOPInstanceUID', 'crdc_instance_uuid', 'cloud1_url', 'cloud2_url']);
const SERIES_KEYS = new Set(['SeriesInstanceUID', 'crdc_series_uuid']);

const and = (parts: Sql[]): Sql => ({ text: parts.map((p) => p.text).join(' AND '), params: parts.flatMap((p) => p.params) });

/** Refuse, by name, a field or filter these rows cannot answer. */
function checkAnswerable(rows: V2Rows, fields: V2Field[], filterNames: string[]): void {
  for (const f of fields) {
    const why = fieldWhyNot(rows, f);
    if (why) throw notAnswerable('field', f.name, why);
  }
  for (const name of filterNames) {
    const why = filterWhyNot(rows, lookupFilter(name)!.attribute);
    if (why) throw notAnswerable('filter', name, why);
  }
}

/** Plan a manifest query over `rows`; a field or filter they cannot answer is a 400 naming it. */
export function planManifest(q: ManifestQuery, rows: V2Rows): ManifestPlan {
  const compiled = compileV2Filter(q.filters);
  const fields = q.fields.map((name) => {
    const hit = lookupField(name);
    if (!hit) throw invalidQuery(`${name} is not a valid field.`);
    return { ...hit, key: name };
  });
  checkAnswerable(rows, fields.map((f) => f.field), Object.keys(compiled.echo));
  const gran = granularityOf(fields.map((f) => f.field.name));
  const instanceMode = compiled.instance.length > 0 || fields.some((f) => f.field.level === 'instance');
  const clinicalFields = fields.filter((f) => f.field.level === 'clinical').map((f) => f.field.name);
  const bioFields = fields.filter((f) => f.field.level === 'biospecimen').map((f) => f.field.name);

  const from = [`${rows.series} s`];
  if (instanceMode) from.push('JOIN v2.dicom_instances i ON i."SeriesInstanceUID" = s."SeriesInstanceUID"');
  else if (q.counts || q.group_size) from.push(rows.totalsJoin);
  // TCGA fields: one row per distinct value combination of the case, so a series is counted once per group.
  const joinDistinct = (alias: string, table: string, cols: string[]) =>
    from.push(`LEFT JOIN (SELECT DISTINCT case_barcode, ${cols.map(qi).join(', ')} FROM v2.${table}) ${alias} ON ${alias}.case_barcode = s."PatientID"`);
  if (clinicalFields.length) joinDistinct('c', 'tcga_clinical_rel9', clinicalFields);
  if (bioFields.length) joinDistinct('b', 'tcga_biospecimen_rel9', bioFields);

  const where: Sql[] = [...compiled.series, ...compiled.instance];
  // TCGA filters select patients whose TCGA row (the same sample, for biospecimen) satisfies them all.
  if (compiled.clinical.length) {
    const c = and(compiled.clinical);
    where.push({ text: `s."PatientID" IN (SELECT t.case_barcode FROM v2.tcga_clinical_rel9 t WHERE ${c.text})`, params: c.params });
  }
  if (compiled.biospecimen.length) {
    const c = and(compiled.biospecimen);
    where.push({ text: `s."PatientID" IN (SELECT t.case_barcode FROM v2.tcga_biospecimen_rel9 t WHERE ${c.text})`, params: c.params });
  }

  // Keyed: the fields include a unique key of the rows the plan reads (an
  // instance or series identifier), so each row is already one manifest row:
  // no grouping, and the count members are per-row values.
  const keyed = fields.some((f) => (instanceMode ? INSTANCE_KEYS : SERIES_KEYS).has(f.field.name));
  const select: string[] = fields.map((f) => `${fieldExpr(f.field, f.key)} AS ${qi(f.key)}`);
  const countMembers = q.counts ? gran.counts : [];
  const agg: Record<string, string> = keyed
    ? { instance_count: instanceMode ? '1' : 'st.instance_count', series_count: '1', study_count: '1', patient_count: '1', collection_count: '1' }
    : {
        instance_count: instanceMode ? 'count(*)' : 'sum(st.instance_count)',
        // Joins add TCGA values as distinct combinations per case, so a series
        // (or instance) is at most one row of a group.
        series_count: instanceMode ? 'count(DISTINCT s."SeriesInstanceUID")' : 'count(*)',
        study_count: 'count(DISTINCT s."StudyInstanceUID")',
        patient_count: 'count(DISTINCT s."PatientID")',
        collection_count: 'count(DISTINCT s.collection_id)',
      };
  for (const m of countMembers) select.push(`coalesce(${agg[m]}, 0)::BIGINT AS ${m}`);
  const sizeExpr = instanceMode ? 'i.instance_size' : 'st.total_bytes';
  if (q.group_size) select.push(`coalesce(${keyed ? sizeExpr : `sum(${sizeExpr})`}, 0)::BIGINT AS group_size`);

  const whereSql = where.length ? and(where) : null;
  const fromWhere = `FROM ${from.join(' ')}${whereSql ? ` WHERE ${whereSql.text}` : ''}`;
  const aggregated = !keyed && (countMembers.length > 0 || q.group_size);
  const keys = fields.map((f) => f.key);
  let text = `SELECT ${select.join(', ')} ${fromWhere}`;
  if (keys.length && aggregated) text += ` GROUP BY ${fields.map((f) => fieldExpr(f.field, f.key)).join(', ')}`;
  // Without aggregates, distinct rows of the fields.
  if (keys.length && !aggregated && !keyed) text = text.replace(/^SELECT /, 'SELECT DISTINCT ');
  const params = whereSql?.params ?? [];
  // Rows of the whole manifest: counted without building them where possible.
  let countSql = `SELECT count(*) AS n FROM (${text}) q`;
  if (keys.length === 0) countSql = 'SELECT 1 AS n'; // one row of totals
  else if (keyed && !instanceMode) countSql = `SELECT count(*) AS n ${fromWhere}`;
  else if (keyed && compiled.instance.length === 0 && bioFields.length === 0 && clinicalFields.length === 0) {
    // Instances of the selected series, from the per-series totals.
    countSql = `SELECT coalesce(sum(st.instance_count), 0)::BIGINT AS n FROM ${rows.series} s ${rows.totalsJoin}${whereSql ? ` WHERE ${whereSql.text}` : ''}`;
  } else if (keyed) countSql = `SELECT count(*) AS n ${fromWhere}`;
  let countOf: IndexCountable | null = null;
  const distinctFields = new Set(fields.map((f) => f.field.name));
  if (rows.kind === 'index' && keys.length > 0 && !instanceMode && clinicalFields.length === 0 && bioFields.length === 0) {
    // Keyed: count(*) of the selected rows. Else one row per distinct value of the only field.
    const only = distinctFields.size === 1 ? [...distinctFields][0] : null;
    const level = keyed ? 'series' : only === 'PatientID' ? 'patients' : only === 'StudyInstanceUID' ? 'studies' : null;
    if (level) countOf = { level, filters: compiled.echo };
  }
  const order = keys.length ? ` ORDER BY ${keys.map((k) => `${qi(k)} ASC NULLS FIRST`).join(', ')}` : '';
  return {
    granularity: gran.level,
    columns: [...keys, ...countMembers, ...(q.group_size ? ['group_size'] : [])],
    keys,
    sql: text + order,
    params,
    unordered: text,
    countSql,
    countParams: keys.length === 0 ? [] : params,
    countOf,
  };
}

/** Rows strictly after `after` in the plan's order (ascending, nulls first). */
export function keysetCondition(keys: string[], after: JsonValue[]): Sql {
  const ors: string[] = [];
  const params: Param[] = [];
  for (let k = 0; k < keys.length; k++) {
    const parts: string[] = [];
    for (let j = 0; j < k; j++) {
      const v = after[j];
      if (v === null || v === undefined) parts.push(`q.${qi(keys[j]!)} IS NULL`);
      else {
        parts.push(`q.${qi(keys[j]!)} = ?`);
        params.push(v as Param);
      }
    }
    const v = after[k];
    if (v === null || v === undefined) parts.push(`q.${qi(keys[k]!)} IS NOT NULL`);
    else {
      parts.push(`q.${qi(keys[k]!)} > ?`);
      params.push(v as Param);
    }
    ors.push(`(${parts.join(' AND ')})`);
  }
  return { text: ors.join(' OR '), params };
}

/** The manifest SQL with its values written in (DuckDB dialect), for `sql: true`. */
export function inlineSql(sql: string, params: Param[]): string {
  let i = 0;
  return sql.replace(/\?/g, () => {
    const v = params[i++];
    if (v === null || v === undefined) return 'NULL';
    if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'NULL';
    if (typeof v === 'bigint') return String(v);
    if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
    return `'${String(v).replace(/'/g, "''")}'`;
  });
}

