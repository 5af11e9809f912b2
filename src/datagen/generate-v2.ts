// Tables behind the older /v2 interface, written under <out>/v2/:
//  - dicom_pivot: one row per instance with the 59 image fields of the v2
//    manifests (per-series columns joined once, then expanded per instance);
//  - tcga_clinical_rel9 / tcga_biospecimen_rel9: the ISB-CGC style TCGA
//    tables, one row per TCGA patient / per sample, consistent with the
//    collection's clinical table through the shared patient latents (g_clin).

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { GenContext } from './generate.ts';
import { ensureClinicalLatent } from './clinical/latent.ts';
import { IMAGE_MODALITIES } from './vocab.ts';
import { DEFAULT_STORES } from '../core/data/manifest.ts';
import { lit, weightedCase } from '../core/data/sql.ts';
import { INSTANCE_COLUMNS, PIVOT_COLUMNS, SERIES_COLUMNS } from '../core/registry/v2.ts';

const COPY_OPTS = '(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 122880)';

/** Bucket of the second store for a bucket of the primary store. */
function bucketMap(): string {
  const m = DEFAULT_STORES.cloud2.bucket_map;
  return `MAP {${Object.keys(m)
    .sort()
    .map((k) => `${lit(k)}: ${lit(m[k]!)}`)
    .join(', ')}}`;
}

/** LIDC-style qualitative nodule ratings, least to most. */
export const QUALITATIVE: Record<string, string[]> = {
  Calcification: ['Popcorn', 'Laminated', 'Solid', 'Non-central', 'Central', 'Absent'],
  Internal_structure: ['Soft Tissue', 'Fluid', 'Fat', 'Air'],
  Lobular_Pattern: ['No Lobulation', 'Nearly No Lobulation', 'Medium Lobulation', 'Near Marked Lobulation', 'Marked Lobulation'],
  Malignancy: ['Highly Unlikely', 'Moderately Unlikely', 'Indeterminate', 'Moderately Suspicious', 'Highly Suspicious'],
  Margin: ['Poorly Defined', 'Near Poorly Defined', 'Medium Margin', 'Near Sharp', 'Sharp'],
  Sphericity: ['Linear', 'Ovoid/Linear', 'Ovoid', 'Ovoid/Round', 'Round'],
  Spiculation: ['No Spiculation', 'Nearly No Spiculation', 'Medium Spiculation', 'Near Marked Spiculation', 'Marked Spiculation'],
  Subtlety_score: ['Extremely Subtle', 'Moderately Subtle', 'Fairly Subtle', 'Moderately Obvious', 'Obvious'],
  Texture: ['Non-Solid/GGO', 'Non-Solid/Mixed', 'Part Solid/Mixed', 'Solid/Mixed', 'Solid'],
};
/** Skew of each rating: the most frequent value first in QUALITATIVE order is pow(u, skew) small. */
export const SKEW: Record<string, number> = {
  Calcification: 0.25, Internal_structure: 4, Lobular_Pattern: 1.8, Malignancy: 1, Margin: 0.6, Sphericity: 0.6, Spiculation: 2.2, Subtlety_score: 0.6, Texture: 0.3,
};

