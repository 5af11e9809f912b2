// The series table (index): every column drawn from the series profile of the
// series' collection and modality (or of its analysis-result part), plus
// helper columns (g_*) the later steps use. Derived series take the study,
// patient and body part of their source series.

import { valuesTable } from '../core/data/sql.ts';
import type { GenContext } from './context.ts';
import { SOP_CLASS_NAMES } from './vocab.ts';


/** Names of every SOP class and transfer-syntax combination the profile can draw, joined instead of mapped per row. */
async function loadNames(ctx: GenContext): Promise<void> {
  await ctx.run(valuesTable('sop_names', [['uid', 'VARCHAR'], ['name', 'VARCHAR']], Object.entries(SOP_CLASS_NAMES)));
  await ctx.run(`CREATE TABLE ts_names AS SELECT uids, ts_name(uids) AS names FROM (SELECT DISTINCT unnest(ts_vals) AS uids FROM sprof) WHERE uids IS NOT NULL`);
}

export async function buildIndex(ctx: GenContext): Promise<void> {
  const { run, plan } = ctx;
  const V = plan.currentVersion;
  await loadNames(ctx);
  await run(`CREATE TABLE t_series AS
    WITH s AS (
      SELECT s.key, s.skey, s.pkey, s.src_key, s.idx_s, s.ar_idx, s.part_idx, s.item, s.j, s.d, s.modality, s.n, s.bytes, s.pyramid,
        s.uid_style, s.c4a, s.c4b, s.inst_offset, s.collection_id,
        p.doi, p.bp_vals, p.bp_cum, p.bp_null, p.sop_vals, p.sop_cum, p.ts_vals, p.ts_cum, p.pi_vals, p.pi_cum, p.pr_vals, p.pr_cum,
        p.eq_man, p.eq_model, p.desc_vals, p.desc_cum, p.sdate_null, p.lic_vals, p.lic_buckets, p.iv_vals, p.iv_cum,
        st.PatientID, st.sex, st.patient_age, st.study_date, st.date_null_, st.study_description, st.study_uid, st.species, st.revised, st.idx AS coll_idx,
        -- One draw picks both halves of a pair (manufacturer and model, license and bucket); the transfer
        -- syntax and photometric interpretation share a draw so that they pair up as often as in the real data.
        1 + len(list_filter(p.eq_cum, lambda x: x <= u2(s.skey, s.modality, 'eq'))) AS i_eq,
        1 + len(list_filter(p.lic_cum, lambda x: x <= u(s.key, 'lic'))) AS i_lic
      FROM g_series2 s JOIN sprof p USING (prof_id) JOIN g_study st USING (skey)),
    x AS (
      SELECT
        s.collection_id,
        a.analysis_result_id,
        s.PatientID,
        uid(s.uid_style, s.c4a, s.c4b, 2, s.idx_s, s.key) AS SeriesInstanceUID,
        s.study_uid AS StudyInstanceUID,
        s.doi AS source_DOI,
        s.patient_age AS PatientAge,
        s.sex AS PatientSex,
        CASE WHEN s.date_null_ THEN NULL ELSE strftime(s.study_date, '%Y-%m-%d') END AS StudyDate,
        s.study_description AS StudyDescription,
        CASE WHEN s.part_idx IS NULL THEN wpick(s.bp_vals, s.bp_cum, u2(s.skey, s.modality, 'bp')) END AS BodyPartExamined,
        s.modality AS Modality,
        wpick(s.sop_vals, s.sop_cum, u(s.key, 'sop')) AS SOPClassUID,
        wpick(s.ts_vals, s.ts_cum, u(s.key, 'ts')) AS TransferSyntaxUID,
        wpick(s.pi_vals, s.pi_cum, u(s.key, 'ts')) AS PhotometricInterpretation,
        wpick(s.pr_vals, s.pr_cum, u(s.key, 'pr')) AS PixelRepresentation,
        s.eq_man[s.i_eq] AS Manufacturer,
        s.eq_model[s.i_eq] AS ManufacturerModelName,
        CASE WHEN u(s.key, 'sdn') < s.sdate_null OR s.date_null_ THEN NULL
             ELSE strftime(s.study_date + CASE WHEN s.part_idx IS NULL THEN 0 ELSE ui(s.key, 'sdd', 30, 3000)::INTEGER END, '%Y-%m-%d') END AS SeriesDate,
        wpick(s.desc_vals, s.desc_cum, u(s.key, 'desc')) AS SeriesDescription,
        CASE WHEN s.part_idx IS NOT NULL THEN (1000 + s.part_idx * 10 + s.d)::VARCHAR ELSE (s.item * 100 + s.j + 1)::VARCHAR END AS SeriesNumber,
        s.n AS instanceCount,
        s.lic_vals[s.i_lic] AS license_short_name,
        least(${V}, wpick(s.iv_vals, s.iv_cum, u(s.key, 'iv')))::BIGINT AS series_init_idc_version,
        s.lic_buckets[s.i_lic] AS aws_bucket,
        uuid4(s.key, 'crdc_series') AS crdc_series_uuid,
        s.bytes / 1e6 AS series_size_MB,
        s.key AS g_key, s.src_key AS g_src_key, s.idx_s AS g_idx, s.ar_idx AS g_ar_idx, s.part_idx AS g_part_idx, s.item AS g_item,
        s.j AS g_j, s.d AS g_d, s.skey AS g_skey, s.pkey AS g_pkey, s.coll_idx AS g_coll_idx, s.uid_style AS g_uid_style,
        s.c4a AS g_c4a, s.c4b AS g_c4b, s.bytes AS g_bytes, s.pyramid AS g_pyramid, s.inst_offset AS g_inst_offset,
        s.bp_null AS g_bp_null, s.revised AS g_revised, s.species AS g_species
      FROM s LEFT JOIN ar a ON a.ar_idx = s.ar_idx)
    SELECT x.* EXCLUDE (g_key, g_src_key, g_idx, g_ar_idx, g_part_idx, g_item, g_j, g_d, g_skey, g_pkey, g_coll_idx, g_uid_style, g_c4a, g_c4b,
        g_bytes, g_pyramid, g_inst_offset, g_bp_null, g_revised, g_species, aws_bucket, crdc_series_uuid, series_size_MB),
      sn.name AS sop_class_name, tn.names AS transfer_syntax_name,
      CASE WHEN u(g_key, 'rev') < g_revised AND series_init_idc_version < ${V}
        THEN series_init_idc_version + ui(g_key, 'revv', 1, ${V} - series_init_idc_version) ELSE series_init_idc_version END AS series_revised_idc_version,
      aws_bucket, crdc_series_uuid, 's3://' || aws_bucket || '/' || crdc_series_uuid || '/*' AS series_aws_url, series_size_MB,
      g_key, g_src_key, g_idx, g_ar_idx, g_part_idx, g_item, g_j, g_d, g_skey, g_pkey, g_coll_idx, g_uid_style, g_c4a, g_c4b,
      g_bytes, g_pyramid, g_inst_offset, g_bp_null, g_revised, g_species
    FROM x LEFT JOIN sop_names sn ON sn.uid = x.SOPClassUID LEFT JOIN ts_names tn ON tn.uids = x.TransferSyntaxUID`);
  // Derived series: the body part of the source acquisition (or none, as often as the real ones say).
  await run(`UPDATE t_series d SET BodyPartExamined = CASE WHEN u(d.g_key, 'bpd') < d.g_bp_null THEN NULL ELSE s.BodyPartExamined END
    FROM t_series s WHERE d.g_src_key = s.g_key`);
}
