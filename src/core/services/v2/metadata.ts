// Discovery of the /v2 interface: data versions, collections and analysis
// results in its record shapes, filter attributes and their values, and the
// manifest fields. Built on the same tables and services as /v3.

import { memo, type AppContext } from '../../context.ts';
import { invalidQuery } from '../../errors.ts';
import type { JsonValue } from '../../engine/json.ts';
import { qi } from '../../registry/tables.ts';
import {
  V2_FIELDS,
  V2_SOURCES,
  filterNames,
  isCategorical,
  lookupFilter,
  sourceName,
  type V2DataType,
} from '../../registry/v2-api.ts';
import { listAnalysisResults, listCollections } from '../collections.ts';
import { presentColumns } from '../present-columns.ts';
import { toNumber } from '../numbers.ts';
import { fieldWhyNot, filterWhyNot, notAnswerable, requireV2Rows, v2Rows } from './source.ts';

export interface V2Version {
  idc_data_version: string;
  date_active: string | null;
  active: boolean;
}

/** Every data release, oldest first; the current one (the served data) is the only active one. */
export function versions(ctx: AppContext): Promise<V2Version[]> {
  return memo(ctx, 'v2:versions', async () => {
    const current = Number(/\d+/.exec(ctx.dataset.release)?.[0] ?? NaN);
    const rows = ctx.catalog.tables.includes('version_metadata_index')
      ? await ctx.engine.rows(`SELECT idc_version AS v, left(CAST(version_timestamp AS VARCHAR), 10) AS d FROM version_metadata_index ORDER BY idc_version`)
      : [];
    const list = rows.map((r) => ({ v: toNumber(r.v), d: r.d === null ? null : String(r.d) }));
    const top = Number.isFinite(current) ? current : Math.max(0, ...list.map((x) => x.v));
    if (!list.some((x) => x.v === top) && top > 0) list.push({ v: top, d: null });
    return list.filter((x) => x.v <= top).map((x) => ({ idc_data_version: `${x.v}.0`, date_active: x.d, active: x.v === top }));
  });
}

/** The current data version in the major.minor form /v2 uses ("24.0"). */
export async function currentVersion(ctx: AppContext): Promise<string> {
  const list = await versions(ctx);
  return list.find((v) => v.active)?.idc_data_version ?? ctx.dataset.release.replace(/^v/, '');
}

export interface V2Collection {
  cancer_type: string | null;
  collection_id: string;
  date_updated: string | null;
  description: string | null;
  doi: string | null;
  image_types: string | null;
  location: string | null;
  species: string | null;
  subject_count: number | null;
  supporting_data: string | null;
  /** Every source DOI, space-separated (the public service's later shape). */
  source_doi: string | null;
  source_url: string | null;
}

/** Modalities of each collection's series, comma-separated and sorted. */
async function collectionModalities(ctx: AppContext): Promise<Map<string, string>> {
  const rows = await ctx.engine.rows(
    `SELECT collection_id AS k, string_agg(DISTINCT Modality, ', ' ORDER BY Modality) AS m FROM "index" WHERE collection_id IS NOT NULL AND Modality IS NOT NULL GROUP BY 1`,
  );
  return new Map(rows.map((r) => [String(r.k), String(r.m)]));
}

/** Original collections, by collection_id. */
export function v2Collections(ctx: AppContext): Promise<V2Collection[]> {
  return memo(ctx, 'v2:collections', async () => {
    const [list, mods] = await Promise.all([listCollections(ctx), collectionModalities(ctx)]);
    return list.map((c) => {
      const dois = c.sources.map((s) => s.source_DOI).filter((d): d is string => !!d);
      return {
        cancer_type: c.cancer_types,
        collection_id: c.collection_id,
        date_updated: c.updated,
        description: c.description,
        doi: dois[0] ?? null,
        image_types: mods.get(c.collection_id) ?? null,
        location: c.tumor_locations,
        species: c.species,
        subject_count: c.subjects,
        supporting_data: c.supporting_data,
        source_doi: dois.length ? dois.join(' ') : null,
        source_url: c.sources.find((s) => s.source_url)?.source_url ?? null,
      };
    });
  });
}

export interface V2AnalysisResult {
  analysisArtifacts: string | null;
  analysis_result_id: string;
  cancer_type: string | null;
  collections: string | null;
  date_updated: string | null;
  description: string | null;
  doi: string | null;
  location: string | null;
  subjects: number | null;
  title: string | null;
  source_url: string | null;
  license_short_name: string | null;
}

