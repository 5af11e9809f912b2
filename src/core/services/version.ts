// Version and headline totals of the served data release.

import { memo, type AppContext } from '../context.ts';
import { tbFromMb, round, toNumber } from './numbers.ts';

export interface VersionInfo {
  idc_version: string;
  idc_index_data_version: string;
  api_version: string;
  /** The deployment's build stamp; null when unset (always present, as the public service has it). */
  build: string | null;
  synthetic: boolean;
  /** Present when one process serves several releases: each, newest (the default) first. */
  releases?: { release: string; idc_version: string; default: boolean }[];
  /** The engines configured to answer, in the order the planner asks them. */
  engines: string[];
}

/** The configured engines in the planner's order: the cohort index, Trino (asked when it serves this release), DuckDB. */
export function enginesOf(ctx: AppContext): string[] {
  return [...(ctx.config.cohortIndex === 'on' ? ['cohort-index'] : []), ...(ctx.config.trinoUrl ? ['trino'] : []), 'duckdb'];
}

export function version(ctx: AppContext): VersionInfo {
  const v: VersionInfo = {
    idc_version: ctx.dataset.release,
    idc_index_data_version: ctx.dataset.index_version,
    api_version: ctx.apiVersion,
    build: ctx.config.build || null,
    synthetic: ctx.dataset.synthetic,
    engines: enginesOf(ctx),
  };
  if (ctx.served) v.releases = ctx.served.map((c, i) => ({ release: c.dataset.index_version, idc_version: c.dataset.release, default: i === 0 }));
  return v;
}

export interface Counts {
  patients: number;
  studies: number;
  series: number;
  instances: number;
  size_TB: number;
  size_MB: number;
}

/** SELECT list of the cohort counts over `index`; the WHERE clause is the caller's. */
export const COUNTS_SELECT = `count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies,
  count(DISTINCT SeriesInstanceUID) AS series, COALESCE(sum(instanceCount), 0) AS instances, COALESCE(sum(series_size_MB), 0) AS size_mb`;

export function countsFromRow(r: Record<string, unknown> | undefined): Counts {
  const mb = toNumber(r?.size_mb);
  return {
    patients: toNumber(r?.patients),
    studies: toNumber(r?.studies),
    series: toNumber(r?.series),
    instances: toNumber(r?.instances),
    size_TB: tbFromMb(mb),
    size_MB: round(mb, 3),
  };
}

export interface Stats extends Counts {
  idc_version: string;
  collections: number;
  analysis_results: number;
}

export function stats(ctx: AppContext): Promise<Stats> {
  return memo(ctx, 'stats', async () => {
    const c = countsFromRow(await ctx.engine.one(`SELECT ${COUNTS_SELECT} FROM "index"`));
    const count = async (t: string) =>
      ctx.catalog.tables.includes(t) ? toNumber((await ctx.engine.one(`SELECT count(*) AS n FROM "${t}"`))?.n) : 0;
    return {
      idc_version: ctx.dataset.release,
      collections: await count('collections_index'),
      analysis_results: await count('analysis_results_index'),
      ...c,
    };
  });
}