async function buildPivotSeries(ctx: GenContext): Promise<void> {
  const q = Object.entries(QUALITATIVE)
    .map(([name, vals]) => `CASE WHEN nodule THEN ${lit(vals)}[1 + floor(pow(u(g_key, ${lit(`v2:${name}`)}), ${SKEW[name]}) * ${vals.length})::INTEGER] END AS ${name}`)
    .join(',\n        ');
  // Measurements of SR series: LIDC-style nodule ratings for CT of lung collections, shape features, ADC for MR sources.
  await ctx.run(`CREATE OR REPLACE TEMP TABLE v2_sr AS
    WITH s AS (
      SELECT s.g_key, coalesce(src.Modality = 'CT' AND (c.cancer_types ILIKE '%lung%' OR c.tumor_locations IN ('Chest', 'Lung')), false) AS nodule,
        coalesce(src.Modality = 'MR', false) AS mr, round(3 + 27 * pow(u(s.g_key, 'v2:diam'), 2), 2) AS d
      FROM t_series s JOIN coll c ON c.idx = s.g_coll_idx LEFT JOIN t_series src ON src.g_key = s.g_src_key WHERE s.Modality = 'SR')
    SELECT g_key,
        ${q},
        CASE WHEN nodule THEN d END AS Diameter,
        round(pi() / 6 * d * d * d * (0.7 + 0.4 * u(g_key, 'v2:vol')), 3) AS Volume,
        CASE WHEN nodule THEN round(pi() * d * d * (1.0 + 0.3 * u(g_key, 'v2:surf')), 3) END AS Surface_area_of_mesh,
        CASE WHEN nodule THEN round(0.55 + 0.4 * u(g_key, 'v2:sph'), 4) END AS Sphericity_quant,
        CASE WHEN nodule THEN round(pi() / 6 * d * d * d * (0.7 + 0.4 * u(g_key, 'v2:vol')) * (0.95 + 0.1 * u(g_key, 'v2:vm')), 3) END AS Volume_of_Mesh,
        CASE WHEN mr THEN round(600 + 1200 * u(g_key, 'v2:adc'), 1) END AS Apparent_Diffusion_Coefficient
    FROM s`);
  await ctx.run(`CREATE OR REPLACE TEMP TABLE v2_series AS
    SELECT s.g_idx, s.g_key, s.g_bytes, s.g_pyramid, s.g_uid_style, s.g_c4a, s.g_c4b, s.g_inst_offset, s.instanceCount,
      s.analysis_result_id AS analysis_results_id,
      seg.AnatomicRegion_CodeMeanings[1] AS AnatomicRegionSequence,
      sr.Apparent_Diffusion_Coefficient,
      s.aws_bucket,
      s.BodyPartExamined,
      sr.Calcification,
      c.cancer_types AS CancerType,
      s.collection_id,
      s.crdc_series_uuid,
      uuid4(s.g_skey, 'crdc_study') AS crdc_study_uuid,
      sr.Diameter,
      CASE WHEN s.Modality IN (${IMAGE_MODALITIES.map((m) => lit(m)).join(', ')}) THEN uid(s.g_uid_style, s.g_c4a, s.g_c4b, 6, s.g_idx, s.g_key) END AS FrameOfReferenceUID,
      map_extract_value(${bucketMap()}, s.aws_bucket) AS gcs_bucket,
      sm.illuminationType_CodeMeaning AS illuminationType,
      sr.Internal_structure,
      s.license_short_name,
      sr.Lobular_Pattern,
      sr.Malignancy,
      s.Manufacturer,
      s.ManufacturerModelName,
      sr.Margin,
      sm.max_TotalPixelMatrixColumns,
      sm.max_TotalPixelMatrixRows,
      sm.min_PixelSpacing_2sf AS min_PixelSpacing,
      s.Modality,
      sm.ObjectiveLensPower,
      s.PatientID,
      sm.primaryAnatomicStructure_CodeMeaning AS primaryAnatomicStructure,
      upper(c.program) AS Program,
      CASE WHEN s.Modality IN ('SM', 'US') THEN 3 ELSE 1 END AS SamplesPerPixel,
      seg.AlgorithmName AS SegmentAlgorithmName,
      seg.AlgorithmType AS SegmentAlgorithmType,
      seg.SegmentedPropertyCategory_CodeMeanings[1] AS SegmentedPropertyCategoryCodeSequence,
      seg.SegmentedPropertyType_CodeMeanings[1] AS SegmentedPropertyTypeCodeSequence,
      CASE WHEN seg.SeriesInstanceUID IS NOT NULL THEN 1 END AS SegmentNumber,
      s.SeriesDescription,
      s.SeriesInstanceUID,
      s.SeriesNumber,
      coalesce(ct.SliceThickness, mr.SliceThickness, pt.SliceThickness) AS SliceThickness,
      s.SOPClassUID,
      s.source_DOI,
      sr.Sphericity,
      sr.Sphericity_quant,
      sr.Spiculation,
      s.StudyDate,
      s.StudyDescription,
      s.StudyInstanceUID,
      sr.Subtlety_score,
      sr.Surface_area_of_mesh,
      c.species AS tcia_species,
      c.tumor_locations AS tcia_tumorLocation,
      sr.Texture,
      sr.Volume,
      sr.Volume_of_Mesh
    FROM t_series s
    JOIN coll c ON c.idx = s.g_coll_idx
    LEFT JOIN t_ct_index ct ON ct.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN t_mr_index mr ON mr.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN t_pt_index pt ON pt.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN t_sm_index sm ON sm.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN t_seg_index seg ON seg.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN v2_sr sr ON sr.g_key = s.g_key
    ORDER BY s.g_idx`);
}

