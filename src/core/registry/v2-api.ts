// What the /v2 interface filters on and lists in manifests: its data sources
// (the instance table and the two TCGA tables), the filter attributes with
// their v2 data types, and the manifest fields. One source of truth for
// GET /v2/filters, /v2/fields, the filter compiler and the preview planner.

import { PER_INSTANCE_COLUMNS } from './v2.ts';

export type V2Source = 'tcga_biospecimen_rel9' | 'tcga_clinical_rel9' | 'dicom_pivot';

/** Sources in the order /v2/filters and /v2/fields list them (ancillary first). */
export const V2_SOURCES: V2Source[] = ['tcga_biospecimen_rel9', 'tcga_clinical_rel9', 'dicom_pivot'];

/** Name of a source as /v2 reports it: the table as /v3/sql can query it. */
export function sourceName(s: V2Source): string {
  return `v2.${s}`;
}

export type V2DataType = 'Categorical String' | 'String' | 'Categorical Numeric' | 'Ranged Integer' | 'Ranged Number';

export interface V2Attribute {
  /** Base attribute name (ranged ones are filtered as <name>_<suffix>). */
  name: string;
  source: V2Source;
  type: V2DataType;
  units: string | null;
}

/** Range suffixes, in the order /v2/filters lists them, with their arity. */
export const RANGE_SUFFIXES = ['btw', 'ebtw', 'btwe', 'ebtwe', 'gte', 'lte', 'gt', 'lt', 'eq'] as const;
export type RangeSuffix = (typeof RANGE_SUFFIXES)[number];
export const RANGE_ARITY: Record<RangeSuffix, 1 | 2> = { btw: 2, ebtw: 2, btwe: 2, ebtwe: 2, gte: 1, lte: 1, gt: 1, lt: 1, eq: 1 };

const CS = 'Categorical String' as const;
const attr = (source: V2Source, type: V2DataType, units: string | null = null) => (name: string): V2Attribute => ({ name, source, type, units });

/**
 * The filter catalogue of the public interface's last schema (61 attributes,
 * 157 filter names). Identifiers and free text are `String`; the rest of the
 * string attributes are `Categorical String`. One deliberate change:
 * min_PixelSpacing is a Ranged Number (its values are fractional millimetres).
 */
