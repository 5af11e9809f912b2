// Patient-level latent clinical variables (g_clin), shared by every clinical
// table of a collection and by the /v2 TCGA tables, so one patient's values
// agree across tables and with the imaging (sex, age).

import { lit } from '../../core/data/sql.ts';
import type { GenContext } from '../context.ts';
import { kindOf } from './kinds.ts';


export const LUNG_SMOKERS = `CASE WHEN collection_id = 'nlst' THEN (CASE WHEN u(pkey, 'clin:smk') < 0.52 THEN 2 ELSE 3 END)
  WHEN kind IN ('lung', 'headneck') THEN (CASE WHEN u(pkey, 'clin:smk') < 0.12 THEN 1 WHEN u(pkey, 'clin:smk') < 0.62 THEN 2 WHEN u(pkey, 'clin:smk') < 0.95 THEN 3 ELSE 4 END)
  ELSE (CASE WHEN u(pkey, 'clin:smk') < 0.45 THEN 1 WHEN u(pkey, 'clin:smk') < 0.75 THEN 2 WHEN u(pkey, 'clin:smk') < 0.9 THEN 3 ELSE 4 END) END`;

export async function createLatent(ctx: GenContext): Promise<void> {
  const kinds = ctx.plan.collections.map((c) => [c.idx, kindOf(c)] as const);
  await ctx.run(`CREATE OR REPLACE TABLE g_clin_kind AS SELECT * FROM (VALUES ${kinds.map(([i, k]) => `(${i}, ${lit(k)})`).join(', ')}) t(idx, kind)`);
  await ctx.run(`CREATE TABLE IF NOT EXISTS g_clin AS
    WITH b AS (
      SELECT p.pkey, p.idx, p.collection_id, p.PatientID, p.sex, p.age_base::INTEGER AS age_base, p.base_date, p.species, p.cancer_types AS cancer, p.tumor_locations AS location, k.kind,
        row_number() OVER (PARTITION BY p.idx ORDER BY u(p.pkey, 'clin:rank'), p.pkey) AS prank
      FROM g_patient p JOIN g_clin_kind k USING (idx)),
    c AS (
      SELECT *,
        CASE WHEN collection_id = 'nlst' THEN (prank = 1 OR u(pkey, 'clin:canc') < 0.07) ELSE TRUE END AS canc,
        CASE sex WHEN 'M' THEN 1 WHEN 'F' THEN 2 WHEN 'O' THEN 3 ELSE 4 END AS sex_i,
        (age_base - (u(pkey, 'clin:agelag') < 0.35)::INTEGER)::BIGINT AS age_dx,
        CASE WHEN u(pkey, 'clin:race') < 0.72 THEN 1 WHEN u(pkey, 'clin:race') < 0.83 THEN 2 WHEN u(pkey, 'clin:race') < 0.91 THEN 3
             WHEN u(pkey, 'clin:race') < 0.92 THEN 4 WHEN u(pkey, 'clin:race') < 0.925 THEN 5 WHEN u(pkey, 'clin:race') < 0.94 THEN 6 ELSE 7 END AS race_i,
        CASE WHEN u(pkey, 'clin:eth') < 0.85 THEN 1 WHEN u(pkey, 'clin:eth') < 0.92 THEN 2 ELSE 3 END AS eth_i,
        CASE WHEN collection_id = 'nlst' AND prank = 1 THEN 7
             WHEN u(pkey, 'clin:stage') < 0.18 THEN 1 WHEN u(pkey, 'clin:stage') < 0.30 THEN 2 WHEN u(pkey, 'clin:stage') < 0.40 THEN 3
             WHEN u(pkey, 'clin:stage') < 0.50 THEN 4 WHEN u(pkey, 'clin:stage') < 0.62 THEN 5 WHEN u(pkey, 'clin:stage') < 0.70 THEN 6
             WHEN u(pkey, 'clin:stage') < 0.95 THEN 7 ELSE 8 END AS stage_i,
        ${LUNG_SMOKERS} AS smoke_i,
        ui(pkey, 'clin:fu', 90, 4200) AS fu_days,
        clampi(round(CASE WHEN sex = 'F' THEN 162 ELSE 176 END + 7 * gauss(pkey, 'clin:h')), 140, 205)::BIGINT AS height_cm,
        round(clampi(27 + 5.5 * gauss(pkey, 'clin:bmi'), 15.5, 55), 1) AS bmi,
        CASE WHEN u(pkey, 'clin:grade') < 0.2 THEN 1 WHEN u(pkey, 'clin:grade') < 0.6 THEN 2 WHEN u(pkey, 'clin:grade') < 0.9 THEN 3 ELSE 4 END AS grade_i,
        u(pkey, 'clin:hist') AS hist_u,
        year(base_date) - (u(pkey, 'clin:dxy') < 0.3)::INTEGER AS dx_year,
        ui(pkey, 'clin:smkage', 13, 25) AS smoke_age,
        CASE WHEN u(pkey, 'clin:lat') < 0.48 THEN 1 WHEN u(pkey, 'clin:lat') < 0.97 THEN 2 ELSE 3 END AS lat_i,
        CASE WHEN u(pkey, 'clin:alc') < 0.55 THEN 1 WHEN u(pkey, 'clin:alc') < 0.9 THEN 2 ELSE 3 END AS alc_i,
        CASE WHEN u(pkey, 'clin:prior') < 0.12 THEN 1 ELSE 2 END AS prior_i,
        CASE WHEN u(pkey, 'clin:er') < 0.75 THEN 1 WHEN u(pkey, 'clin:er') < 0.97 THEN 2 ELSE 3 END AS er_i,
        CASE WHEN u(pkey, 'clin:her2') < 0.15 THEN 1 WHEN u(pkey, 'clin:her2') < 0.95 THEN 2 ELSE 3 END AS her2_i,
        CASE WHEN u(pkey, 'clin:gl') < 0.3 THEN 1 WHEN u(pkey, 'clin:gl') < 0.75 THEN 2 WHEN u(pkey, 'clin:gl') < 0.87 THEN 3 WHEN u(pkey, 'clin:gl') < 0.98 THEN 4 ELSE 5 END AS gleason_i,
        CASE WHEN u(pkey, 'clin:idh') < 0.35 THEN 1 WHEN u(pkey, 'clin:idh') < 0.9 THEN 2 ELSE 3 END AS idh_i,
        CASE WHEN u(pkey, 'clin:mgmt') < 0.4 THEN 1 WHEN u(pkey, 'clin:mgmt') < 0.85 THEN 2 ELSE 3 END AS mgmt_i,
        CASE WHEN u(pkey, 'clin:hpv') < 0.55 THEN 1 WHEN u(pkey, 'clin:hpv') < 0.85 THEN 2 ELSE 3 END AS hpv_i,
        1 + floor(u(pkey, 'clin:site') * 5)::INTEGER AS site_i,
        1 + floor(u(pkey, 'clin:breed') * 8)::INTEGER AS breed_i,
        round(exp(1.8 + 0.8 * gauss(pkey, 'clin:psa')), 2) AS psa,
        round(exp(2.5 + 1.8 * gauss(pkey, 'clin:afp')), 1) AS afp
      FROM b),
    d AS (
      SELECT *,
        [1, 1, 2, 2, 3, 3, 4, NULL][stage_i] AS stage_n,
        round(bmi * height_cm * height_cm / 10000.0, 1) AS weight_kg,
        CASE WHEN smoke_i IN (2, 3) THEN round(CASE WHEN collection_id = 'nlst' THEN 30 + 25 * abs(gauss(pkey, 'clin:pky')) ELSE 8 + 30 * exp(0.5 * gauss(pkey, 'clin:pky')) END, 1) END AS pack_years,
        CASE WHEN u(pkey, 'clin:pr') < CASE WHEN er_i = 1 THEN 0.85 ELSE 0.1 END THEN 1 WHEN u(pkey, 'clin:pr2') < 0.97 THEN 2 ELSE 3 END AS pr_i,
        CASE WHEN age_dx >= 53 THEN 3 WHEN age_dx >= 48 THEN 2 ELSE 1 END AS meno_i
      FROM c)
    SELECT *,
      CASE WHEN u(pkey, 'clin:dead') < CASE WHEN NOT canc THEN 0.06 ELSE 0.08 + 0.12 * coalesce(stage_n, 2) END THEN 2 ELSE 1 END AS vital_i,
      CASE WHEN u(pkey, 'clin:rec') < 0.1 + 0.07 * coalesce(stage_n, 2) THEN 2 ELSE 1 END AS recur_i,
      floor(fu_days * (0.15 + 0.6 * u(pkey, 'clin:recd')))::BIGINT AS recur_days,
      CASE stage_n WHEN 1 THEN 1 + (u(pkey, 'clin:t') < 0.4)::INTEGER WHEN 2 THEN 2 + (u(pkey, 'clin:t') < 0.4)::INTEGER
        WHEN 3 THEN 1 + floor(u(pkey, 'clin:t') * 4)::INTEGER WHEN 4 THEN 1 + floor(u(pkey, 'clin:t') * 4)::INTEGER ELSE 5 END AS t_i,
      CASE stage_n WHEN 1 THEN 1 WHEN 2 THEN 1 + (u(pkey, 'clin:n') < 0.5)::INTEGER WHEN 3 THEN 2 + floor(u(pkey, 'clin:n') * 3)::INTEGER
        WHEN 4 THEN 1 + floor(u(pkey, 'clin:n') * 4)::INTEGER ELSE 5 END AS n_i,
      CASE WHEN stage_n = 4 THEN 2 WHEN stage_n IS NULL THEN 3 ELSE 1 END AS m_i,
      least(3, floor(2.2 * pow(u(pkey, 'clin:ecog'), 1.3) + 0.3 * (coalesce(stage_n, 2) - 1)))::INTEGER + 1 AS ecog_i,
      round(6 + 9 * coalesce(stage_n, 2) + 10 * abs(gauss(pkey, 'clin:tsz')), 0)::BIGINT AS tumor_mm,
      CASE WHEN coalesce(stage_n, 2) <= 1 THEN (CASE WHEN u(pkey, 'clin:tx') < 0.75 THEN 1 WHEN u(pkey, 'clin:tx') < 0.9 THEN 3 ELSE 7 END)
           WHEN stage_n = 2 THEN (CASE WHEN u(pkey, 'clin:tx') < 0.4 THEN 1 WHEN u(pkey, 'clin:tx') < 0.85 THEN 5 ELSE 4 END)
           WHEN stage_n = 3 THEN (CASE WHEN u(pkey, 'clin:tx') < 0.55 THEN 4 WHEN u(pkey, 'clin:tx') < 0.8 THEN 5 ELSE 2 END)
           ELSE (CASE WHEN u(pkey, 'clin:tx') < 0.5 THEN 2 WHEN u(pkey, 'clin:tx') < 0.85 THEN 6 ELSE 7 END) END AS treat_i
    FROM d`);
}

/** Patient latent table, for the /v2 TCGA tables too. */
export async function ensureClinicalLatent(ctx: GenContext): Promise<void> {
  await createLatent(ctx);
}
