// Tables behind the /v2 interface (schema v2). The instance-level image table
// dicom_pivot (59 fields, one row per instance) is stored normalised, as
// per-series fields (dicom_series) and per-instance fields (dicom_instances),
// and exposed as a view: per-series values are not repeated millions of times
// and instance URLs are derived, which keeps builds fast and the file small.

/** The 59 dicom_pivot columns, in the order of the v2 field list, with their DuckDB types. */
export const PIVOT_COLUMNS: [string, string][] = [
  ['analysis_results_id', 'VARCHAR'], ['AnatomicRegionSequence', 'VARCHAR'], ['Apparent_Diffusion_Coefficient', 'DOUBLE'], ['aws_bucket', 'VARCHAR'],
  ['aws_url', 'VARCHAR'], ['BodyPartExamined', 'VARCHAR'], ['Calcification', 'VARCHAR'], ['CancerType', 'VARCHAR'], ['collection_id', 'VARCHAR'],
  ['crdc_instance_uuid', 'VARCHAR'], ['crdc_series_uuid', 'VARCHAR'], ['crdc_study_uuid', 'VARCHAR'], ['Diameter', 'DOUBLE'],
  ['FrameOfReferenceUID', 'VARCHAR'], ['gcs_bucket', 'VARCHAR'], ['gcs_url', 'VARCHAR'], ['illuminationType', 'VARCHAR'], ['instance_size', 'BIGINT'],
  ['Internal_structure', 'VARCHAR'], ['license_short_name', 'VARCHAR'], ['Lobular_Pattern', 'VARCHAR'], ['Malignancy', 'VARCHAR'],
  ['Manufacturer', 'VARCHAR'], ['ManufacturerModelName', 'VARCHAR'], ['Margin', 'VARCHAR'], ['max_TotalPixelMatrixColumns', 'BIGINT'],
  ['max_TotalPixelMatrixRows', 'BIGINT'], ['min_PixelSpacing', 'DOUBLE'], ['Modality', 'VARCHAR'], ['ObjectiveLensPower', 'BIGINT'],
  ['PatientID', 'VARCHAR'], ['primaryAnatomicStructure', 'VARCHAR'], ['Program', 'VARCHAR'], ['SamplesPerPixel', 'BIGINT'],
  ['SegmentAlgorithmName', 'VARCHAR'], ['SegmentAlgorithmType', 'VARCHAR'], ['SegmentedPropertyCategoryCodeSequence', 'VARCHAR'],
  ['SegmentedPropertyTypeCodeSequence', 'VARCHAR'], ['SegmentNumber', 'BIGINT'], ['SeriesDescription', 'VARCHAR'], ['SeriesInstanceUID', 'VARCHAR'],
  ['SeriesNumber', 'VARCHAR'], ['SliceThickness', 'DOUBLE'], ['SOPClassUID', 'VARCHAR'], ['SOPInstanceUID', 'VARCHAR'], ['source_DOI', 'VARCHAR'],
  ['Sphericity', 'VARCHAR'], ['Sphericity_quant', 'DOUBLE'], ['Spiculation', 'VARCHAR'], ['StudyDate', 'VARCHAR'], ['StudyDescription', 'VARCHAR'],
  ['StudyInstanceUID', 'VARCHAR'], ['Subtlety_score', 'VARCHAR'], ['Surface_area_of_mesh', 'DOUBLE'], ['tcia_species', 'VARCHAR'],
  ['tcia_tumorLocation', 'VARCHAR'], ['Texture', 'VARCHAR'], ['Volume', 'DOUBLE'], ['Volume_of_Mesh', 'DOUBLE'],
];

/** Columns stored per instance (dicom_instances); SeriesInstanceUID is the join key. */
export const INSTANCE_COLUMNS = ['SeriesInstanceUID', 'SOPInstanceUID', 'crdc_instance_uuid', 'instance_size'];

/** Values that vary within a series (all other dicom_pivot columns are per series). */
export const PER_INSTANCE_COLUMNS = INSTANCE_COLUMNS.filter((c) => c !== 'SeriesInstanceUID');

/** Columns derived in the view from the others. */
const DERIVED: Record<string, string> = {
  aws_url: `'s3://' || s.aws_bucket || '/' || s.crdc_series_uuid || '/' || i.crdc_instance_uuid || '.dcm'`,
  gcs_url: `'gs://' || s.gcs_bucket || '/' || s.crdc_series_uuid || '/' || i.crdc_instance_uuid || '.dcm'`,
};

/** Columns stored per series (dicom_series). */
export const SERIES_COLUMNS = PIVOT_COLUMNS.map(([n]) => n).filter((n) => !(n in DERIVED) && (n === 'SeriesInstanceUID' || !INSTANCE_COLUMNS.includes(n)));

/** SELECT producing dicom_pivot from the two stored tables (given as SQL relations). */
export function pivotSelect(series: string, instances: string): string {
  const cols = PIVOT_COLUMNS.map(([n]) => (DERIVED[n] ? `${DERIVED[n]} AS "${n}"` : INSTANCE_COLUMNS.includes(n) ? `i."${n}"` : `s."${n}"`));
  return `SELECT ${cols.join(', ')} FROM ${instances} i JOIN ${series} s ON s."SeriesInstanceUID" = i."SeriesInstanceUID"`;
}
