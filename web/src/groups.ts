// How the filter panel groups the attributes the API lists, as the portal
// does: the search scope first (program, source collections), then Original
// (what the collections and their DICOM say: cancer type, tumor location,
// species, modality...), then Derived (analysis results: the segmentations,
// annotations and measurements made from the originals), then Related
// (license, source and release), then identifiers. An attribute not named
// here still appears, by its kind.

import type { AttributeInfo } from './api.ts';

export interface Group {
  id: string;
  title: string;
  attributes: AttributeInfo[];
}

const SCOPE = ['program_id', 'collection_id'];
/** The release's derived data among the filterable attributes (its seg_index and ann_group_index details are not filters: SQL). */
const DERIVED = ['analysis_result_id'];
/** Facts of the collection lead the Original group, in the portal's order. */
const ORIGINAL_FIRST = ['cancer_types', 'tumor_locations', 'species', 'Modality', 'BodyPartExamined'];
const PROVENANCE = ['license_short_name', 'source_DOI', 'series_init_idc_version', 'series_revised_idc_version'];

/** Labels people read; the attribute name stays visible next to them. */
export const LABELS: Record<string, string> = {
  program_id: 'Program',
  collection_id: 'Collection',
  cancer_types: 'Cancer type',
  tumor_locations: 'Tumor location',
  species: 'Species',
  analysis_result_id: 'Analysis result',
  Modality: 'Modality',
  BodyPartExamined: 'Body part examined',
  Manufacturer: 'Manufacturer',
  ManufacturerModelName: 'Scanner model',
  PatientSex: 'Patient sex',
  sop_class_name: 'Object type (SOP class)',
  license_short_name: 'License',
  source_DOI: 'Source DOI',
  instanceCount: 'Instances per series',
  series_size_MB: 'Series size (MB)',
  series_init_idc_version: 'First release of the series',
  series_revised_idc_version: 'Latest revision release',
  StudyDate: 'Study date',
  SeriesDate: 'Series date',
  PatientID: 'Patient IDs',
  StudyInstanceUID: 'Study UIDs',
  SeriesInstanceUID: 'Series UIDs',
};

export function label(name: string): string {
  return LABELS[name] ?? name;
}

/** Attributes whose panels start open. */
export const OPEN_BY_DEFAULT = new Set(['program_id', 'collection_id', 'analysis_result_id', 'cancer_types', 'tumor_locations', 'Modality', 'BodyPartExamined', 'license_short_name', 'StudyDate']);

export function groupAttributes(attributes: AttributeInfo[]): Group[] {
  const scope = attributes.filter((a) => SCOPE.includes(a.name)).sort((a, b) => SCOPE.indexOf(a.name) - SCOPE.indexOf(b.name));
  const provenance = attributes.filter((a) => PROVENANCE.includes(a.name));
  const derived = attributes.filter((a) => DERIVED.includes(a.name));
  const ids = attributes.filter((a) => a.kind === 'term' && !a.categorical && !SCOPE.includes(a.name));
  const rank = (n: string) => (ORIGINAL_FIRST.includes(n) ? ORIGINAL_FIRST.indexOf(n) : ORIGINAL_FIRST.length);
  const original = attributes
    .filter((a) => !scope.includes(a) && !derived.includes(a) && !provenance.includes(a) && !ids.includes(a))
    .sort((a, b) => rank(a.name) - rank(b.name));
  return [
    { id: 'scope', title: 'Search scope', attributes: scope },
    { id: 'original', title: 'Original: collection and DICOM attributes', attributes: original },
    { id: 'derived', title: 'Derived: analysis results (segmentations, annotations, measurements)', attributes: derived },
    { id: 'related', title: 'Related: license, source and release', attributes: provenance },
    { id: 'ids', title: 'Identifiers', attributes: ids },
  ].filter((g) => g.attributes.length > 0);
}
