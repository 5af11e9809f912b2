// Cohort counts and manifest pages for a /v3 filter. One query per need, run
// concurrently: the counts (same text a benchmark runs), the page of series,
// and the preview only when the page cannot supply it.

import type { AppContext } from '../context.ts';
import type { Row } from '../engine/engine.ts';
import { breathe } from '../turns.ts';
import { cohortSql, compileFilter, type CompiledFilter, type FilterObject } from '../filters/v3.ts';
import type { Counts } from './version.ts';
import { field, invalidRequest, msg } from '../errors.ts';
import { answer } from '../planner/plan.ts';
import { seriesRowsSql } from '../planner/sql-evaluator.ts';
import { downloadInfo, MANIFEST_ORDER, type CommandWriter, type DownloadInfo } from './manifest.ts';
import { asOfCohort, asOfCounts, type AsOfNames } from './as-of.ts';

export type FiltersApplied = CompiledFilter['filters_applied'];

export interface CohortCounts extends Counts {
  filters_applied: FiltersApplied;
  warnings: string[];
  /** The cohort's series as SQL over index, values written in. */
  sql: string;
}

/** The counts of a compiled filter, from whichever evaluator the planner finds able. */
export function cohortCountsOf(ctx: AppContext, compiled: CompiledFilter): Promise<Counts> {
  return answer('counts', ctx, compiled);
}

export async function cohortCounts(ctx: AppContext, filter: FilterObject): Promise<CohortCounts> {
  const compiled = await compileFilter(ctx, filter);
  const counts = await cohortCountsOf(ctx, compiled);
  await breathe(); // a long filter's SQL text is written in a turn of its own
  return { ...counts, filters_applied: compiled.filters_applied, warnings: compiled.warnings, sql: cohortSql(compiled) };
}

export interface ManifestRow {
  collection_id: string;
  PatientID: string;
  StudyInstanceUID: string;
  SeriesInstanceUID: string;
  Modality: string | null;
  SeriesDescription: string | null;
  instanceCount: number | null;
  series_size_MB: number | null;
  aws_bucket: string | null;
  crdc_series_uuid: string | null;
  series_cloud1_url: string | null;
  series_aws_url: string | null;
  license_short_name: string | null;
  analysis_result_id: string | null;
}

/** Columns of a manifest row, in response order; series_aws_url is an alias of series_cloud1_url. */
export const ROW_SELECT = `collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, SeriesDescription, instanceCount,
  series_size_MB, aws_bucket, crdc_series_uuid, series_cloud1_url, series_cloud1_url AS series_aws_url, license_short_name, analysis_result_id`;

const PREVIEW_SIZE = 5;

export interface ManifestRequest {
  filters?: FilterObject;
  page?: number;
  /** Series per page, already brought within 1..maxPageSize by the caller (default: the configured page size). */
  page_size?: number;
  include_rows?: boolean;
  /** A past release: the page of the series versions it served. */
  as_of?: string | number;
}

export interface ManifestPage {
  counts: Counts;
  page: number;
  page_size: number;
  returned: number;
  total_series: number;
  total_pages: number;
  has_more: boolean;
  series: ManifestRow[];
  download: DownloadInfo;
  filters_applied: FiltersApplied;
  warnings: string[];
  as_of?: string;
  computed_on?: string;
}

/** The page size of a request: the configured default, or a value the caller brought within 1..maxPageSize. */
function pageSizeOf(ctx: AppContext, requested: number | undefined): number {
  const { pageSize, maxPageSize } = ctx.config;
  if (requested === undefined) return pageSize;
  if (!Number.isInteger(requested) || requested < 1 || requested > maxPageSize) {
    throw invalidRequest(msg`${field('page_size')} must be an integer from 1 to ${maxPageSize}; got ${JSON.stringify(requested)}.`);
  }
  return requested;
}

/** The SQL of a manifest page besides the counts, as the SQL evaluator runs it (exported so benchmarks time the same SQL). */
export function manifestQueries(compiled: CompiledFilter, pageSize: number, offset: number) {
  return { rows: seriesRowsSql(compiled, offset, pageSize, ROW_SELECT), preview: seriesRowsSql(compiled, 0, PREVIEW_SIZE, 'series_cloud1_url') };
}

/**
 * A page of the cohort's series (0-based pages in manifest order) with its
 * counts and a download payload whose command lines `commands` writes.
 */