/**
 * dicom_pivot is written normalised (see src/core/registry/v2.ts): the
 * per-series fields once per series, and the per-instance fields by one
 * streaming COPY over the series expanded per instance. v2_series is created
 * in g_idx order and that COPY runs on one thread: with preserve_insertion_order
 * the rows come out in (g_idx, j) order, identical on every run, without
 * sorting millions of rows.
 */
async function writePivot(ctx: GenContext, dir: string): Promise<Record<string, number>> {
  await buildPivotSeries(ctx);
  const types = new Map(PIVOT_COLUMNS);
  const seriesSelect = SERIES_COLUMNS.map((n) => `"${n}"::${types.get(n)} AS "${n}"`).join(', ');
  await ctx.run(`COPY (SELECT ${seriesSelect} FROM v2_series ORDER BY g_idx) TO ${lit(join(dir, 'dicom_series.parquet'))} ${COPY_OPTS}`);
  const instanceExpr: Record<string, string> = {
    SeriesInstanceUID: 'SeriesInstanceUID',
    SOPInstanceUID: `uid(g_uid_style, g_c4a, g_c4b, 3, g_inst_offset + j, hash(g_key, j))`,
    crdc_instance_uuid: `uuid4(hash(g_key, j), 'crdc_instance')`,
    instance_size: `inst_size(g_key, j, instanceCount, g_bytes, g_pyramid)`,
  };
  const instanceSelect = INSTANCE_COLUMNS.map((n) => `(${instanceExpr[n]})::${types.get(n)} AS "${n}"`).join(', ');
  const threads = String((await ctx.conn.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0]![0]);
  await ctx.run(`SET threads = 1`);
  try {
    await ctx.run(`COPY (SELECT ${instanceSelect} FROM (SELECT *, unnest(range(instanceCount)) AS j FROM v2_series))
      TO ${lit(join(dir, 'dicom_instances.parquet'))} ${COPY_OPTS}`);
  } finally {
    await ctx.run(`SET threads = ${Number(threads)}`);
  }
  const r = await ctx.conn.runAndReadAll(`SELECT count(*), sum(instanceCount) FROM v2_series`);
  await ctx.run(`DROP TABLE v2_series`);
  await ctx.run(`DROP TABLE v2_sr`);
  const [series, instances] = r.getRows()[0]!.map(Number);
  return { dicom_series: series!, dicom_instances: instances!, dicom_pivot: instances! };
}