export const V2_ATTRIBUTES: V2Attribute[] = [
  ...['project_short_name', 'sample_type'].map(attr('tcga_biospecimen_rel9', CS)),
  attr('tcga_clinical_rel9', 'Ranged Integer', 'years')('age_at_diagnosis'),
  attr('tcga_clinical_rel9', 'Ranged Number', 'kg/m2')('bmi'),
  ...['country', 'disease_code', 'ethnicity', 'gender', 'histological_type', 'pathologic_stage', 'project_name', 'race', 'tumor_tissue_site', 'vital_status'].map(
    attr('tcga_clinical_rel9', CS),
  ),
  ...[
    'analysis_results_id', 'AnatomicRegionSequence', 'BodyPartExamined', 'Calcification', 'CancerType', 'collection_id', 'illuminationType',
    'Internal_structure', 'license_short_name', 'Lobular_Pattern', 'Malignancy', 'Manufacturer', 'ManufacturerModelName', 'Margin', 'Modality',
    'primaryAnatomicStructure', 'SamplesPerPixel', 'SegmentAlgorithmName', 'SegmentAlgorithmType', 'SegmentedPropertyCategoryCodeSequence',
    'SegmentedPropertyTypeCodeSequence', 'SeriesNumber', 'SOPClassUID', 'Sphericity', 'Spiculation', 'Subtlety_score', 'tcia_species',
    'tcia_tumorLocation', 'Texture',
  ].map(attr('dicom_pivot', CS)),
  ...['PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'SOPInstanceUID', 'StudyDescription', 'SeriesDescription', 'StudyDate'].map(attr('dicom_pivot', 'String')),
  attr('dicom_pivot', 'Categorical Numeric')('ObjectiveLensPower'),
  attr('dicom_pivot', 'Ranged Number', 'mm2/s')('Apparent_Diffusion_Coefficient'),
  attr('dicom_pivot', 'Ranged Number', 'mm')('Diameter'),
  attr('dicom_pivot', 'Ranged Integer', 'pixels')('max_TotalPixelMatrixColumns'),
  attr('dicom_pivot', 'Ranged Integer', 'pixels')('max_TotalPixelMatrixRows'),
  attr('dicom_pivot', 'Ranged Number', 'mm')('min_PixelSpacing'),
  attr('dicom_pivot', 'Ranged Number', 'mm')('SliceThickness'),
  attr('dicom_pivot', 'Ranged Number')('Sphericity_quant'),
  attr('dicom_pivot', 'Ranged Number', 'mm2')('Surface_area_of_mesh'),
  attr('dicom_pivot', 'Ranged Number', 'mm3')('Volume'),
  attr('dicom_pivot', 'Ranged Number', 'mm3')('Volume_of_Mesh'),
];

export const isRanged = (a: V2Attribute) => a.type === 'Ranged Integer' || a.type === 'Ranged Number';
export const isCategorical = (a: V2Attribute) => a.type === 'Categorical String' || a.type === 'Categorical Numeric';

/** One filter name: a non-ranged attribute, or a ranged attribute with a suffix. */
export interface V2FilterName {
  name: string;
  attribute: V2Attribute;
  suffix: RangeSuffix | null;
}

/** Every filter name, per source, sorted case-insensitively (suffixes in their listing order). */
export function filterNames(): V2FilterName[] {
  const out: V2FilterName[] = [];
  for (const source of V2_SOURCES) {
    const attrs = V2_ATTRIBUTES.filter((a) => a.source === source).sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
    for (const a of attrs) {
      if (isRanged(a)) for (const s of RANGE_SUFFIXES) out.push({ name: `${a.name}_${s}`, attribute: a, suffix: s });
      else out.push({ name: a.name, attribute: a, suffix: null });
    }
  }
  return out;
}

const FILTERS_BY_LOWER = new Map(filterNames().map((f) => [f.name.toLowerCase(), f]));

/** A filter name as sent (any casing) to its definition. */
export function lookupFilter(name: string): V2FilterName | undefined {
  return FILTERS_BY_LOWER.get(name.toLowerCase());
}

/** Where a manifest field's value comes from. */
export type FieldLevel = 'series' | 'instance' | 'clinical' | 'biospecimen';

export interface V2Field {
  /** Canonical spelling (the spec's neutral name for store URLs and buckets). */
  name: string;
  source: V2Source;
  level: FieldLevel;
  /** Other accepted spellings: the public service's names. */
  aliases: string[];
}

/** Fields that vary within a series: the per-instance columns and the object URLs. */
const INSTANCE_FIELDS = new Set([...PER_INSTANCE_COLUMNS, 'cloud1_url', 'cloud2_url']);

/** Store fields of the spec and the public service's names for them. */
const STORE_ALIASES: Record<string, string> = { cloud1_url: 'aws_url', cloud2_url: 'gcs_url', cloud1_bucket: 'aws_bucket', cloud2_bucket: 'gcs_bucket' };

const PIVOT_FIELD_NAMES = [
  'analysis_results_id', 'AnatomicRegionSequence', 'Apparent_Diffusion_Coefficient', 'BodyPartExamined', 'Calcification', 'CancerType',
  'cloud1_bucket', 'cloud1_url', 'cloud2_bucket', 'cloud2_url', 'collection_id', 'crdc_instance_uuid', 'crdc_series_uuid', 'crdc_study_uuid',
  'Diameter', 'FrameOfReferenceUID', 'illuminationType', 'instance_size', 'Internal_structure', 'license_short_name', 'Lobular_Pattern',
  'Malignancy', 'Manufacturer', 'ManufacturerModelName', 'Margin', 'max_TotalPixelMatrixColumns', 'max_TotalPixelMatrixRows', 'min_PixelSpacing',
  'Modality', 'ObjectiveLensPower', 'PatientID', 'primaryAnatomicStructure', 'Program', 'SamplesPerPixel', 'SegmentAlgorithmName',
  'SegmentAlgorithmType', 'SegmentedPropertyCategoryCodeSequence', 'SegmentedPropertyTypeCodeSequence', 'SegmentNumber', 'SeriesDescription',
  'SeriesInstanceUID', 'SeriesNumber', 'SliceThickness', 'SOPClassUID', 'SOPInstanceUID', 'source_DOI', 'Sphericity', 'Sphericity_quant',
  'Spiculation', 'StudyDate', 'StudyDescription', 'StudyInstanceUID', 'Subtlety_score', 'Surface_area_of_mesh', 'tcia_species',
  'tcia_tumorLocation', 'Texture', 'Volume', 'Volume_of_Mesh',
];

const CLINICAL_FIELD_NAMES = [
  'age_at_diagnosis', 'bmi', 'country', 'disease_code', 'ethnicity', 'gender', 'histological_type', 'pathologic_stage', 'project_name',
  'project_short_name', 'race', 'tumor_tissue_site', 'vital_status',
];

/** The manifest fields: 2 biospecimen, 13 clinical, 59 image fields (project_short_name is read from the clinical table). */
export const V2_FIELDS: V2Field[] = [
  ...['project_short_name', 'sample_type'].map((name) => ({ name, source: 'tcga_biospecimen_rel9' as const, level: 'biospecimen' as const, aliases: [] })),
  ...CLINICAL_FIELD_NAMES.map((name) => ({ name, source: 'tcga_clinical_rel9' as const, level: 'clinical' as const, aliases: [] })),
  ...PIVOT_FIELD_NAMES.map((name) => ({
    name,
    source: 'dicom_pivot' as const,
    level: INSTANCE_FIELDS.has(name) ? ('instance' as const) : ('series' as const),
    aliases: STORE_ALIASES[name] ? [STORE_ALIASES[name]] : [],
  })),
];

const FIELDS_BY_LOWER = new Map<string, V2Field>();
for (const f of V2_FIELDS) {
  // project_short_name is listed under both TCGA sources; it is read from the clinical table (one row per case).
  if (f.level === 'biospecimen' && f.name === 'project_short_name') continue;
  FIELDS_BY_LOWER.set(f.name.toLowerCase(), f);
  for (const a of f.aliases) FIELDS_BY_LOWER.set(a.toLowerCase(), f);
}

/** A requested field (any casing, or a public-service alias) to its definition and the spelling to answer with. */
export function lookupField(name: string): { field: V2Field; key: string } | undefined {
  const field = FIELDS_BY_LOWER.get(name.toLowerCase());
  if (!field) return undefined;
  const alias = field.aliases.find((a) => a.toLowerCase() === name.toLowerCase());
  return { field, key: alias ?? field.name };
}

/** Every spelling a field may be requested with, canonical names first. */
export function acceptedFieldNames(): string[] {
  const names = new Set<string>();
  for (const f of V2_FIELDS) names.add(f.name);
  for (const f of V2_FIELDS) for (const a of f.aliases) names.add(a);
  return [...names];
}

export type Granularity = 'instance' | 'series' | 'study' | 'patient' | 'collection' | 'version';

/** The spec's granularity table: first match wins; counts added per row when `counts` is true. */
export const GRANULARITY: { level: Granularity; fields: string[]; counts: string[] }[] = [
  { level: 'instance', fields: ['SOPInstanceUID', 'crdc_instance_uuid', 'cloud2_url', 'cloud1_url'], counts: [] },
  { level: 'series', fields: ['SeriesInstanceUID', 'crdc_series_uuid'], counts: ['instance_count'] },
  { level: 'study', fields: ['StudyInstanceUID', 'crdc_study_uuid'], counts: ['instance_count', 'series_count'] },
  { level: 'patient', fields: ['PatientID'], counts: ['instance_count', 'series_count', 'study_count'] },
  { level: 'collection', fields: ['collection_id'], counts: ['instance_count', 'series_count', 'study_count', 'patient_count'] },
  { level: 'version', fields: [], counts: ['instance_count', 'series_count', 'study_count', 'patient_count', 'collection_count'] },
];

export function granularityOf(canonicalFields: string[]): (typeof GRANULARITY)[number] {
  const set = new Set(canonicalFields);
  return GRANULARITY.find((g) => g.level === 'version' || g.fields.some((f) => set.has(f)))!;
}
