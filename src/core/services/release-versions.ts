// Every version of every series the served release knows, with the releases
// that served it: the current versions of index (from the release of their
// revision, series_revised_idc_version, to the served one) and the earlier
// ones of prior_versions_index (min_idc_version to max_idc_version). What a
// release served, and what changed between two, are questions over it, for
// the attributes both tables carry.

import { memo, type AppContext } from '../context.ts';
import { didYouMean, field, invalidQuery, msg } from '../errors.ts';
import type { FilterObject } from '../filters/v3.ts';

/** Attributes a filter over earlier releases may use: the columns prior_versions_index shares with index. */
export const VERSION_ATTRIBUTES = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality'] as const;

/** Release number of a release name (v25, 25, 25.0.5). */
export function releaseNumber(name: string): number | null {
  const m = /^v?(\d{1,3})(?:\.\d+){0,2}$/i.exec(name.trim());
  return m ? Number(m[1]) : null;
}

/** The releases the data can answer: from the earliest prior version recorded to the served release. */
export function answerableReleases(ctx: AppContext): Promise<{ first: number; last: number }> {
  return memo(ctx, 'answerable-releases', async () => {
    const last = releaseNumber(ctx.dataset.release) ?? 0;
    if (!ctx.catalog.tables.includes('prior_versions_index')) return { first: last, last };
    const r = await ctx.engine.one(`SELECT min(min_idc_version) AS first FROM prior_versions_index`);
    return { first: Math.min(last, Number(r?.first ?? last)), last };
  });
}

/** A release named in a request, as a number the data can answer; else a 400 listing those it can. */
export async function parseReleaseArg(ctx: AppContext, value: string | number, name: string): Promise<number> {
  const n = releaseNumber(String(value));
  const { first, last } = await answerableReleases(ctx);
  if (n === null) throw invalidQuery(msg`${field(name)} names a release as v<number> (e.g. "v${last - 1}"); got ${JSON.stringify(value)}.`);
  if (n < first || n > last) {
    throw invalidQuery(
      msg`${field(name)} is v${n}, which this data cannot answer: it holds the series of v${last} and their earlier versions back to v${first}, so releases v${first} to v${last} can be asked.`,
    );
  }
  return n;
}

/** WHERE clause of a filter over versions: terms on the shared attributes only; anything else is refused, saying which can be used. */
export function versionFilter(f: FilterObject | undefined, name: string): { sql: string; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  for (const [attr, values] of Object.entries(f?.terms ?? {})) {
    if (!(VERSION_ATTRIBUTES as readonly string[]).includes(attr)) {
      throw invalidQuery(
        msg`${field(name)} filters on ${attr}, which earlier releases do not record; filters over releases may use ${VERSION_ATTRIBUTES.join(', ')}.${didYouMean(VERSION_ATTRIBUTES.filter((a) => a.toLowerCase() === attr.toLowerCase()))}`,
      );
    }
    if (values.length === 0) continue;
    if (values.includes(null)) throw invalidQuery(msg`${field(name)} has null in terms.${attr}; filters over releases match values only, not their absence.`);
    clauses.push(`${attr} IN (${values.map(() => '?').join(', ')})`);
    params.push(...(values as string[]));
  }
  if (Object.keys(f?.all_terms ?? {}).length > 0) throw invalidQuery(msg`${field(name)} has all_terms; filters over releases take terms on ${VERSION_ATTRIBUTES.join(', ')} only.`);
  if (f?.any_of !== undefined && f.any_of !== null) {
    throw invalidQuery(msg`${field(name)} has any_of; filters over releases take terms on ${VERSION_ATTRIBUTES.join(', ')} only (several values of one attribute are a union already).`);
  }
  const ranges = Object.keys(f?.ranges ?? {});
  if (ranges.length > 0) {
    throw invalidQuery(msg`${field(name)} has ranges (${ranges.join(', ')}); earlier releases record no numeric or date attributes, so filters over releases take terms on ${VERSION_ATTRIBUTES.join(', ')} only.`);
  }
  return { sql: clauses.length > 0 ? clauses.join(' AND ') : 'TRUE', params };
}

/**
 * SQL of every series version, one row per (series, folder), with lo/hi the
 * first and last release that served it. `current` is the served release.
 * With `release`, only the records of prior versions that cover it: a
 * version may have several (one per bucket, or per range of releases whose
 * size differs, e.g. 48 tcga_brca series recorded at twice their size in v23
 * alone), and the answer takes what that release recorded.
 */
export function versionsSql(current: number, release?: number): string {
  return `(SELECT SeriesInstanceUID, collection_id, PatientID, StudyInstanceUID, Modality, crdc_series_uuid,
      coalesce(series_revised_idc_version, series_init_idc_version, ${current}) AS lo, ${current} AS hi, series_cloud1_url AS url, aws_bucket, series_size_MB
    FROM "index"
    UNION ALL
    SELECT SeriesInstanceUID, any_value(collection_id), any_value(PatientID), any_value(StudyInstanceUID), any_value(Modality), crdc_series_uuid,
      min(min_idc_version), max(max_idc_version), max(series_aws_url), max(aws_bucket), max(series_size_MB)
    FROM prior_versions_index ${release === undefined ? '' : `WHERE min_idc_version <= ${release} AND max_idc_version >= ${release}`}
    GROUP BY SeriesInstanceUID, crdc_series_uuid)`;
}

/** The versions a release served (one per series: the latest revision when records overlap), filtered. */
export function servedSql(current: number, release: number, where: string): string {
  return `(SELECT * FROM ${versionsSql(current, release)} WHERE lo <= ${release} AND hi >= ${release} AND ${where}
    QUALIFY row_number() OVER (PARTITION BY SeriesInstanceUID ORDER BY lo DESC, crdc_series_uuid) = 1)`;
}
