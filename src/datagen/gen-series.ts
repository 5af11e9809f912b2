// Patients, studies and series, in SQL from range() and hash-keyed draws:
// each study takes a signature of its collection (which modalities, how many
// series of each), and each analysis result derives series from a share of
// the source series of its collections, inside the source's study. Keys:
// patient idx*2^24+p, study patient*2^11+s, original series even, derived odd.

import type { GenContext } from './context.ts';

export async function generateSeries(ctx: GenContext): Promise<void> {
  const { run } = ctx;
  await run(`CREATE TABLE g_patient AS
    WITH p AS (SELECT idx, p, idx::BIGINT * 16777216 + p AS pkey FROM (SELECT idx, unnest(range(n_patients)) AS p FROM coll))
    SELECT c.idx, c.collection_id, c.species, c.cancer_types, c.tumor_locations, p.p, p.pkey,
      pid_fmt(c.pid_lits, c.pid_divs, c.pid_alphas, ((c.pid_offset + p.p) * 1000003 + c.pid_add) % c.pid_m) AS PatientID,
      wpick(c.sex_vals, c.sex_cum, u(p.pkey, 'sex')) AS sex,
      -- Collections whose DICOM carries no ages still have patients of plausible age (clinical tables use it).
      clampi(CASE WHEN c.age_mean > 1 THEN c.age_mean + c.age_sd * gauss(p.pkey, 'age') ELSE 60 + 11 * gauss(p.pkey, 'age') END, 0, 99) AS age_base,
      make_date(c.year_lo + ui(p.pkey, 'yr', 0, c.year_hi - c.year_lo)::INTEGER, 1, 1) + ui(p.pkey, 'doy', 0, 364)::INTEGER AS base_date
    FROM p JOIN coll c USING (idx)`);

  await run(`CREATE TABLE g_study AS
    WITH s AS (SELECT pkey, unnest(range(1 + extra(c.spp_r, c.spp_max, u(pkey, 'nst')))) AS s FROM g_patient JOIN coll c USING (idx)),
    k AS (SELECT gp.pkey, gp.idx, gp.collection_id, gp.PatientID, gp.sex, gp.age_base, gp.base_date, gp.species, s.s, gp.pkey * 2048 + s.s AS skey
      FROM s JOIN g_patient gp USING (pkey)),
    n AS (SELECT *, row_number() OVER (ORDER BY skey) AS study_idx FROM k)
    SELECT n.*, c.uid_style, c.c4a, c.c4b, c.revised,
      uid(c.uid_style, c.c4a, c.c4b, 1, n.study_idx, n.skey) AS study_uid,
      wpick(range(c.n_sigs), c.sig_cum, u(n.skey, 'sig'))::INTEGER AS sig_no,
      n.base_date + (n.s * ui(n.skey, 'gap', 30, 400) + ui(n.skey, 'sday', 0, 20))::INTEGER AS study_date,
      u(n.skey, 'dnull') < c.date_null AS date_null_,
      wpick(c.stdesc_vals, c.stdesc_cum, u(n.skey, 'sdesc')) AS study_description,
      CASE WHEN u(n.skey, 'agen') < c.age_null THEN NULL ELSE printf('%03dY', floor(n.age_base + n.s * 0.6)::INTEGER) END AS patient_age
    FROM n JOIN coll c USING (idx)`);

  // Original series from the study signatures; keys are even.
  await run(`CREATE TABLE g_ser AS
    WITH x AS (
      SELECT st.skey, st.idx, sm.item, sm.modality,
        unnest(range(1 + extra(sm.per_r, sm.max, u2(st.skey, sm.item, 'nser')))) AS j
      FROM g_study st JOIN sig_mod sm ON sm.idx = st.idx AND sm.sig_no = st.sig_no)
    SELECT x.skey, x.idx, x.item, x.modality, x.j, ((x.skey * 8 + x.item) * 256 + x.j) * 2 AS key,
      NULL::INTEGER AS part_idx, NULL::INTEGER AS ar_idx, NULL::BIGINT AS src_key, 0 AS d, cm.prof_id
    FROM x JOIN cmod cm ON cm.idx = x.idx AND cm.modality = x.modality`);
  // Derived series of analysis results, in the study of their source series;
  // the first candidate of each (result, collection) is always covered, so
  // every result reaches every collection it lists at any scale. Keys are odd.
  await run(`INSERT INTO g_ser
    WITH cand AS (
      SELECT s.key AS src_key, s.skey, s.idx, s.item, s.j, p.part_idx, p.ar_idx, p.modality, p.coverage, p.per_covered, p.prof_id,
        u(s.key, 'ar' || p.ar_idx) AS cu
      FROM g_ser s JOIN ar_part p ON p.idx = s.idx AND p.source = s.modality),
    cov AS (SELECT *, cu = min(cu) OVER (PARTITION BY ar_idx, idx) AS first FROM cand),
    d AS (
      SELECT *, unnest(range(greatest(first::INTEGER,
        floor(per_covered)::INTEGER + (u(src_key, 'arn' || part_idx) < per_covered - floor(per_covered))::INTEGER))) AS d
      FROM cov WHERE cu < coverage OR first)
    SELECT skey, idx, item, modality, j, (144115188075855872 + row_number() OVER (ORDER BY src_key, part_idx, d)) * 2 + 1 AS key,
      part_idx, ar_idx, src_key, d, prof_id
    FROM d`);

  await run(`CREATE TABLE g_series2 AS
    WITH n AS (
      SELECT s.*, greatest(1, round(qsample(p.inst_q, u(s.key, 'ninst')) * p.inst_adj))::BIGINT AS n
      FROM g_ser s JOIN sprof p USING (prof_id))
    SELECT n.*, st.pkey, st.collection_id,
      greatest(n.n * 64, round(n.n * qsample(p.b_q, u(n.key, 'bpi')) * p.b_adj * 1e6))::BIGINT AS bytes,
      n.modality = 'SM' AS pyramid,
      CASE WHEN n.part_idx IS NOT NULL THEN 'highdicom' WHEN n.modality = 'SM' THEN 'pixelmed' ELSE st.uid_style END AS uid_style,
      st.c4a, st.c4b,
      -- One window (ordered by key) numbers the series and places their instances.
      row_number() OVER w AS idx_s,
      coalesce(sum(n.n) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS inst_offset
    FROM n JOIN sprof p USING (prof_id) JOIN g_study st USING (skey)
    WINDOW w AS (ORDER BY n.key)`);
}
