// The table registry: every table the service knows, its columns and their
// types. One source of truth for the generator, the loader, the SQL guard's
// catalog and the /v3/tables endpoints.

export type BqType = 'STRING' | 'INTEGER' | 'FLOAT' | 'BOOLEAN' | 'DATE' | 'NUMERIC' | 'RECORD';
export type Mode = 'NULLABLE' | 'REPEATED';

export interface ColumnDef {
  name: string;
  /** BigQuery-style type name, as the public schema JSON files spell it. */
  type: BqType;
  mode: Mode;
  description: string;
  /** DuckDB type used when building (lists and structs spelled out). */
  duckdb: string;
  /** Dropped by newer releases: not filled with NULLs when a release lacks it. */
  optional?: boolean;
}

export interface TableDef {
  /** Name in SQL (`index` for idc_index). */
  name: string;
  /** File stem in the public release layout (`idc_index` for `index`). */
  file: string;
  description: string;
  columns: ColumnDef[];
  /** Column that joins to `index` (documentation for callers). */
  joinKey?: string;
}

const DUCK: Record<Exclude<BqType, 'RECORD'>, string> = {
  STRING: 'VARCHAR',
  INTEGER: 'BIGINT',
  FLOAT: 'DOUBLE',
  BOOLEAN: 'BOOLEAN',
  DATE: 'DATE',
  // BigQuery NUMERIC, as its Parquet export writes it.
  NUMERIC: 'DECIMAL(38,9)',
};

export function col(name: string, type: Exclude<BqType, 'RECORD'>, description: string, mode: Mode = 'NULLABLE'): ColumnDef {
  const base = DUCK[type];
  return { name, type, mode, description, duckdb: mode === 'REPEATED' ? `${base}[]` : base };
}
const str = (n: string, d: string) => col(n, 'STRING', d);
const int = (n: string, d: string) => col(n, 'INTEGER', d);
const flt = (n: string, d: string) => col(n, 'FLOAT', d);
const bool = (n: string, d: string) => col(n, 'BOOLEAN', d);
const strs = (n: string, d: string) => col(n, 'STRING', d, 'REPEATED');
const flts = (n: string, d: string) => col(n, 'FLOAT', d, 'REPEATED');
export function record(name: string, duckdb: string, description: string, mode: Mode = 'REPEATED'): ColumnDef {
  return { name, type: 'RECORD', mode, description, duckdb: mode === 'REPEATED' ? `${duckdb}[]` : duckdb };
}

export const LICENSE_STRUCT = 'STRUCT(license_url VARCHAR, license_long_name VARCHAR, license_short_name VARCHAR)';
export const SOURCE_STRUCT =
  `STRUCT(source_id VARCHAR, source_title VARCHAR, source_type VARCHAR, source_doi VARCHAR, source_url VARCHAR, ` +
  `modalities VARCHAR, license ${LICENSE_STRUCT}, citation VARCHAR, "Access" VARCHAR, ImageTypes VARCHAR)`;
export const CODED_VALUE_STRUCT = 'STRUCT(option_code VARCHAR, option_description VARCHAR)';

const SM_PREP = [
  strs('embeddingMedium_CodeMeaning', 'Embedding medium of the specimen (code meanings).'),
  strs('embeddingMedium_code_designator_value_str', 'Embedding medium codes as "<scheme>:<value>".'),
  strs('tissueFixative_CodeMeaning', 'Tissue fixative (code meanings).'),
  strs('tissueFixative_code_designator_value_str', 'Tissue fixative codes as "<scheme>:<value>".'),
  strs('staining_usingSubstance_CodeMeaning', 'Staining substances (code meanings), e.g. hematoxylin and eosin.'),
  strs('staining_usingSubstance_code_designator_value_str', 'Staining substance codes as "<scheme>:<value>".'),
];

