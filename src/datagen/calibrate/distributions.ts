// The distributions the generator is calibrated on, computed the same way
// over any release folder (real or generated): totals, modality mix, sizes,
// licenses and buckets, NULL shares, dates, body parts, release history and
// per-collection counts. `idqs data compare` prints them side by side.

import type { DuckDBConnection } from '@duckdb/node-api';
import { INDEX_COLUMNS } from '../../core/registry/tables.ts';
import { query } from './release-views.ts';

export interface Distributions {
  totals: Record<string, number>;
  /** Per modality: share of series, share of bytes, median instances and MB per series. */
  modalities: Record<string, { series: number; bytes: number; med_instances: number; med_mb: number }>;
  /** Share of series per "license | bucket". */
  licenses: Record<string, number>;
  /** Share of NULL per index column. */
  nulls: Record<string, number>;
  /** StudyDate years at the 2nd, 25th, 50th, 75th and 98th percentiles. */
  study_years: number[];
  /** Share of series per BodyPartExamined (top 15; NULL as "(null)"). */
  body_parts: Record<string, number>;
  /** Share of series per series_init_idc_version. */
  init_versions: Record<string, number>;
  /** Per collection: patients, studies, series. */
  collections: Record<string, { patients: number; studies: number; series: number }>;
  study: { series_per_study: number; studies_per_patient: number; derived_share: number };
}

const shares = (rows: { k: string | null; n: number }[]): Record<string, number> => {
  const total = rows.reduce((s, r) => s + Number(r.n), 0) || 1;
  return Object.fromEntries(rows.map((r) => [r.k ?? '(null)', Number(r.n) / total]));
};

export async function distributions(conn: DuckDBConnection): Promise<Distributions> {
  const cols = new Set((await query<{ column_name: string }>(conn, `DESCRIBE r_index`)).map((r) => r.column_name));
  const hasAr = (await query(conn, `SELECT 1 FROM duckdb_views() WHERE view_name = 'r_ar'`)).length > 0;
  const t = (
    await query<Record<string, number>>(
      conn,
      `SELECT count(DISTINCT collection_id) AS collections, count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies,
         count(*) AS series, sum(instanceCount) AS instances, sum(series_size_MB) / 1e6 AS size_TB,
         count(DISTINCT analysis_result_id) AS analysis_results_in_index FROM r_index`,
    )
  )[0]!;
  const totals = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Number(v)]));
  if (hasAr) totals.analysis_results = Number((await query<{ n: number }>(conn, `SELECT count(*) AS n FROM r_ar`))[0]!.n);
  const mods = await query<{ m: string; n: number; b: number; mi: number; mb: number }>(
    conn,
    `SELECT Modality AS m, count(*) AS n, sum(series_size_MB) AS b, median(instanceCount) AS mi, median(series_size_MB) AS mb FROM r_index GROUP BY 1`,
  );
  const nS = mods.reduce((s, r) => s + Number(r.n), 0) || 1;
  const nB = mods.reduce((s, r) => s + Number(r.b), 0) || 1;
  const modalities = Object.fromEntries(
    mods.map((r) => [r.m, { series: Number(r.n) / nS, bytes: Number(r.b) / nB, med_instances: Number(r.mi), med_mb: Number(r.mb) }]),
  );
  const licenses = shares(await query(conn, `SELECT license_short_name || ' | ' || aws_bucket AS k, count(*) AS n FROM r_index GROUP BY 1`));
  const present = INDEX_COLUMNS.map((c) => c.name).filter((c) => cols.has(c));
  const nullRow = (await query<Record<string, number>>(conn, `SELECT ${present.map((c) => `avg(("${c}" IS NULL)::INTEGER) AS "${c}"`).join(', ')} FROM r_index`))[0]!;
  const nulls = Object.fromEntries(Object.entries(nullRow).map(([k, v]) => [k, Number(v)]));
  const years = (
    await query<{ q: number[] }>(conn, `SELECT quantile_disc(TRY_CAST(left(StudyDate::VARCHAR, 4) AS INTEGER), [0.02, 0.25, 0.5, 0.75, 0.98]) AS q FROM r_index`)
  )[0]!.q.map(Number);
  const bodyRows = await query<{ k: string | null; n: number }>(conn, `SELECT BodyPartExamined AS k, count(*) AS n FROM r_index GROUP BY 1 ORDER BY 2 DESC`);
  const body = shares(bodyRows);
  const body_parts = Object.fromEntries(Object.entries(body).slice(0, 15));
  const init_versions = cols.has('series_init_idc_version')
    ? shares(await query(conn, `SELECT series_init_idc_version::VARCHAR AS k, count(*) AS n FROM r_index GROUP BY 1 ORDER BY 1`))
    : {};
  const coll = await query<{ c: string; p: number; s: number; n: number }>(
    conn,
    `SELECT collection_id AS c, count(DISTINCT PatientID) AS p, count(DISTINCT StudyInstanceUID) AS s, count(*) AS n FROM r_index GROUP BY 1`,
  );
  const collections = Object.fromEntries(coll.map((r) => [r.c, { patients: Number(r.p), studies: Number(r.s), series: Number(r.n) }]));
  const st = (
    await query<{ sps: number; spp: number; d: number }>(
      conn,
      `SELECT (SELECT avg(n) FROM (SELECT count(*) AS n FROM r_index GROUP BY StudyInstanceUID)) AS sps,
         (SELECT avg(n) FROM (SELECT count(DISTINCT StudyInstanceUID) AS n FROM r_index GROUP BY collection_id, PatientID)) AS spp,
         (SELECT avg((analysis_result_id IS NOT NULL)::INTEGER) FROM r_index) AS d`,
    )
  )[0]!;
  return {
    totals,
    modalities,
    licenses,
    nulls,
    study_years: years,
    body_parts,
    init_versions,
    collections,
    study: { series_per_study: Number(st.sps), studies_per_patient: Number(st.spp), derived_share: Number(st.d) },
  };
}