/** Analysis results, with the cancer types and locations of the collections they analyse. */
export function v2AnalysisResults(ctx: AppContext): Promise<V2AnalysisResult[]> {
  return memo(ctx, 'v2:analysis-results', async () => {
    const [list, collections] = await Promise.all([listAnalysisResults(ctx), listCollections(ctx)]);
    const byId = new Map(collections.map((c) => [c.collection_id, c]));
    const updated = new Map<string, string>();
    if (presentColumns(ctx, 'analysis_results_index', ['updated']).size > 0) {
      for (const r of await ctx.engine.rows(`SELECT analysis_result_id AS k, CAST(updated AS VARCHAR) AS u FROM analysis_results_index WHERE updated IS NOT NULL`)) {
        updated.set(String(r.k), String(r.u));
      }
    }
    const join = (values: (string | null | undefined)[]) => {
      const parts = [...new Set(values.flatMap((v) => (v ? v.split(/,\s*/) : [])).filter(Boolean))];
      return parts.length ? parts.join(', ') : null;
    };
    return list.map((a) => {
      const colls = (a.collections ?? '').split(/,\s*/).filter(Boolean).map((id) => byId.get(id));
      return {
        analysisArtifacts: a.modalities,
        analysis_result_id: a.analysis_result_id,
        cancer_type: join(colls.map((c) => c?.cancer_types)),
        collections: a.collections,
        date_updated: updated.get(a.analysis_result_id) ?? null,
        description: a.description,
        doi: a.source_DOI,
        location: join(colls.map((c) => c?.tumor_locations)),
        subjects: a.subjects,
        title: a.analysis_result_title,
        source_url: a.source_url,
        license_short_name: a.license_short_name,
      };
    });
  });
}

export interface V2FilterInfo {
  name: string;
  data_type: V2DataType;
  units: string | null;
}

/** Filter names per data source (ranged attributes with their nine suffixes): those this database can answer. */
export function v2Filters(ctx: AppContext): { data_source: string; filters: V2FilterInfo[] }[] {
  const rows = v2Rows(ctx);
  if (!rows) return [];
  const all = filterNames().filter((f) => !filterWhyNot(rows, f.attribute));
  return V2_SOURCES.map((s) => ({
    data_source: sourceName(s),
    filters: all
      .filter((f) => f.attribute.source === s)
      .map((f) => ({ name: f.name, data_type: f.attribute.type, units: f.attribute.units })),
  })).filter((s) => s.filters.length > 0);
}

export const MAX_FILTER_VALUES = 5000;

/** Accepted values of a categorical filter (name in any casing): distinct values, null first, at most 5000. */
export async function v2FilterValues(ctx: AppContext, name: string): Promise<{ values: JsonValue[]; truncated: boolean }> {
  const f = lookupFilter(name);
  if (!f) throw invalidQuery('Invalid filter ID');
  if (!isCategorical(f.attribute)) {
    throw invalidQuery(`Filter data type is ${f.attribute.type} not Categorical String or Categorical Numeric`);
  }
  const src = requireV2Rows(ctx);
  const why = filterWhyNot(src, f.attribute);
  if (why) throw notAnswerable('filter', f.name, why);
  return memo(ctx, `v2:values:${f.name}`, async () => {
    const a = f.attribute;
    // dicom_pivot's categorical attributes are per series: the series relation has every value.
    const table = a.source === 'dicom_pivot' ? src.series : `v2.${a.source}`;
    const col = a.type === 'Categorical String' ? `CAST(${qi(a.name)} AS VARCHAR)` : qi(a.name);
    const rows = await ctx.engine.rows(`SELECT DISTINCT ${col} AS v FROM ${table} ORDER BY v ASC NULLS FIRST LIMIT ${MAX_FILTER_VALUES + 1}`);
    const values = rows.map((r) => r.v ?? null);
    return { values: values.slice(0, MAX_FILTER_VALUES), truncated: values.length > MAX_FILTER_VALUES };
  });
}

/** The fields a manifest may list on this database, per data source, sorted case-insensitively. */
export function v2FieldsList(ctx: AppContext): { data_source: string; fields: string[] }[] {
  const rows = v2Rows(ctx);
  if (!rows) return [];
  return V2_SOURCES.map((s) => ({
    data_source: sourceName(s),
    fields: V2_FIELDS.filter((f) => f.source === s && !fieldWhyNot(rows, f))
      .map((f) => f.name)
      .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())),
  })).filter((s) => s.fields.length > 0);
}

/** Check a /v2/fields/{version} path value: `current` or an existing "N.0". */
export async function checkFieldsVersion(ctx: AppContext, v: string): Promise<string> {
  const current = await currentVersion(ctx);
  if (v.toLowerCase() === 'current') return current;
  if ((await versions(ctx)).some((x) => x.idc_data_version === v)) return v;
  throw invalidQuery(`Supplied idc_data_version '${v}' is invalid. Query the /versions endpoint for defined versions.`);
}
