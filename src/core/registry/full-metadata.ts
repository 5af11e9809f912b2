// The full metadata of a release: the BigQuery tables IDC exports as Parquet to
// s3://idc-open-metadata/bigquery_export/idc_v<N>/<table>/*.parquet. Only the
// columns IDQS generates and documents are listed (the real dicom_all has one
// column per DICOM attribute present, thousands); names, types and nesting
// follow IDC's BigQuery schemas (the Cloud Healthcare DICOM export: DS and IS
// values are strings, dates are DATE, sequences are repeated records).

import { col, record, type ColumnDef, type TableDef } from './tables.ts';

const str = (n: string, d: string) => col(n, 'STRING', d);
const int = (n: string, d: string) => col(n, 'INTEGER', d);
const strs = (n: string, d: string) => col(n, 'STRING', d, 'REPEATED');
const date = (n: string, d: string) => col(n, 'DATE', d);

/** A coded concept (DICOM code sequence item) as the BigQuery views select it. */
export const CODE = 'STRUCT(CodeValue VARCHAR, CodingSchemeDesignator VARCHAR, CodeMeaning VARCHAR)';
/** A coded concept with its scheme version (finding, findingSite, Units, Value). */
export const CODE_V = 'STRUCT(CodeValue VARCHAR, CodingSchemeDesignator VARCHAR, CodingSchemeVersion VARCHAR, CodeMeaning VARCHAR)';
const code = (n: string, d: string) => record(n, CODE, d, 'NULLABLE');
const codeV = (n: string, d: string) => record(n, CODE_V, d, 'NULLABLE');

export const SEGMENT_ITEM =
  `STRUCT(SegmentNumber BIGINT, SegmentLabel VARCHAR, SegmentAlgorithmType VARCHAR, SegmentAlgorithmName VARCHAR[], ` +
  `SegmentedPropertyCategoryCodeSequence ${CODE}[], SegmentedPropertyTypeCodeSequence ${CODE}[], AnatomicRegionSequence ${CODE}[], TrackingID VARCHAR, TrackingUID VARCHAR)`;
export const REFERENCED_SERIES_ITEM = 'STRUCT(SeriesInstanceUID VARCHAR, ReferencedInstanceSequence STRUCT(ReferencedSOPClassUID VARCHAR, ReferencedSOPInstanceUID VARCHAR)[])';
export const CONTENT_ITEM =
  `STRUCT(RelationshipType VARCHAR, ValueType VARCHAR, ConceptNameCodeSequence ${CODE}[], ` +
  `ContentSequence STRUCT(RelationshipType VARCHAR, ValueType VARCHAR, ConceptNameCodeSequence ${CODE}[], TextValue VARCHAR, UID VARCHAR, ` +
  `ConceptCodeSequence ${CODE_V}[], MeasuredValueSequence STRUCT(NumericValue VARCHAR[], MeasurementUnitsCodeSequence ${CODE_V}[])[])[])`;

