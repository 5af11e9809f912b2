// Per-series facts the instance rows of dicom_all are expanded from: the
// index's columns, the collection's and license's, the geometry of CT/MR/PT
// series (from ct_index, mr_index, pt_index) and, for segmentations, their
// segments and the first instance of the image series they segment. One row
// per series, in generation order (g_idx), so the expansion streams.

import { DEFAULT_STORES } from '../../core/data/manifest.ts';
import { lit } from '../../core/data/sql.ts';
import type { GenContext } from '../context.ts';

/** The instance columns shared with the /v2 dicom_instances table (same draws, so the same UIDs). */
export const SOP_UID = (k: string, j: string) => `uid(g_uid_style, g_c4a, g_c4b, 3, g_inst_offset + ${j}, hash(${k}, ${j}))`;
export const INSTANCE_UUID = (k: string, j: string) => `uuid4(hash(${k}, ${j}), 'crdc_instance')`;

/** Known SNOMED CT codes of segment categories; other meanings get a stable made-up code. */
const CATEGORY_CODES: Record<string, string> = {
  'Anatomical Structure': '123037004',
  'Morphologically Altered Structure': '49755003',
  Tissue: '85756007',
  'Physical Object': '260787004',
  'Body Substance': '91720002',
  'Spatial and Relational Concept': '309825002',
};

function gcsBucketMap(): string {
  const m = DEFAULT_STORES.cloud2.bucket_map;
  return `MAP {${Object.keys(m).sort().map((k) => `${lit(k)}: ${lit(m[k]!)}`).join(', ')}}`;
}

/** A code struct for a meaning: the known code, else a stable 8-digit one. */
export function codeOf(meaning: string, scheme = 'SCT', known: Record<string, string> = {}): string {
  const table = Object.keys(known).length ? `map_extract_value(MAP {${Object.entries(known).map(([k, v]) => `${lit(k)}: ${lit(v)}`).join(', ')}}, ${meaning})` : 'NULL';
  return `CASE WHEN ${meaning} IS NULL THEN NULL ELSE {'CodeValue': coalesce(${table}, (10000000 + hash(${meaning}) % 89999999)::VARCHAR), 'CodingSchemeDesignator': ${lit(scheme)}, 'CodeMeaning': ${meaning}} END`;
}