/** TCGA project facts (ISB-CGC rel9 wording). */
const TCGA: Record<string, { name: string; site: string[]; hist: string[]; staged: boolean }> = {
  LUAD: { name: 'Lung Adenocarcinoma', site: ['Lung'], staged: true, hist: ['Lung Adenocarcinoma- Not Otherwise Specified (NOS)', 'Lung Adenocarcinoma Mixed Subtype', 'Lung Papillary Adenocarcinoma', 'Lung Acinar Adenocarcinoma', 'Mucinous (Colloid) Carcinoma', 'Lung Bronchioloalveolar Carcinoma Nonmucinous'] },
  LUSC: { name: 'Lung Squamous Cell Carcinoma', site: ['Lung'], staged: true, hist: ['Lung Squamous Cell Carcinoma- Not Otherwise Specified (NOS)', 'Lung Basaloid Squamous Cell Carcinoma', 'Lung Papillary Squamous Cell Carcinoma'] },
  BRCA: { name: 'Breast Invasive Carcinoma', site: ['Breast'], staged: true, hist: ['Infiltrating Ductal Carcinoma', 'Infiltrating Lobular Carcinoma', 'Mixed Histology (please specify)', 'Mucinous Carcinoma', 'Medullary Carcinoma', 'Metaplastic Carcinoma'] },
  GBM: { name: 'Glioblastoma Multiforme', site: ['Brain'], staged: false, hist: ['Untreated primary (de novo) GBM', 'Glioblastoma Multiforme (GBM)', 'Treated primary GBM'] },
  LGG: { name: 'Brain Lower Grade Glioma', site: ['Central nervous system'], staged: false, hist: ['Astrocytoma', 'Oligodendroglioma', 'Oligoastrocytoma'] },
  KIRC: { name: 'Kidney Renal Clear Cell Carcinoma', site: ['Kidney'], staged: true, hist: ['Kidney Clear Cell Renal Carcinoma'] },
  OV: { name: 'Ovarian Serous Cystadenocarcinoma', site: ['Ovary'], staged: false, hist: ['Serous Cystadenocarcinoma'] },
  PRAD: { name: 'Prostate Adenocarcinoma', site: ['Prostate'], staged: false, hist: ['Prostate Adenocarcinoma Acinar Type', 'Prostate Adenocarcinoma, Other Subtype'] },
  COAD: { name: 'Colon Adenocarcinoma', site: ['Colon'], staged: true, hist: ['Colon Adenocarcinoma', 'Colon Mucinous Adenocarcinoma'] },
  HNSC: { name: 'Head and Neck Squamous Cell Carcinoma', site: ['Oral Cavity', 'Larynx', 'Oral Tongue', 'Tonsil', 'Floor of mouth'], staged: true, hist: ['Head & Neck Squamous Cell Carcinoma', 'Head & Neck Squamous Cell Carcinoma Basaloid Type'] },
  LIHC: { name: 'Liver Hepatocellular Carcinoma', site: ['Liver'], staged: true, hist: ['Hepatocellular Carcinoma', 'Hepatocholangiocarcinoma (Mixed)', 'Fibrolamellar Carcinoma'] },
  UCEC: { name: 'Uterine Corpus Endometrial Carcinoma', site: ['Endometrial'], staged: true, hist: ['Endometrioid endometrial adenocarcinoma', 'Serous endometrial adenocarcinoma', 'Mixed serous and endometrioid'] },
};

const COUNTRIES: [string | null, number][] = [
  ['United States', 60], ['Russia', 6], ['Germany', 5], ['Canada', 5], ['Poland', 4], ['Vietnam', 3], ['Ukraine', 3], ['Australia', 3],
  ['Brazil', 2], ['Italy', 2], [null, 7],
];


async function tcgaProjects(ctx: GenContext): Promise<void> {
  const rows = ctx.plan.collections
    .filter((c) => c.id.startsWith('tcga_'))
    .map((c) => {
      const code = c.id.slice(5).toUpperCase();
      const p = TCGA[code] ?? { name: c.cancer_types ?? code, site: [c.tumor_locations ?? 'Other'], staged: true, hist: [c.cancer_types ?? code] };
      return `(${c.idx}, ${lit(`TCGA-${code}`)}, ${lit(code)}, ${lit(p.name)}, ${lit(p.site)}, ${lit(p.hist)}, ${lit(p.staged)})`;
    });
  await ctx.run(`CREATE OR REPLACE TEMP TABLE v2_tcga (idx INTEGER, project_short_name VARCHAR, disease_code VARCHAR, project_name VARCHAR, sites VARCHAR[], hist VARCHAR[], staged BOOLEAN)`);
  if (rows.length) await ctx.run(`INSERT INTO v2_tcga VALUES ${rows.join(', ')}`);
}