const DICOM_ALL: ColumnDef[] = [
  str('collection_id', 'Collection of the instance; joins to index.collection_id.'),
  str('PatientID', 'DICOM PatientID.'),
  str('StudyInstanceUID', 'DICOM StudyInstanceUID.'),
  str('crdc_study_uuid', 'CRDC UUID of this version of the study.'),
  str('SeriesInstanceUID', 'DICOM SeriesInstanceUID; joins to index.SeriesInstanceUID.'),
  str('crdc_series_uuid', 'CRDC UUID of this version of the series (the folder of its files in the buckets).'),
  str('series_gcs_url', 'gs:// URL of the series folder in Google Cloud Storage.'),
  str('series_aws_url', 's3:// URL of the series folder in AWS.'),
  str('SOPInstanceUID', 'DICOM SOPInstanceUID: one row per instance.'),
  str('crdc_instance_uuid', 'CRDC UUID of this version of the instance (its file name, <uuid>.dcm).'),
  str('gcs_url', 'gs:// URL of the instance file in Google Cloud Storage.'),
  str('gcs_bucket', 'Google Cloud Storage bucket of the file.'),
  str('aws_url', 's3:// URL of the instance file in AWS.'),
  str('aws_bucket', 'AWS bucket of the file.'),
  int('instance_size', 'Size of the instance file, bytes.'),
  str('instance_hash', 'MD5 hash of the instance file.'),
  int('series_init_idc_version', 'IDC release in which the series first appeared.'),
  int('series_revised_idc_version', 'IDC release of the current revision of the series.'),
  int('instance_init_idc_version', 'IDC release in which the instance first appeared.'),
  int('instance_revised_idc_version', 'IDC release of the current revision of the instance.'),
  str('Source_DOI', 'DOI of the source of the instance (collection or analysis result).'),
  str('analysis_result_id', 'Analysis result the instance belongs to, if any.'),
  str('license_url', 'URL of the license.'),
  str('license_long_name', 'Full name of the license.'),
  str('license_short_name', 'Short name of the license, e.g. CC BY 4.0.'),
  str('access', 'Access class (Public).'),
  str('tcia_species', 'Species of the collection.'),
  str('tcia_tumorLocation', 'Tumor location of the collection.'),
  str('tcia_cancerType', 'Cancer type of the collection.'),
  str('SOPClassUID', 'DICOM SOPClassUID.'),
  str('Modality', 'DICOM Modality.'),
  str('TransferSyntaxUID', 'Transfer syntax of the file.'),
  str('PatientAge', 'DICOM PatientAge (AS, e.g. 065Y).'),
  str('PatientSex', 'DICOM PatientSex.'),
  date('StudyDate', 'DICOM StudyDate.'),
  date('SeriesDate', 'DICOM SeriesDate.'),
  str('StudyDescription', 'DICOM StudyDescription.'),
  str('SeriesDescription', 'DICOM SeriesDescription.'),
  str('SeriesNumber', 'DICOM SeriesNumber (IS, a string).'),
  str('InstanceNumber', 'DICOM InstanceNumber (IS, a string).'),
  str('BodyPartExamined', 'DICOM BodyPartExamined as recorded.'),
  str('Manufacturer', 'DICOM Manufacturer.'),
  str('ManufacturerModelName', 'DICOM ManufacturerModelName.'),
  strs('ImageType', 'DICOM ImageType values.'),
  str('PhotometricInterpretation', 'DICOM PhotometricInterpretation.'),
  int('Rows', 'DICOM Rows.'),
  int('Columns', 'DICOM Columns.'),
  str('NumberOfFrames', 'DICOM NumberOfFrames (IS, a string); multi-frame objects only.'),
  strs('PixelSpacing', 'DICOM PixelSpacing (DS values as strings, mm): row, column.'),
  str('SliceThickness', 'DICOM SliceThickness (DS, a string, mm); cast it to a number to compare.'),
  str('SpacingBetweenSlices', 'DICOM SpacingBetweenSlices (DS, a string, mm).'),
  strs('ImagePositionPatient', 'DICOM ImagePositionPatient (DS values as strings, mm): x, y, z of the first voxel.'),
  strs('ImageOrientationPatient', 'DICOM ImageOrientationPatient (DS values as strings).'),
  str('SliceLocation', 'DICOM SliceLocation (DS, a string, mm).'),
  str('FrameOfReferenceUID', 'DICOM FrameOfReferenceUID.'),
  str('KVP', 'DICOM KVP (DS, a string); CT only.'),
  strs('ConvolutionKernel', 'DICOM ConvolutionKernel; CT only.'),
  str('SegmentationType', 'DICOM SegmentationType (BINARY, FRACTIONAL, LABELMAP); SEG only.'),
  record('SegmentSequence', SEGMENT_ITEM, 'DICOM SegmentSequence: one item per segment; SEG only.'),
  record('ReferencedSeriesSequence', REFERENCED_SERIES_ITEM, 'DICOM ReferencedSeriesSequence: the series a derived object refers to.'),
  record('ContentTemplateSequence', 'STRUCT(MappingResource VARCHAR, TemplateIdentifier VARCHAR)', 'DICOM ContentTemplateSequence; SR only (TID 1500 measurement reports).'),
];

const MEASUREMENT_KEYS: ColumnDef[] = [
  str('PatientID', 'DICOM PatientID.'),
  str('SOPInstanceUID', 'SOPInstanceUID of the structured report (SR).'),
  str('SeriesInstanceUID', 'SeriesInstanceUID of the structured report; joins to index.SeriesInstanceUID.'),
  str('SeriesDescription', 'SeriesDescription of the structured report.'),
  int('measurementGroup_number', 'Number of the measurement group within the TID 1500 report, from 0.'),
  str('segmentationInstanceUID', 'SOPInstanceUID of the segmentation defining the region measured.'),
  str('segmentationSeriesUID', 'SeriesInstanceUID of that segmentation.'),
  int('segmentationSegmentNumber', 'SegmentNumber of the segment measured.'),
  str('sourceSegmentedSeriesUID', 'SeriesInstanceUID of the image series measured; joins to index.SeriesInstanceUID.'),
  str('trackingIdentifier', 'Tracking Identifier of the measurement group.'),
  str('trackingUniqueIdentifier', 'Tracking Unique Identifier of the measurement group.'),
];

