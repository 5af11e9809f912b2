// The order of a manifest: pages, manifest.txt lines and the preview list
// series by these columns (SeriesInstanceUID makes it total). The cohort
// index stores its rows in this order, so it is a rule of its own, not of the
// manifest service that the index also serves.
export const MANIFEST_ORDER = 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID';
