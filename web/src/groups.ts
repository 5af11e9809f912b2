// How the filter panel groups the attributes the API lists: the two search
// scopes first (source collections and analysis results, as on the portal),
// then imaging, then provenance of the derived data, then identifiers. An
// attribute not named here still appears, by its kind.

import type { AttributeInfo } from './api.ts';

export interface Group {
  id: string;
  title: string;
  attributes: AttributeInfo[];
}

const SCOPE = ['collection_id', 'analysis_result_id'];
const PROVENANCE = ['license_short_name', 'source_DOI', 'series_init_idc_version', 'series_revised_idc_version'];

/** Labels people read; the attribute name stays visible next to them. */
export const LABELS: Record<string, string> = {
  collection_id: 'Collection',
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
export const OPEN_BY_DEFAULT = new Set(['collection_id', 'analysis_result_id', 'Modality', 'BodyPartExamined', 'license_short_name', 'StudyDate']);

export function groupAttributes(attributes: AttributeInfo[]): Group[] {
  const scope = attributes.filter((a) => SCOPE.includes(a.name)).sort((a, b) => SCOPE.indexOf(a.name) - SCOPE.indexOf(b.name));
  const provenance = attributes.filter((a) => PROVENANCE.includes(a.name));
  const ids = attributes.filter((a) => a.kind === 'term' && !a.categorical && !SCOPE.includes(a.name));
  const imaging = attributes.filter((a) => !scope.includes(a) && !provenance.includes(a) && !ids.includes(a));
  return [
    { id: 'scope', title: 'Search scope', attributes: scope },
    { id: 'imaging', title: 'Imaging', attributes: imaging },
    { id: 'derived', title: 'License, source and release', attributes: provenance },
    { id: 'ids', title: 'Identifiers', attributes: ids },
  ].filter((g) => g.attributes.length > 0);
}
