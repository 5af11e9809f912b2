// Filterable attributes of the cohort filter (/v3 terms and ranges). All live
// on the series-level table `index`.

import { INDEX_COLUMNS } from './tables.ts';

export type AttributeKind = 'term' | 'range';

export interface AttributeDef {
  name: string;
  kind: AttributeKind;
  categorical: boolean;
  /** Range attributes that hold YYYY-MM-DD strings; bounds must be dates. */
  date?: boolean;
  /** Caveat shown with the attribute and its values. */
  note?: string;
}

export const BODY_PART_NOTE =
  'For derived (SEG/RTSTRUCT) series this is the body part of the source acquisition, not the segmented anatomy. ' +
  'To filter by what was segmented, join seg_index in SQL and match the list column: ' +
  "list_contains(seg_index.SegmentedPropertyType_CodeMeanings, '<CodeMeaning>').";

export const ATTRIBUTES: AttributeDef[] = [
  { name: 'collection_id', kind: 'term', categorical: true },
  { name: 'analysis_result_id', kind: 'term', categorical: true },
  { name: 'PatientID', kind: 'term', categorical: false },
  { name: 'StudyInstanceUID', kind: 'term', categorical: false },
  { name: 'SeriesInstanceUID', kind: 'term', categorical: false },
  { name: 'Modality', kind: 'term', categorical: true },
  { name: 'BodyPartExamined', kind: 'term', categorical: true, note: BODY_PART_NOTE },
  { name: 'Manufacturer', kind: 'term', categorical: true },
  { name: 'ManufacturerModelName', kind: 'term', categorical: true },
  { name: 'PatientSex', kind: 'term', categorical: true },
  { name: 'sop_class_name', kind: 'term', categorical: true },
  { name: 'license_short_name', kind: 'term', categorical: true },
  { name: 'source_DOI', kind: 'term', categorical: true },
  { name: 'instanceCount', kind: 'range', categorical: false },
  { name: 'series_size_MB', kind: 'range', categorical: false },
  { name: 'series_init_idc_version', kind: 'range', categorical: false },
  { name: 'series_revised_idc_version', kind: 'range', categorical: false },
  { name: 'StudyDate', kind: 'range', categorical: false, date: true },
  { name: 'SeriesDate', kind: 'range', categorical: false, date: true },
];

export const ATTRIBUTE_BY_NAME = new Map(ATTRIBUTES.map((a) => [a.name, a]));

const INDEX_COLUMN_BY_NAME = new Map(INDEX_COLUMNS.map((c) => [c.name, c]));

export function attributeColumn(name: string) {
  const c = INDEX_COLUMN_BY_NAME.get(name);
  if (!c) throw new Error(`registry error: attribute ${name} is not a column of index`);
  return c;
}
