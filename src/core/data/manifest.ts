// The dataset manifest (dataset.json) written next to the Parquet files, and
// the object-store metadata a dataset carries. A real release without a
// manifest gets the public defaults below, which are data, not logic: the
// build stores them in the database and every URL is derived from there.

export interface StoreInfo {
  /** Public name of the store (the spec's neutral name is the key). */
  name: string;
  description: string;
  endpoint: string;
  /** Buckets of the primary store mapped to this store's buckets (identity for cloud1). */
  bucket_map: Record<string, string>;
}

export interface Stores {
  cloud1: StoreInfo;
  cloud2: StoreInfo;
}

export const DEFAULT_STORES: Stores = {
  cloud1: {
    name: 'aws',
    description: 'Primary public object store (S3), no credentials needed',
    endpoint: 'https://s3.amazonaws.com',
    bucket_map: { 'idc-open-data': 'idc-open-data', 'idc-open-data-two': 'idc-open-data-two', 'idc-open-data-cr': 'idc-open-data-cr' },
  },
  cloud2: {
    name: 'gcs',
    description: 'Second public object store, reached through its S3-compatible endpoint',
    endpoint: 'https://storage.googleapis.com',
    bucket_map: { 'idc-open-data': 'idc-open-data', 'idc-open-data-two': 'idc-open-idc1', 'idc-open-data-cr': 'idc-open-cr' },
  },
};

export interface DatasetManifest {
  format: 'idqs-dataset/1';
  /** Data release label, e.g. v24. */
  release: string;
  /** Version of the index tables, e.g. 24.2.2. */
  index_version: string;
  synthetic: boolean;
  generator?: { name: string; seed: number; scale: number; instances: boolean };
  totals?: { collections: number; patients: number; studies: number; series: number; instances: number; size_TB: number };
  row_counts: Record<string, number>;
  stores: Stores;
  /** sha256 of every file of the dataset folder, by relative path. */
  checksums: Record<string, string>;
}

export interface BibRecord {
  doi: string;
  title: string;
  /** Person names as {family, given}; organisations as {literal}. */
  authors: ({ family: string; given: string } | { literal: string })[];
  year: number;
  publisher: string;
  url: string;
  type: 'dataset' | 'article';
  container_title?: string;
  volume?: string;
  issue?: string;
  pages?: string;
}
