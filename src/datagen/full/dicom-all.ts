// dicom_all: the series facts (series-facts.ts) expanded to one row per
// instance, instanceCount rows per series, with the same SOPInstanceUID,
// crdc_instance_uuid and instance_size as the /v2 instance table (the sizes of
// a series add up to its series_size_MB), slices stacked along z from z0 by
// the spacing, and the column types of FULL_TABLES.

import { FULL_TABLE_BY_NAME } from '../../core/registry/full-metadata.ts';
import { INSTANCE_UUID, SOP_UID } from './series-facts.ts';

/** Values with a decimal point as DICOM DS strings write them (no trailing zeros). */
const ds = (x: string) => `CASE WHEN ${x} IS NULL THEN NULL ELSE regexp_replace(printf('%.6f', ${x}), '\\.?0+$', '') END`;

const SLICED = `Modality IN ('CT', 'MR', 'PT')`;

const EXPR: Record<string, string> = {
  crdc_instance_uuid: INSTANCE_UUID('g_key', 'j'),
  SOPInstanceUID: SOP_UID('g_key', 'j'),
  // Folder URLs as the index writes series_aws_url.
  series_gcs_url: `'gs://' || gcs_bucket || '/' || crdc_series_uuid || '/*'`,
  series_aws_url: `'s3://' || aws_bucket || '/' || crdc_series_uuid || '/*'`,
  gcs_url: `'gs://' || gcs_bucket || '/' || crdc_series_uuid || '/' || ${INSTANCE_UUID('g_key', 'j')} || '.dcm'`,
  aws_url: `'s3://' || aws_bucket || '/' || crdc_series_uuid || '/' || ${INSTANCE_UUID('g_key', 'j')} || '.dcm'`,
  instance_size: 'inst_size(g_key, j, instanceCount, g_bytes, g_pyramid)',
  instance_hash: `md5(${INSTANCE_UUID('g_key', 'j')})`,
  // A revised series keeps most of its instances from the first version.
  instance_init_idc_version: `CASE WHEN u2(g_key, j, 'fm:irev') < 0.8 THEN series_init_idc_version ELSE series_revised_idc_version END`,
  instance_revised_idc_version: 'series_revised_idc_version',
  access: `'Public'`,
  TransferSyntaxUID: 'ts_list[1 + (j % len(ts_list))::INTEGER]',
  InstanceNumber: '(j + 1)::VARCHAR',
  NumberOfFrames: `CASE WHEN Modality = 'SEG' THEN (len(SegmentSequence) * (10 + ui(g_key, 'fm:nf', 0, 190)))::VARCHAR
    WHEN Modality = 'SM' THEN (1 + floor(pow(0.25, j) * g_bytes / 200000 / pyr_w(instanceCount)))::BIGINT::VARCHAR END`,
  PixelSpacing: `CASE WHEN ps_row IS NOT NULL THEN [${ds('ps_row')}, ${ds('ps_col')}] END`,
  SliceThickness: ds('thickness'),
  SpacingBetweenSlices: `CASE WHEN Modality = 'MR' THEN ${ds('spacing')} END`,
  ImagePositionPatient: `CASE WHEN ${SLICED} AND ps_col IS NOT NULL THEN [${ds('round(-ps_col * Columns / 2, 3)')}, ${ds('round(-ps_row * Rows / 2, 3)')}, ${ds('round(z0 + j * spacing, 3)')}] END`,
  ImageOrientationPatient: `CASE WHEN ${SLICED} THEN ['1', '0', '0', '0', '1', '0'] END`,
  SliceLocation: `CASE WHEN ${SLICED} AND spacing IS NOT NULL THEN ${ds('round(z0 + j * spacing, 3)')} END`,
};

/** The SELECT list of dicom_all over fm_series expanded by j. */
export function dicomAllSelect(): string {
  return FULL_TABLE_BY_NAME.get('dicom_all')!.columns.map((c) => `(${EXPR[c.name] ?? `"${c.name}"`})::${c.duckdb} AS "${c.name}"`).join(',\n  ');
}

/** The rows of dicom_all, series by series in generation order (run it on one thread to keep that order). */
export function dicomAllQuery(): string {
  return `SELECT ${dicomAllSelect()} FROM (SELECT *, unnest(range(instanceCount)) AS j FROM fm_series)`;
}
