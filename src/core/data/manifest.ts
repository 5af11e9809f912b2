// The dataset manifest (dataset.json) written next to the Parquet files, and
// the object-store metadata a dataset carries. A real release without a
// manifest gets the public defaults of data/release-defaults.json: the build
// stores them in the database and every URL is derived from there.

import { readFileSync } from 'node:fs';

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

export interface ReleaseDefaults {
  stores: Stores;
  /** Where releases are published (base URLs; overridable). */
  sources: {
    gcs: { base: string; latest_tag: string };
    github: { base: string; latest: string; tags: string };
    pypi: { index: string; project: string };
  };
  /** File stems of a release: the core tables (in the wheel too) and the others. */
  files: { core: string[]; optional: string[] };
}

const defaults = JSON.parse(readFileSync(new URL('../../../data/release-defaults.json', import.meta.url), 'utf8')) as ReleaseDefaults;

/** Defaults of the public release layout, read from data/release-defaults.json. */
export const RELEASE_DEFAULTS = defaults;
export const DEFAULT_STORES: Stores = defaults.stores;

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
  /** Where a fetched real release came from. */
  provenance?: ReleaseProvenance;
}

export interface ReleaseProvenance {
  /** gcs, github, pypi, or file (a wheel or folder given to data build). */
  source: string;
  /** Tag asked for (e.g. latest) and the version it resolved to. */
  requested: string;
  fetched_at: string;
  /** URL of every downloaded file, by relative path (for pypi: the wheel). */
  urls: Record<string, string>;
  /** Published sha256 each file was verified against; null where none is published. */
  verified: Record<string, string | null>;
  /** Tables of the release that were not fetched (not in the source, or not asked for). */
  not_fetched: string[];
  /** The clinical tables fetched from the metadata bucket (data fetch --tables clinical or all), and those that could not be. */
  clinical?: ClinicalProvenance;
}

export interface ClinicalProvenance {
  /** s3://<bucket>/bigquery_export/idc_v<N>_clinical/ */
  prefix: string;
  tables: string[];
  /** Tables not fetched and why ("*": the listing itself failed). */
  failed: { table: string; reason: string }[];
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