async function writeTcgaClinical(ctx: GenContext, file: string): Promise<number> {
  const stages = ['Stage IA', 'Stage IB', 'Stage IIA', 'Stage IIB', 'Stage IIIA', 'Stage IIIB', 'Stage IV', null];
  const src = `SELECT
      p.PatientID AS case_barcode,
      t.project_short_name,
      t.disease_code,
      p.age_dx::BIGINT AS age_at_diagnosis,
      CASE WHEN u(p.pkey, 'v2:bmi') < 0.6 THEN NULL ELSE p.bmi END::DOUBLE AS bmi,
      ${weightedCase(COUNTRIES, `u(p.pkey, 'v2:country')`)} AS country,
      ['NOT HISPANIC OR LATINO', 'HISPANIC OR LATINO', NULL][p.eth_i] AS ethnicity,
      ['MALE', 'FEMALE', NULL, NULL][p.sex_i] AS gender,
      t.hist[1 + floor(pow(p.hist_u, 1.6) * len(t.hist))::INTEGER] AS histological_type,
      CASE WHEN t.staged THEN ${lit(stages)}[p.stage_i] END AS pathologic_stage,
      t.project_name,
      ['WHITE', 'BLACK OR AFRICAN AMERICAN', 'ASIAN', 'AMERICAN INDIAN OR ALASKA NATIVE', 'NATIVE HAWAIIAN OR OTHER PACIFIC ISLANDER', NULL, NULL][p.race_i] AS race,
      t.sites[1 + floor(u(p.pkey, 'v2:site') * len(t.sites))::INTEGER] AS tumor_tissue_site,
      ['Alive', 'Dead'][p.vital_i] AS vital_status
    FROM g_clin p JOIN v2_tcga t USING (idx)
    ORDER BY case_barcode`;
  await ctx.run(`COPY (${src}) TO ${lit(file)} ${COPY_OPTS}`);
  const r = await ctx.conn.runAndReadAll(`SELECT count(*) FROM g_clin JOIN v2_tcga USING (idx)`);
  return Number(r.getRows()[0]![0]);
}

async function writeTcgaBiospecimen(ctx: GenContext, file: string): Promise<number> {
  // Samples: the primary tumor, the samples the slides were cut from, and optional normals / metastases.
  const src = `WITH pat AS (SELECT p.pkey, p.PatientID, t.project_short_name FROM g_clin p JOIN v2_tcga t USING (idx)),
    samples AS (
      SELECT pkey, '01A' AS s FROM pat
      UNION SELECT pkey, '10A' FROM pat WHERE u(pkey, 'v2:blood') < 0.5
      UNION SELECT pkey, '11A' FROM pat WHERE u(pkey, 'v2:normal') < 0.3
      UNION SELECT pkey, '06A' FROM pat WHERE u(pkey, 'v2:met') < 0.04
      UNION SELECT s.g_pkey, split_part(sm.ContainerIdentifier, '-', 4) FROM t_sm_index sm JOIN t_series s USING (SeriesInstanceUID)
        JOIN pat ON pat.pkey = s.g_pkey)
    SELECT pat.PatientID AS case_barcode, pat.PatientID || '-' || samples.s AS sample_barcode, pat.project_short_name,
      CASE left(samples.s, 2) WHEN '01' THEN 'Primary Tumor' WHEN '02' THEN 'Recurrent Tumor' WHEN '06' THEN 'Metastatic'
        WHEN '10' THEN 'Blood Derived Normal' WHEN '11' THEN 'Solid Tissue Normal' END AS sample_type
    FROM samples JOIN pat USING (pkey)
    ORDER BY sample_barcode`;
  await ctx.run(`CREATE OR REPLACE TEMP TABLE v2_bio AS ${src}`);
  await ctx.run(`COPY (SELECT * FROM v2_bio ORDER BY sample_barcode) TO ${lit(file)} ${COPY_OPTS}`);
  const r = await ctx.conn.runAndReadAll(`SELECT count(*) FROM v2_bio`);
  await ctx.run(`DROP TABLE v2_bio`);
  return Number(r.getRows()[0]![0]);
}

export async function generateV2(ctx: GenContext, out: string, instances: boolean): Promise<Record<string, number>> {
  const dir = join(out, 'v2');
  await mkdir(dir, { recursive: true });
  await ensureClinicalLatent(ctx);
  const counts: Record<string, number> = {};
  if (instances) Object.assign(counts, await writePivot(ctx, dir));
  await tcgaProjects(ctx);
  counts.tcga_clinical_rel9 = await writeTcgaClinical(ctx, join(dir, 'tcga_clinical_rel9.parquet'));
  counts.tcga_biospecimen_rel9 = await writeTcgaBiospecimen(ctx, join(dir, 'tcga_biospecimen_rel9.parquet'));
  return counts;
}