export async function buildSeriesFacts(ctx: GenContext): Promise<void> {
  // Segments of each SEG series: the labels seg_index lists, numbered from 1.
  await ctx.run(`CREATE OR REPLACE TEMP TABLE fm_segments AS
    SELECT s.g_key, s.SeriesInstanceUID, i::BIGINT AS SegmentNumber, seg.SegmentedPropertyType_CodeMeanings[i] AS label,
      seg.SegmentedPropertyCategory_CodeMeanings[least(i, len(seg.SegmentedPropertyCategory_CodeMeanings))] AS category,
      seg.AnatomicRegion_CodeMeanings[1] AS region,
      string_split(seg.AlgorithmType, ',')[1] AS algorithm_type, seg.AlgorithmName AS algorithm_name, seg.SegmentationType
    FROM t_series s JOIN t_seg_index seg USING (SeriesInstanceUID),
      unnest(range(1, len(seg.SegmentedPropertyType_CodeMeanings) + 1)) AS r(i)`);
  const segItem = `{'SegmentNumber': SegmentNumber, 'SegmentLabel': label, 'SegmentAlgorithmType': algorithm_type,
      'SegmentAlgorithmName': CASE WHEN algorithm_name IS NULL THEN []::VARCHAR[] ELSE [algorithm_name] END,
      'SegmentedPropertyCategoryCodeSequence': [${codeOf('category', 'SCT', CATEGORY_CODES)}],
      'SegmentedPropertyTypeCodeSequence': [${codeOf('label')}],
      'AnatomicRegionSequence': CASE WHEN region IS NULL THEN [] ELSE [${codeOf('region')}] END,
      'TrackingID': label || ' ' || SegmentNumber, 'TrackingUID': uid('highdicom', '', '', 7, g_key % 100000000 * 1000 + SegmentNumber, hash(g_key, SegmentNumber))}`;
  await ctx.run(`CREATE OR REPLACE TEMP TABLE fm_segseq AS
    SELECT g_key, list(${segItem} ORDER BY SegmentNumber) AS SegmentSequence FROM fm_segments GROUP BY g_key`);
  // The series a derived object refers to: a segmentation's segmented series, a report's source series.
  await ctx.run(`CREATE OR REPLACE TEMP TABLE fm_refs AS
    SELECT d.g_key, r.SeriesInstanceUID AS ref_uid, r.SOPClassUID AS ref_class,
      uid(r.g_uid_style, r.g_c4a, r.g_c4b, 3, r.g_inst_offset, hash(r.g_key, 0)) AS ref_sop
    FROM t_series d
    LEFT JOIN t_seg_index seg ON seg.SeriesInstanceUID = d.SeriesInstanceUID
    JOIN t_series r ON r.SeriesInstanceUID = seg.segmented_SeriesInstanceUID OR (seg.SeriesInstanceUID IS NULL AND r.g_key = d.g_src_key)
    WHERE d.Modality IN ('SEG', 'SR')`);
  await ctx.run(`CREATE OR REPLACE TEMP TABLE fm_series AS
    SELECT s.g_idx, s.g_key, s.g_uid_style, s.g_c4a, s.g_c4b, s.g_inst_offset, s.g_bytes, s.g_pyramid, s.instanceCount,
      s.collection_id, s.PatientID, s.StudyInstanceUID, uuid4(s.g_skey, 'crdc_study') AS crdc_study_uuid,
      s.SeriesInstanceUID, s.crdc_series_uuid, map_extract_value(${gcsBucketMap()}, s.aws_bucket) AS gcs_bucket, s.aws_bucket,
      s.series_init_idc_version, s.series_revised_idc_version, s.source_DOI, s.analysis_result_id,
      l.url AS license_url, l.long_name AS license_long_name, s.license_short_name,
      c.species AS tcia_species, c.tumor_locations AS tcia_tumorLocation, c.cancer_types AS tcia_cancerType,
      s.SOPClassUID, s.Modality, string_split(s.TransferSyntaxUID, ',') AS ts_list, s.PatientAge, s.PatientSex,
      try_cast(s.StudyDate AS DATE) AS StudyDate, try_cast(s.SeriesDate AS DATE) AS SeriesDate, s.StudyDescription, s.SeriesDescription,
      s.SeriesNumber, s.BodyPartExamined, s.Manufacturer, s.ManufacturerModelName,
      string_split(s.PhotometricInterpretation, ',')[1] AS PhotometricInterpretation,
      coalesce(ct.ImageType, CASE WHEN s.Modality IN ('MR', 'PT') THEN ['ORIGINAL', 'PRIMARY', 'AXIAL'] END) AS ImageType,
      coalesce(ct.Rows, mr.Rows, pt.Rows) AS Rows, coalesce(ct.Columns, mr.Columns, pt.Columns) AS Columns,
      coalesce(ct.PixelSpacing_row_mm, mr.PixelSpacing_row_mm, pt.PixelSpacing_row_mm) AS ps_row,
      coalesce(ct.PixelSpacing_col_mm, mr.PixelSpacing_col_mm, pt.PixelSpacing_col_mm) AS ps_col,
      coalesce(ct.SliceThickness, mr.SliceThickness, pt.SliceThickness)::DOUBLE AS thickness,
      -- Slices overlap a little in some CT reconstructions; most are contiguous.
      coalesce(ct.SliceThickness, mr.SliceThickness, pt.SliceThickness)::DOUBLE * CASE WHEN u(s.g_key, 'fm:ovl') < 0.15 THEN 0.8 ELSE 1.0 END AS spacing,
      round(-400 + 300 * u(s.g_key, 'fm:z0'), 2) AS z0,
      ct.KVP::VARCHAR AS KVP, ct.ConvolutionKernel,
      CASE WHEN s.Modality IN ('CT', 'MR', 'PT', 'SEG') OR s.Modality LIKE 'RT%' THEN uid(s.g_uid_style, s.g_c4a, s.g_c4b, 6, s.g_idx, s.g_key) END AS FrameOfReferenceUID,
      seg.SegmentationType, sq.SegmentSequence,
      CASE WHEN rf.ref_uid IS NOT NULL THEN [{'SeriesInstanceUID': rf.ref_uid, 'ReferencedInstanceSequence': [{'ReferencedSOPClassUID': rf.ref_class, 'ReferencedSOPInstanceUID': rf.ref_sop}]}] END AS ReferencedSeriesSequence,
      CASE WHEN s.Modality = 'SR' AND s.g_src_key IS NOT NULL THEN [{'MappingResource': 'DCMR', 'TemplateIdentifier': '1500'}] END AS ContentTemplateSequence
    FROM t_series s
    JOIN coll c ON c.idx = s.g_coll_idx
    LEFT JOIN lic l ON l.license_short_name = s.license_short_name
    LEFT JOIN t_ct_index ct ON ct.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN t_mr_index mr ON mr.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN t_pt_index pt ON pt.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN t_seg_index seg ON seg.SeriesInstanceUID = s.SeriesInstanceUID
    LEFT JOIN fm_segseq sq ON sq.g_key = s.g_key
    LEFT JOIN fm_refs rf ON rf.g_key = s.g_key
    ORDER BY s.g_idx`);
}
