// Collections (original datasets) and analysis results (derived datasets):
// the curated metadata of collections_index / analysis_results_index, and a
// per-collection detail with counts, modalities and a license breakdown
// computed from the series-level table `index`.

import { memo, type AppContext } from '../context.ts';
import { didYouMean, msg, notFound, see } from '../errors.ts';
import type { JsonValue } from '../engine/json.ts';
import { qi } from '../registry/tables.ts';
import { suggest, suggestionText } from '../suggest.ts';
import { COUNTS_SELECT, countsFromRow, type Counts } from './version.ts';
import { commercialUseAllowed } from '../rules/commercial-use.ts';
import { licenseBreakdown, type LicenseItem } from './licenses.ts';
import { presentColumns } from './present-columns.ts';
import { toNumber } from './numbers.ts';

export interface CollectionSource {
  source_DOI: string | null;
  source_url: string | null;
  license_short_name: string | null;
  license_url: string | null;
  commercial_use_allowed: boolean | null;
}

export interface CollectionSummary {
  collection_id: string;
  collection_name: string | null;
  cancer_types: string | null;
  tumor_locations: string | null;
  species: string | null;
  subjects: number | null;
  supporting_data: string | null;
  description: string | null;
  program_id: string | null;
  status: string | null;
  updated: string | null;
  sources: CollectionSource[];
}

export interface CollectionDetail extends CollectionSummary, Counts {
  modalities: string[];
  licenses: LicenseItem[];
}

export interface AnalysisResult {
  analysis_result_id: string;
  analysis_result_title: string | null;
  source_DOI: string | null;
  source_url: string | null;
  subjects: number | null;
  collections: string | null;
  modalities: string | null;
  license_short_name: string | null;
  description: string | null;
}

const SUMMARY_COLUMNS = [
  'collection_id',
  'collection_name',
  'cancer_types',
  'tumor_locations',
  'species',
  'subjects',
  'supporting_data',
  'description',
  'program_id',
  'status',
  'updated',
  'sources',
] as const;

const ANALYSIS_COLUMNS = [
  'analysis_result_id',
  'analysis_result_title',
  'source_DOI',
  'source_url',
  'subjects',
  'collections',
  'modalities',
  'license_short_name',
  'description',
] as const;

const str = (v: JsonValue | undefined): string | null => (v === null || v === undefined ? null : String(v));
const int = (v: JsonValue | undefined): number | null => (v === null || v === undefined || v === '' ? null : toNumber(v));

function sourcesOf(v: JsonValue | undefined): CollectionSource[] {
  if (!Array.isArray(v)) return [];
  const out: CollectionSource[] = [];
  for (const s of v) {
    if (s === null || typeof s !== 'object' || Array.isArray(s)) continue;
    const lic = s.license !== null && typeof s.license === 'object' && !Array.isArray(s.license) ? s.license : {};
    const short = str(lic.license_short_name);
    out.push({
      source_DOI: str(s.source_doi),
      source_url: str(s.source_url),
      license_short_name: short,
      license_url: str(lic.license_url),
      commercial_use_allowed: commercialUseAllowed(short),
    });
  }
  return out;
}

function summaryFromRow(r: Record<string, JsonValue>): CollectionSummary {
  return {
    collection_id: String(r.collection_id),
    collection_name: str(r.collection_name),
    cancer_types: str(r.cancer_types),
    tumor_locations: str(r.tumor_locations),
    species: str(r.species),
    subjects: int(r.subjects),
    supporting_data: str(r.supporting_data),
    description: str(r.description),
    program_id: str(r.program_id),
    status: str(r.status),
    updated: str(r.updated),
    sources: sourcesOf(r.sources),
  };
}

function emptySummary(id: string): CollectionSummary {
  return {
    collection_id: id,
    collection_name: null,
    cancer_types: null,
    tumor_locations: null,
    species: null,
    subjects: null,
    supporting_data: null,
    description: null,
    program_id: null,
    status: null,
    updated: null,
    sources: [],
  };
}