export const INDEX_COLUMNS: ColumnDef[] = [
  str('collection_id', 'Identifier of the collection the series belongs to (lowercase, underscores).'),
  str('analysis_result_id', 'Identifier of the analysis result the series belongs to; empty for original data.'),
  str('PatientID', 'DICOM PatientID; unique only within a collection.'),
  str('SeriesInstanceUID', 'DICOM SeriesInstanceUID; one row per series.'),
  str('StudyInstanceUID', 'DICOM StudyInstanceUID.'),
  str('source_DOI', 'DOI of the dataset the series comes from (bare DOI, no https://doi.org/ prefix).'),
  str('PatientAge', 'DICOM PatientAge (age string such as 065Y).'),
  str('PatientSex', 'DICOM PatientSex: M, F or O.'),
  str('StudyDate', 'De-identified study date, YYYY-MM-DD.'),
  str('StudyDescription', 'DICOM StudyDescription.'),
  str('BodyPartExamined', 'Body part examined (curated). For derived SEG/RTSTRUCT series this is the body part of the source acquisition.'),
  str('Modality', 'DICOM Modality of the series.'),
  str('SOPClassUID', 'DICOM SOPClassUID of the instances of the series.'),
  str('sop_class_name', 'Human-readable name of the SOP class (e.g. "CT Image Storage").'),
  str('TransferSyntaxUID', 'Transfer syntaxes used by the instances, comma-separated when mixed.'),
  str('transfer_syntax_name', 'Names of the transfer syntaxes, comma-separated when mixed.'),
  str('PhotometricInterpretation', 'Photometric interpretations used, comma-separated when mixed; empty for non-image objects.'),
  str('PixelRepresentation', 'Pixel representation ("0" unsigned, "1" signed, "0,1" mixed); empty for non-image objects.'),
  str('Manufacturer', 'Equipment manufacturer.'),
  str('ManufacturerModelName', 'Equipment model name.'),
  str('SeriesDate', 'De-identified series date, YYYY-MM-DD.'),
  str('SeriesDescription', 'DICOM SeriesDescription.'),
  str('SeriesNumber', 'DICOM SeriesNumber (kept as a string).'),
  int('instanceCount', 'Number of instances (files) in the series.'),
  str('license_short_name', 'Short name of the license of the series (e.g. CC BY 4.0).'),
  int('series_init_idc_version', 'Data release in which the series first appeared.'),
  int('series_revised_idc_version', 'Data release of the current revision of the series.'),
  str('aws_bucket', 'Bucket of the series in the primary store (cloud1).'),
  str('crdc_series_uuid', 'UUID of this version of the series; the folder name in the buckets.'),
  str('series_aws_url', 'Object-store URL of the series in the primary store: s3://<bucket>/<crdc_series_uuid>/* (alias of series_cloud1_url).'),
  flt('series_size_MB', 'Total size of the series in decimal megabytes (sum of instance sizes / 1e6).'),
  str('series_cloud1_url', 'Object-store URL of the series in the primary store (cloud1): s3://<bucket>/<crdc_series_uuid>/*.'),
];

