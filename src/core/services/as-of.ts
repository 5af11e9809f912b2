// A cohort as a past release served it: the series versions that release
// served (from the served release's index and prior_versions_index), for a
// filter on the attributes both tables carry. The answer names the release it
// was computed on and the release it describes.

import type { AppContext } from '../context.ts';
import { invalidQuery } from '../errors.ts';
import type { FilterObject } from '../filters/v3.ts';
import { toNumber } from './numbers.ts';
import { parseReleaseArg, servedSql, versionFilter } from './release-versions.ts';
import { countsFromRow, type Counts } from './version.ts';

/** The release an answer describes and the release whose data computed it. */
export interface AsOfNames {
  as_of: string;
  computed_on: string;
}

/** `instances` counts the series whose version is still current (earlier versions record no instance count; see warnings). */
export interface AsOfCounts extends Counts, AsOfNames {
  filters_applied: { terms: Record<string, string[]>; ranges: Record<string, never> };
  warnings: string[];
}

/**
 * The cohort a past release served, as a relation with the columns of index
 * the cohort routes read. The version's own columns come from
 * prior_versions_index (or index, when the version is still current); the
 * series-level ones (SeriesDescription, license_short_name, source_DOI,
 * analysis_result_id) from the series' row in the served index, and are
 * NULL for a series the served release no longer has. instanceCount is
 * recorded for current versions only.
 */
export interface AsOfCohort extends AsOfNames {
  release: number;
  /** A parenthesised SELECT, usable after FROM; its parameters are `params`. */
  from: string;
  params: string[];
  /** No term restricts the cohort: it is the whole release. */
  empty: boolean;
  filters_applied: { terms: Record<string, string[]>; ranges: Record<string, never> };
  warnings: string[];
}

export async function asOfCohort(ctx: AppContext, filters: FilterObject | undefined, asOf: string | number): Promise<AsOfCohort> {
  if (!ctx.catalog.tables.includes('prior_versions_index')) throw invalidQuery('The served release has no prior_versions_index table, so earlier releases cannot be asked (as_of).');
  const release = await parseReleaseArg(ctx, asOf, 'as_of');
  const current = await parseReleaseArg(ctx, ctx.dataset.release, 'as_of');
  const w = versionFilter(filters, 'filters');
  const terms: Record<string, string[]> = {};
  // versionFilter refused null values above.
  for (const [k, v] of Object.entries(filters?.terms ?? {})) if (v.length > 0) terms[k] = [...new Set(v as string[])];
  const from = `(SELECT v.collection_id, v.PatientID, v.StudyInstanceUID, v.SeriesInstanceUID, v.Modality, s.SeriesDescription,
      CASE WHEN s.crdc_series_uuid = v.crdc_series_uuid THEN s.instanceCount END AS instanceCount,
      v.series_size_MB, v.aws_bucket, v.crdc_series_uuid, v.url AS series_cloud1_url, s.license_short_name, s.source_DOI, s.analysis_result_id,
      s.SeriesInstanceUID IS NOT NULL AS in_served, s.crdc_series_uuid IS NOT DISTINCT FROM v.crdc_series_uuid AS is_current
    FROM ${servedSql(current, release, w.sql)} v LEFT JOIN "index" s ON s.SeriesInstanceUID = v.SeriesInstanceUID)`;
  return {
    as_of: `v${release}`,
    computed_on: ctx.dataset.release,
    release,
    from,
    params: w.params,
    empty: Object.keys(terms).length === 0,
    filters_applied: { terms, ranges: {} },
    warnings: release < current ? [gapWarning(`v${release}`, ctx.dataset.release)] : [],
  };
}

/**
 * The tables give each version its first and last release, not the releases
 * between that lacked it: a collection withdrawn and later restored with the
 * same series (and folders) reads as served throughout. Nothing in the served
 * release tells such series apart, so every answer about an earlier release says so.
 */
export function gapWarning(asOf: string, computedOn: string): string {
  return (
    `${asOf} is reconstructed from ${computedOn}'s records (series_init_idc_version, series_revised_idc_version and prior_versions_index), which give each version its first and last release but no gaps: ` +
    `a series withdrawn from some releases and later restored unchanged is counted in the releases that lacked it.`
  );
}

export async function asOfCounts(ctx: AppContext, filters: FilterObject, asOf: string | number): Promise<AsOfCounts> {
  const c = await asOfCohort(ctx, filters, asOf);
  const r = await ctx.engine.one(
    `SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series,
       coalesce(sum(series_size_MB), 0) AS size_mb, coalesce(sum(instanceCount), 0) AS instances, count(*) FILTER (WHERE NOT is_current) AS unknown_instances
     FROM ${c.from}`,
    c.params,
  );
  const warnings: string[] = [...c.warnings];
  const unknown = toNumber(r?.unknown_instances);
  if (unknown > 0) warnings.push(`instances counts the ${toNumber(r?.series) - unknown} series whose ${c.as_of} version is still current; the other ${unknown} were earlier versions, whose instance counts are not recorded.`);
  if (c.empty) warnings.push(`No filter: these are the totals of the whole ${c.as_of} release.`);
  return { as_of: c.as_of, computed_on: c.computed_on, ...countsFromRow(r), filters_applied: c.filters_applied, warnings };
}