export const FULL_TABLES: TableDef[] = [
  {
    name: 'dicom_all',
    file: 'dicom_all',
    description:
      'One row per DICOM instance: its DICOM attributes (sequences as lists of structs) joined with the IDC columns (collection, CRDC UUIDs, file URLs of both stores, size, license). The release\'s BigQuery table of the same name, as IDC exports it (fetched with data fetch --tables dicom_all and loaded by the build).',
    joinKey: 'SeriesInstanceUID',
    columns: DICOM_ALL,
  },
  {
    name: 'segmentations',
    file: 'segmentations',
    description: 'One row per segment of each DICOM Segmentation (SEG) instance: the structure segmented, its category, anatomic region and algorithm, and the segmented image series.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      str('PatientID', 'DICOM PatientID.'),
      str('StudyInstanceUID', 'DICOM StudyInstanceUID.'),
      str('SeriesInstanceUID', 'SeriesInstanceUID of the segmentation; joins to index.SeriesInstanceUID.'),
      str('SOPInstanceUID', 'SOPInstanceUID of the segmentation.'),
      str('FrameOfReferenceUID', 'DICOM FrameOfReferenceUID.'),
      str('SegmentationType', 'BINARY, FRACTIONAL or LABELMAP.'),
      code('AnatomicRegion', 'Anatomic region of the segment.'),
      code('AnatomicRegionModifier', 'Modifier of the anatomic region (e.g. laterality).'),
      code('SegmentedPropertyCategory', 'Category of the segmented property (e.g. Anatomical Structure).'),
      code('SegmentedPropertyType', 'Segmented property: the structure (e.g. Liver, Neoplasm).'),
      str('SegmentAlgorithmType', 'AUTOMATIC, SEMIAUTOMATIC or MANUAL.'),
      str('SegmentAlgorithmName', 'Name of the algorithm.'),
      int('SegmentNumber', 'Number of the segment within the segmentation.'),
      str('TrackingUID', 'Tracking UID of the segment.'),
      str('TrackingID', 'Tracking identifier of the segment.'),
      str('segmented_SeriesInstanceUID', 'The image series segmented; joins to index.SeriesInstanceUID.'),
      str('viewer_url', 'The segmentation in the IDC viewer.'),
    ],
  },
  {
    name: 'measurement_groups',
    file: 'measurement_groups',
    description: 'One row per measurement group of each TID 1500 structured report: what was measured (finding, site), on which segment and image series.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      ...MEASUREMENT_KEYS,
      codeV('finding', 'Finding of the measurement group (e.g. Nodule, Liver).'),
      codeV('findingSite', 'Finding site (e.g. Lung, Abdomen).'),
      record('contentSequence', CONTENT_ITEM, 'The measurement group content item of the report, with its children.', 'NULLABLE'),
    ],
  },
  {
    name: 'quantitative_measurements',
    file: 'quantitative_measurements',
    description: 'One row per numeric measurement of each TID 1500 structured report (radiomics, volume, SUVbw): the quantity, its value and units, and what was measured.',
    joinKey: 'SeriesInstanceUID',
    columns: [
      ...MEASUREMENT_KEYS,
      code('Quantity', 'The quantity measured (e.g. Volume, Sphericity, SUVbw): filter on Quantity.CodeMeaning.'),
      code('derivationModifier', 'How the value was derived (e.g. Mean, Maximum), if stated.'),
      code('lateralityModifier', 'Laterality of the finding site, if stated.'),
      col('Value', 'NUMERIC', 'The measured value (BigQuery NUMERIC, a decimal).'),
      codeV('Units', 'Units of the value (UCUM, e.g. mm3, g/ml{SUVbw}).'),
      codeV('finding', 'Finding of the measurement group.'),
      codeV('findingSite', 'Finding site.'),
    ],
  },
  {
    name: 'qualitative_measurements',
    file: 'qualitative_measurements',
    description: 'One row per coded evaluation of each TID 1500 structured report (e.g. malignancy, margin, texture of a nodule).',
    joinKey: 'SeriesInstanceUID',
    columns: [
      ...MEASUREMENT_KEYS,
      code('Quantity', 'The property evaluated (e.g. Malignancy).'),
      codeV('Value', 'The coded evaluation (e.g. Highly Suspicious).'),
      codeV('finding', 'Finding of the measurement group.'),
      codeV('findingSite', 'Finding site.'),
    ],
  },
];

export const FULL_TABLE_NAMES = FULL_TABLES.map((t) => t.name);
export const FULL_TABLE_BY_NAME = new Map(FULL_TABLES.map((t) => [t.name, t]));

/** Folder of a release's export, relative to its folder: the bucket's layout, so the same paths work on both. */
/** The record the fetch keeps beside the tables of an export folder (what it brought, with checksums). */
export const FULL_RECORD = 'full-metadata.json';

export function exportDir(releaseNumber: number): string {
  return `bigquery_export/idc_v${releaseNumber}`;
}
