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

/** `instances` counts the series whose version is still current (earlier versions record no instance count; see warnings). */
export interface AsOfCounts extends Counts {
  as_of: string;
  computed_on: string;
  filters_applied: { terms: Record<string, string[]>; ranges: Record<string, never> };
  warnings: string[];
}

export async function asOfCounts(ctx: AppContext, filters: FilterObject, asOf: string | number): Promise<AsOfCounts> {
  if (!ctx.catalog.tables.includes('prior_versions_index')) throw invalidQuery('The served release has no prior_versions_index table, so earlier releases cannot be asked (as_of).');
  const release = await parseReleaseArg(ctx, asOf, 'as_of');
  const current = await parseReleaseArg(ctx, ctx.dataset.release, 'as_of');
  const w = versionFilter(filters, 'filters');
  const r = await ctx.engine.one(
    `SELECT count(DISTINCT v.PatientID) AS patients, count(DISTINCT v.StudyInstanceUID) AS studies, count(*) AS series,
       coalesce(sum(v.series_size_MB), 0) AS size_mb, coalesce(sum(i.instanceCount), 0) AS instances, count(*) FILTER (WHERE i.crdc_series_uuid IS NULL) AS unknown_instances
     FROM ${servedSql(current, release, w.sql)} v LEFT JOIN "index" i ON i.crdc_series_uuid = v.crdc_series_uuid`,
    w.params,
  );
  const terms: Record<string, string[]> = {};
  // versionFilter refused null values above.
  for (const [k, v] of Object.entries(filters.terms ?? {})) if (v.length > 0) terms[k] = [...new Set(v as string[])];
  const warnings: string[] = [];
  const unknown = toNumber(r?.unknown_instances);
  if (unknown > 0) warnings.push(`instances counts the ${toNumber(r?.series) - unknown} series whose v${release} version is still current; the other ${unknown} were earlier versions, whose instance counts are not recorded.`);
  if (Object.keys(terms).length === 0) warnings.push(`No filter: these are the totals of the whole v${release} release.`);
  return {
    as_of: `v${release}`,
    computed_on: ctx.dataset.release,
    ...countsFromRow(r),
    filters_applied: { terms, ranges: {} },
    warnings,
  };
}
