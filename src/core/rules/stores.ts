// The two object stores by their neutral keys, and the names accepted for
// them (the public service calls them aws and gcs). Pure: no engine, so the
// downloader and the service accept the same vocabulary.

export type StoreKey = 'cloud1' | 'cloud2';

/** Names every surface accepts for a store, lower case. */
export const STORE_ALIASES: ReadonlyMap<string, StoreKey> = new Map([
  ['cloud1', 'cloud1'],
  ['cloud2', 'cloud2'],
  ['aws', 'cloud1'],
  ['gcs', 'cloud2'],
]);

/** Bucket names of earlier releases that manifests still carry, and the bucket (cloud1 name) each became. */
export const LEGACY_BUCKETS: ReadonlyMap<string, string> = new Map([['public-datasets-idc', 'idc-open-data']]);