export async function cohortManifest(ctx: AppContext, req: ManifestRequest, commands: CommandWriter): Promise<ManifestPage> {
  const pageSize = pageSizeOf(ctx, req.page_size);
  if (req.as_of !== undefined) return asOfManifest(ctx, req, pageSize, commands);
  // A page is bounded by its size: an empty filter pages the whole release, as the public service
  // does, with the compiler's "entire dataset" warning (manifest.txt streams the whole release for it).
  const compiled = await compileFilter(ctx, req.filters);
  const warnings = [...compiled.warnings];
  const page = Math.max(0, Math.floor(req.page ?? 0));
  const includeRows = req.include_rows ?? true;
  const offset = page * pageSize;
  // No cohort has 2^53 series: such an offset is past the end without asking the engine.
  const fetchRows = includeRows && Number.isSafeInteger(offset);
  const previewFromPage = fetchRows && page === 0 && pageSize >= PREVIEW_SIZE;

  const [counts, rows, previewRows] = await Promise.all([
    answer('counts', ctx, compiled),
    fetchRows ? answer('seriesRows', ctx, compiled, offset, pageSize, ROW_SELECT) : Promise.resolve([] as Row[]),
    previewFromPage ? Promise.resolve(null) : answer('seriesRows', ctx, compiled, 0, PREVIEW_SIZE, 'series_cloud1_url'),
  ]);
  const series = rows as unknown as ManifestRow[];
  const preview = (previewRows ?? series.slice(0, PREVIEW_SIZE)).map((r) => String(r.series_cloud1_url));
  return { ...pageOf(ctx, { counts, page, pageSize, series, preview, commands, applied: compiled.filters_applied }), filters_applied: compiled.filters_applied, warnings };
}

/** What every manifest page has: its counts, where it stands, its rows and the download payload. */
function pageOf(
  ctx: AppContext,
  p: { counts: Counts; page: number; pageSize: number; series: ManifestRow[]; preview: string[]; commands: CommandWriter; applied: CompiledFilter['filters_applied']; as_of?: string },
) {
  const total = p.counts.series;
  const offset = p.page * p.pageSize;
  return {
    counts: p.counts,
    page: p.page,
    page_size: p.pageSize,
    returned: p.series.length,
    total_series: total,
    total_pages: Math.ceil(total / p.pageSize),
    has_more: offset + p.pageSize < total,
    series: p.series,
    download: downloadInfo(ctx, {
      applied: p.applied,
      total_series: total,
      size_TB: p.counts.size_TB,
      size_MB: p.counts.size_MB,
      preview: p.preview,
      commands: p.commands,
      ...(p.as_of === undefined ? {} : { as_of: p.as_of }),
    }),
  };
}

/** A manifest page of the series versions a past release served (by SQL: the cohort index holds the served release only). */
async function asOfManifest(ctx: AppContext, req: ManifestRequest, pageSize: number, commands: CommandWriter): Promise<ManifestPage & AsOfNames> {
  const c = await asOfCohort(ctx, req.filters, req.as_of!);
  const counts = await asOfCounts(ctx, req.filters ?? {}, req.as_of!);
  const page = Math.max(0, Math.floor(req.page ?? 0));
  const offset = page * pageSize;
  const fetchRows = (req.include_rows ?? true) && Number.isSafeInteger(offset);
  const from = `FROM ${c.from} ORDER BY ${MANIFEST_ORDER}`;
  const [rows, previewRows] = await Promise.all([
    fetchRows ? ctx.engine.rows(`SELECT ${ROW_SELECT} ${from} LIMIT ? OFFSET ?`, [...c.params, pageSize, offset]) : Promise.resolve([] as Row[]),
    ctx.engine.rows(`SELECT series_cloud1_url ${from} LIMIT ?`, [...c.params, PREVIEW_SIZE]),
  ]);
  const series = rows as unknown as ManifestRow[];
  const { as_of, computed_on, filters_applied, warnings, ...totals } = counts;
  if (series.some((r) => r.license_short_name === null)) {
    warnings.push('Series the served release no longer has show no SeriesDescription, license_short_name or analysis_result_id: prior_versions_index does not record them.');
  }
  const preview = previewRows.map((r) => String(r.series_cloud1_url));
  return { ...pageOf(ctx, { counts: totals, page, pageSize, series, preview, commands, applied: filters_applied, as_of }), filters_applied, warnings, as_of, computed_on };
}
