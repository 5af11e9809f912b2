// Filterable attributes of the cohort filter (/v3 terms and ranges). Most are
// columns of the series-level table `index`; a few are facts of a series'
// collection, held once per collection in `collections_index` and reached
// through collection_id (the portal's program, cancer type, tumor location
// and species filters).

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
  /** Held per collection rather than per series (absent: a column of index). */
  collection?: CollectionLevel;
}

/** An attribute of a series' collection: a column of collections_index, matched through collection_id. */
export interface CollectionLevel {
  column: string;
  /** The column lists several values, comma-separated; a collection matches a value when any of its values is that value. */
  list: boolean;
  description: string;
}

const LIST_NOTE =
  'A collection may list several values (comma-separated in collections_index); a series matches a value when its collection lists it, ' +
  'so the values of one series can add up to more than its count.';

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
  {
    name: 'program_id',
    kind: 'term',
    categorical: true,
    collection: { column: 'program_id', list: false, description: "program of the series' collection (e.g. tcga, cptac, community), from collections_index" },
  },
  {
    name: 'cancer_types',
    kind: 'term',
    categorical: true,
    note: LIST_NOTE,
    collection: { column: 'cancer_types', list: true, description: "cancer type of the series' collection (e.g. Lung Cancer), from collections_index" },
  },
  {
    name: 'tumor_locations',
    kind: 'term',
    categorical: true,
    note: LIST_NOTE,
    collection: { column: 'tumor_locations', list: true, description: "tumor location of the series' collection (e.g. Lung, Breast), from collections_index" },
  },
  {
    name: 'species',
    kind: 'term',
    categorical: true,
    note: LIST_NOTE,
    collection: { column: 'species', list: true, description: "species of the series' collection's subjects (Human, Mouse, Canine, Phantom), from collections_index" },
  },
];

export const ATTRIBUTE_BY_NAME = new Map(ATTRIBUTES.map((a) => [a.name, a]));

const INDEX_COLUMN_BY_NAME = new Map(INDEX_COLUMNS.map((c) => [c.name, c]));

/** The index column of an attribute held per series (not for collection-level attributes). */
export function attributeColumn(name: string) {
  const c = INDEX_COLUMN_BY_NAME.get(name);
  if (!c) throw new Error(`registry error: attribute ${name} is not a column of index`);
  return c;
}