function selectList(present: Set<string>, wanted: readonly string[]): string {
  return wanted.map((c) => (present.has(c) ? qi(c) : `NULL AS ${qi(c)}`)).join(', ');
}

/** Every collection of collections_index, ordered by collection_id. */
export function listCollections(ctx: AppContext): Promise<CollectionSummary[]> {
  return memo(ctx, 'collections', async () => {
    if (!ctx.catalog.tables.includes('collections_index')) return [];
    const present = presentColumns(ctx, 'collections_index', SUMMARY_COLUMNS);
    if (!present.has('collection_id')) return [];
    const rows = await ctx.engine.rows(
      `SELECT ${selectList(present, SUMMARY_COLUMNS)} FROM "collections_index" WHERE collection_id IS NOT NULL ORDER BY collection_id`,
    );
    return rows.map(summaryFromRow);
  });
}

/** Every collection id known to the release: curated metadata plus any seen in index. */
export function collectionIds(ctx: AppContext): Promise<Set<string>> {
  return memo(ctx, 'collection-ids', async () => {
    const ids = new Set((await listCollections(ctx)).map((c) => c.collection_id));
    for (const r of await ctx.engine.rows(`SELECT DISTINCT collection_id FROM "index" WHERE collection_id IS NOT NULL`)) {
      ids.add(String(r.collection_id));
    }
    return ids;
  });
}

/** Up to three known collection ids closest to `id` (same id in another case first). */
export async function closeCollectionIds(ctx: AppContext, id: string): Promise<string[]> {
  return suggest(id, await collectionIds(ctx));
}

/** The warning of a filter on an unknown collection id (body text: the same on every surface). */
export function unknownCollectionWarning(id: string, close: string[]): string {
  return `No collection has collection_id '${id}' (ids are case-sensitive).${suggestionText(close)}`;
}

/** One collection with its counts, modalities and license breakdown; 404 for an unknown id. */
export async function getCollection(ctx: AppContext, id: string): Promise<CollectionDetail> {
  const ids = await collectionIds(ctx);
  if (!ids.has(id)) {
    const close = await closeCollectionIds(ctx, id);
    throw notFound(msg`Collection not found: no collection has collection_id '${id}' (ids are case-sensitive).${didYouMean(close)} ${see('list_collections')} lists every collection_id.`);
  }
  return memo(ctx, `collection:${id}`, async () => {
    const summary = (await listCollections(ctx)).find((c) => c.collection_id === id) ?? emptySummary(id);
    const counts = countsFromRow(await ctx.engine.one(`SELECT ${COUNTS_SELECT} FROM "index" WHERE collection_id = ?`, [id]));
    const modalities = (
      await ctx.engine.rows(`SELECT DISTINCT Modality AS m FROM "index" WHERE collection_id = ? AND Modality IS NOT NULL ORDER BY m`, [id])
    ).map((r) => String(r.m));
    const licenses = await licenseBreakdown(ctx, 'collection_id = ?', [id]);
    return { ...summary, ...counts, modalities, licenses };
  });
}

/** Every analysis result (derived dataset), ordered by analysis_result_id. */
export function listAnalysisResults(ctx: AppContext): Promise<AnalysisResult[]> {
  return memo(ctx, 'analysis-results', async () => {
    if (!ctx.catalog.tables.includes('analysis_results_index')) return [];
    const present = presentColumns(ctx, 'analysis_results_index', ANALYSIS_COLUMNS);
    if (!present.has('analysis_result_id')) return [];
    const rows = await ctx.engine.rows(
      `SELECT ${selectList(present, ANALYSIS_COLUMNS)} FROM "analysis_results_index" WHERE analysis_result_id IS NOT NULL ORDER BY analysis_result_id`,
    );
    return rows.map((r) => ({
      analysis_result_id: String(r.analysis_result_id),
      analysis_result_title: str(r.analysis_result_title),
      source_DOI: str(r.source_DOI),
      source_url: str(r.source_url),
      subjects: int(r.subjects),
      collections: str(r.collections),
      modalities: str(r.modalities),
      license_short_name: str(r.license_short_name),
      description: str(r.description),
    }));
  });
}