export const TABLES: TableDef[] = [
  {
    name: 'index',
    file: 'idc_index',
    description:
      'Main table: one row per DICOM series, with collection, patient, study and series identifiers, acquisition attributes, license, size and object-store URL.',
    columns: INDEX_COLUMNS,
    joinKey: 'SeriesInstanceUID',
  },
  {
    name: 'collections_index',
    file: 'collections_index',
    description: 'One row per original collection: curated metadata, subjects, sources with DOIs and licenses.',
    joinKey: 'collection_id',
    columns: [
      str('collection_name', 'Display name of the collection.'),
      str('collection_id', 'Identifier of the collection; joins to index.collection_id.'),
      str('cancer_types', 'Cancer types covered (free text).'),
      str('tumor_locations', 'Tumor locations covered (free text).'),
      int('subjects', 'Number of subjects (patients) in the collection.'),
      str('species', 'Species of the subjects.'),
      record('sources', SOURCE_STRUCT, 'Sources of the collection: DOI, URL, license, citation, modalities.'),
      str('supporting_data', 'Kinds of non-imaging data available (e.g. Clinical, Genomics).'),
      str('program_id', 'Program the collection belongs to (e.g. TCGA, CPTAC, Community).'),
      str('status', 'Curation status (Complete or Ongoing).'),
      str('updated', 'Date of the last update, YYYY-MM-DD.'),
      str('description', 'Description of the collection (HTML).'),
    ],
  },
  {
    name: 'analysis_results_index',
    file: 'analysis_results_index',
    description: 'One row per analysis result (derived dataset: segmentations, annotations, measurements).',
    joinKey: 'analysis_result_id',
    columns: [
      str('analysis_result_id', 'Identifier of the analysis result; joins to index.analysis_result_id.'),
      str('analysis_result_title', 'Title of the analysis result.'),
      str('source_DOI', 'DOI of the analysis result.'),
      str('source_url', 'URL of the analysis result.'),
      int('subjects', 'Number of subjects covered.'),
      str('collections', 'Collections analysed, comma-separated collection ids.'),
      str('modalities', 'Modalities of the derived series, comma-separated.'),
      str('updated', 'Date of the last update, YYYY-MM-DD.'),
      str('license_url', 'URL of the license.'),
      str('license_long_name', 'Full name of the license.'),
      str('license_short_name', 'Short name of the license.'),
      str('description', 'Description of the analysis result.'),
      str('citation', 'Recommended citation.'),
    ],
  },
  {
    name: 'version_metadata_index',
    file: 'version_metadata_index',
    description: 'One row per data release.',
    columns: [
      int('idc_version', 'Release number; joins to index.series_init_idc_version / series_revised_idc_version.'),
      str('version_timestamp', 'Creation timestamp of the release.'),
    ],
  },
  {
    name: 'prior_versions_index',
    file: 'prior_versions_index',
    description: 'Series versions that existed in earlier releases but are not in the current one (removed or revised series).',
    columns: [
      str('collection_id', 'Collection of the series.'),
      str('PatientID', 'DICOM PatientID.'),
      str('SeriesInstanceUID', 'DICOM SeriesInstanceUID.'),
      str('StudyInstanceUID', 'DICOM StudyInstanceUID.'),
      str('Modality', 'DICOM Modality.'),
      str('gcs_bucket', 'Bucket of the series version in the second store (cloud2).'),
      str('crdc_series_uuid', 'UUID of that series version.'),
      flt('series_size_MB', 'Size of that series version in MB.'),
      str('series_aws_url', 'URL of that series version in the primary store.'),
      { ...str('gcs_bucket_1', 'Duplicate of gcs_bucket (releases before v25 only).'), optional: true },
      str('aws_bucket', 'Bucket of that series version in the primary store.'),
      int('min_idc_version', 'First release that contained this series version.'),
      int('max_idc_version', 'Last release that contained this series version.'),
    ],
  },
  {
    name: 'sm_index',
    file: 'sm_index',
    description: 'One row per slide-microscopy (SM) series: specimen preparation, staining, resolution, anatomy.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      str('ContainerIdentifier', 'Slide identifier.'),
      ...SM_PREP,
      flt('min_PixelSpacing_2sf', 'Pixel spacing at the highest resolution in mm, 2 significant figures.'),
      int('max_TotalPixelMatrixColumns', 'Width of the slide image at the highest resolution, in pixels.'),
      int('max_TotalPixelMatrixRows', 'Height of the slide image at the highest resolution, in pixels.'),
      int('ObjectiveLensPower', 'Objective lens power (e.g. 20 or 40).'),
      str('primaryAnatomicStructure_code_designator_value_str', 'Primary anatomic structure code as "<scheme>:<value>".'),
      str('primaryAnatomicStructure_CodeMeaning', 'Primary anatomic structure (e.g. Lung).'),
      str('primaryAnatomicStructureModifier_code_designator_value_str', 'Anatomic structure modifier code.'),
      str('primaryAnatomicStructureModifier_CodeMeaning', 'Anatomic structure modifier (e.g. Neoplasm, Primary; Normal).'),
      str('illuminationType_code_designator_value_str', 'Illumination type code.'),
      str('illuminationType_CodeMeaning', 'Illumination type (e.g. Brightfield illumination).'),
      str('admittingDiagnosis_code_designator_value_str', 'Admitting diagnosis code.'),
      str('admittingDiagnosis_CodeMeaning', 'Admitting diagnosis.'),
    ],
  },
  {
    name: 'sm_instance_index',
    file: 'sm_instance_index',
    description: 'One row per slide-microscopy instance (pyramid level, label, overview, thumbnail).',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SOPInstanceUID', 'DICOM SOPInstanceUID.'),
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      ...SM_PREP,
      flt('PixelSpacing_0', 'Pixel spacing of this instance in mm.'),
      strs('ImageType', 'DICOM ImageType values (e.g. ORIGINAL, PRIMARY, VOLUME, NONE).'),
      str('TransferSyntaxUID', 'Transfer syntax of the instance.'),
      int('instance_size', 'Size of the instance file in bytes.'),
      int('TotalPixelMatrixColumns', 'Width of this instance in pixels.'),
      int('TotalPixelMatrixRows', 'Height of this instance in pixels.'),
      str('crdc_instance_uuid', 'UUID of the instance; the file name stem in the buckets.'),
    ],
  },
  {
    name: 'seg_index',
    file: 'seg_index',
    description:
      'One row per DICOM Segmentation (SEG) series: what was segmented (SegmentedPropertyType_CodeMeanings) and the image series it was derived from (segmented_SeriesInstanceUID).',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      str('SegmentationType', 'BINARY, FRACTIONAL or LABELMAP.'),
      int('total_segments', 'Number of segments.'),
      str('AlgorithmType', 'Segmentation algorithm types, comma-separated (AUTOMATIC, MANUAL, SEMIAUTOMATIC).'),
      str('AlgorithmName', 'Segmentation algorithm names, comma-separated.'),
      str('segmented_SeriesInstanceUID', 'The image series that was segmented; joins to index.SeriesInstanceUID.'),
      strs('SegmentedPropertyCategory_CodeMeanings', 'Categories of the segmented properties (e.g. Anatomical Structure).'),
      strs('SegmentedPropertyType_CodeMeanings', 'What was segmented (e.g. Liver, Kidney, Lung nodule). Match with list_contains().'),
      strs('AnatomicRegion_CodeMeanings', 'Anatomic regions of the segments.'),
    ],
  },
  {
    name: 'ann_index',
    file: 'ann_index',
    description: 'One row per microscopy bulk annotation (ANN) series and the slide series it annotates.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      str('AnnotationCoordinateType', '2D or 3D.'),
      str('referenced_SeriesInstanceUID', 'The annotated slide series; joins to index.SeriesInstanceUID.'),
    ],
  },
  {
    name: 'ann_group_index',
    file: 'ann_group_index',
    description: 'One row per annotation group of an ANN series (what was annotated, how many annotations).',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to ann_index and index.'),
      int('AnnotationGroupNumber', 'Group number within the series.'),
      str('AnnotationGroupUID', 'DICOM UID of the group.'),
      str('AnnotationGroupLabel', 'Label of the group.'),
      str('AnnotationGroupGenerationType', 'MANUAL, AUTOMATIC or SEMIAUTOMATIC.'),
      int('NumberOfAnnotations', 'Number of annotations in the group.'),
      str('GraphicType', 'POINT, POLYLINE, POLYGON, ELLIPSE or RECTANGLE.'),
      str('AnnotationPropertyCategory_code', 'Category code as "<scheme>:<value>".'),
      str('AnnotationPropertyCategory_CodeMeaning', 'Category of the annotated property.'),
      str('AnnotationPropertyType_code', 'Type code as "<scheme>:<value>".'),
      str('AnnotationPropertyType_CodeMeaning', 'Annotated property (e.g. Nucleus).'),
      str('AlgorithmName', 'Algorithm that generated the annotations, if automatic.'),
    ],
  },
  {
    name: 'rtstruct_index',
    file: 'rtstruct_index',
    description: 'One row per RT Structure Set (RTSTRUCT) series: ROI names and types, and the referenced image series.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      int('total_rois', 'Number of regions of interest.'),
      strs('ROINames', 'ROI names, sorted (e.g. GTV, Heart, Lung_L).'),
      strs('ROIGenerationAlgorithms', 'ROI generation algorithms (AUTOMATIC, MANUAL, SEMIAUTOMATIC).'),
      strs('RTROIInterpretedTypes', 'RT ROI interpreted types (GTV, CTV, PTV, ORGAN, EXTERNAL, ...).'),
      str('referenced_SeriesInstanceUID', 'The image series the structures were drawn on; joins to index.SeriesInstanceUID.'),
    ],
  },
  {
    name: 'ct_index',
    file: 'ct_index',
    description: 'One row per CT image series: acquisition and reconstruction parameters.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      strs('ImageType', 'DICOM ImageType values.'),
      flt('PixelSpacing_row_mm', 'Pixel spacing between rows, mm.'),
      flt('PixelSpacing_col_mm', 'Pixel spacing between columns, mm.'),
      int('Rows', 'Image rows.'),
      int('Columns', 'Image columns.'),
      flt('SliceThickness', 'Slice thickness, mm.'),
      flt('KVP', 'Peak kilovoltage.'),
      strs('ScanOptions', 'Scan options (e.g. HELICAL MODE).'),
      strs('ConvolutionKernel', 'Reconstruction kernels.'),
      flt('GantryDetectorTilt', 'Gantry tilt, degrees.'),
      flt('XRayTubeCurrent_min', 'Minimum tube current, mA.'),
      flt('XRayTubeCurrent_max', 'Maximum tube current, mA.'),
      str('FilterType', 'X-ray filter type.'),
      flt('Exposure_min', 'Minimum exposure, mAs.'),
      flt('Exposure_max', 'Maximum exposure, mAs.'),
      flt('ExposureTime_min', 'Minimum exposure time, ms.'),
      flt('ExposureTime_max', 'Maximum exposure time, ms.'),
      flt('DataCollectionDiameter', 'Data collection diameter, mm.'),
      flt('ReconstructionDiameter', 'Reconstruction diameter, mm.'),
      flt('SpiralPitchFactor', 'Spiral pitch factor; empty for axial scans.'),
    ],
  },
  {
    name: 'mr_index',
    file: 'mr_index',
    description: 'One row per MR image series: field strength, sequence, timing and geometry parameters.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      flt('MagneticFieldStrength', 'Field strength, tesla.'),
      strs('ScanningSequence', 'Scanning sequences (SE, GR, IR, EP).'),
      strs('SequenceVariant', 'Sequence variants.'),
      str('MRAcquisitionType', '2D or 3D.'),
      flts('EchoTime', 'Distinct echo times, ms.'),
      flt('RepetitionTime', 'Repetition time, ms.'),
      int('EchoTrainLength', 'Echo train length.'),
      flt('FlipAngle', 'Flip angle, degrees.'),
      flt('PixelBandwidth', 'Pixel bandwidth, Hz.'),
      flt('ImagingFrequency', 'Imaging frequency, MHz.'),
      str('ImagedNucleus', 'Imaged nucleus (e.g. 1H).'),
      flt('PixelSpacing_row_mm', 'Pixel spacing between rows, mm.'),
      flt('PixelSpacing_col_mm', 'Pixel spacing between columns, mm.'),
      int('Rows', 'Image rows.'),
      int('Columns', 'Image columns.'),
      flt('SliceThickness', 'Slice thickness, mm.'),
      flt('InversionTime', 'Inversion time, ms.'),
      str('ReceiveCoilName', 'Receive coil name.'),
      str('SequenceName', 'Sequence name.'),
      flts('DiffusionBValue', 'Diffusion b-values; empty for non-diffusion series.'),
      int('NumberOfTemporalPositions', 'Number of temporal positions.'),
    ],
  },
  {
    name: 'pt_index',
    file: 'pt_index',
    description: 'One row per PET image series: radiopharmaceutical, dose, corrections and geometry.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      str('SeriesType', 'Series type (e.g. WHOLE BODY/IMAGE).'),
      str('Units', 'Pixel value units (BQML, CNTS, ...).'),
      str('DecayCorrection', 'Decay correction (START, ADMIN, NONE).'),
      strs('CorrectedImage', 'Corrections applied (ATTN, SCAT, DECY, RAN, ...).'),
      str('RandomsCorrectionMethod', 'Randoms correction method.'),
      str('ReconstructionMethod', 'Reconstruction method (e.g. OSEM).'),
      flts('ActualFrameDuration', 'Frame durations, ms.'),
      str('ScatterCorrectionMethod', 'Scatter correction method.'),
      str('AttenuationCorrectionMethod', 'Attenuation correction method.'),
      str('RadionuclideCodeMeaning', 'Radionuclide (e.g. Fluorine F18).'),
      flt('RadionuclideTotalDose', 'Injected dose, Bq.'),
      str('RadiopharmaceuticalStartTime', 'Injection time, HH:MM:SS.FFFFFF.'),
      str('Radiopharmaceutical', 'Radiopharmaceutical (e.g. Fluorodeoxyglucose F^18^).'),
      flt('PixelSpacing_row_mm', 'Pixel spacing between rows, mm.'),
      flt('PixelSpacing_col_mm', 'Pixel spacing between columns, mm.'),
      int('Rows', 'Image rows.'),
      int('Columns', 'Image columns.'),
      flt('SliceThickness', 'Slice thickness, mm.'),
      int('NumberOfSlices', 'Number of slices.'),
      int('NumberOfTimeSlices', 'Number of time slices.'),
    ],
  },
  {
    name: 'contrast_index',
    file: 'contrast_index',
    description: 'One row per CT/MR/PT/XA/RF series that records a contrast agent.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      strs('ContrastBolusAgent', 'Contrast agents (free text).'),
      strs('ContrastBolusIngredient', 'Contrast ingredients (e.g. IODINE, GADOLINIUM).'),
      strs('ContrastBolusRoute', 'Administration routes (e.g. IV, ORAL).'),
    ],
  },
  {
    name: 'volume_geometry_index',
    file: 'volume_geometry_index',
    description: 'One row per single-frame CT/MR/PT series: checks of whether the slices form a regular 3D volume.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('SeriesInstanceUID', 'Joins to index.SeriesInstanceUID.'),
      bool('single_orientation', 'All slices share one orientation.'),
      bool('orthogonal_orientation', 'Orientation is axial, sagittal or coronal.'),
      bool('unique_slice_positions', 'No two slices share a position.'),
      bool('consistent_in_plane_row', 'Row direction is consistent.'),
      bool('consistent_in_plane_col', 'Column direction is consistent.'),
      bool('consistent_pixel_spacing', 'Pixel spacing is consistent.'),
      bool('consistent_image_dimensions', 'Image dimensions are consistent.'),
      bool('uniform_slice_spacing', 'Slices are evenly spaced.'),
      flt('obliquity_degrees', 'Obliquity of the volume, degrees.'),
      bool('regularly_spaced_3d_volume', 'All checks pass: the series is a regular 3D volume.'),
    ],
  },
  {
    name: 'clinical_index',
    file: 'clinical_index',
    description:
      'Dictionary (not data) of the per-collection clinical tables: one row per collection, clinical table and column, with a human-readable label and the meaning of coded values. The tables themselves are queried as clinical.<short_table_name> (list them with GET /v3/clinical/tables, or the agent tool list_clinical_tables) and join to index on dicom_patient_id = index.PatientID.',
    joinKey: 'collection_id',
    columns: [
      str('collection_id', 'Collection of the clinical table; joins to index.collection_id.'),
      str('table_name', 'Fully qualified name of the clinical table in the public release.'),
      str('short_table_name', 'Name of the clinical table; query it as clinical.<short_table_name>.'),
      str('column', 'Column name in the clinical table.'),
      str('column_label', 'Human-readable label of the column.'),
      record('values', CODED_VALUE_STRUCT, 'Coded values of the column (option_code, option_description); empty when the column is not coded.'),
    ],
  },
];

/** Tables behind the /v2 interface; kept in their own schema so /v3 lists stay clean. */
export const V2_SCHEMA = 'v2';

export const TABLE_BY_NAME = new Map(TABLES.map((t) => [t.name, t]));

/** Type as reported to callers: BigQuery-style, with [] for lists. */
export function displayType(c: ColumnDef): string {
  return c.mode === 'REPEATED' ? `${c.type}[]` : c.type;
}

/** Quote an identifier that comes from the registry or the catalog (never from a caller). */
export function qi(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
