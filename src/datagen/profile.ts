// The release profile: what the generator knows about the real release, as
// numbers and public identity, extracted from the real index tables by
// `idqs data calibrate` (queries in calibrate/profile-queries.ts) and shipped
// in data/synth/. Collections and analysis results carry their real ids,
// names, DOIs, licenses and subjects; everything else is a distribution.

import { readFileSync } from 'node:fs';

/** Weighted choices [value, weight]; weights need not sum to 1. */
export type Weighted<T = string | null> = [T, number][];

/** Probabilities of the quantile knots stored for every distribution. */
export const QUANTILE_P = [0, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1] as const;

/**
 * Quantiles at QUANTILE_P; the generator samples the piecewise-linear
 * inverse CDF through them and multiplies by `adj`, which makes the sample
 * mean equal the real mean (the tail above the 99th percentile is heavy).
 */
export interface Quantiles {
  q: number[];
  adj: number;
}

/**
 * Character classes of PatientID templates: each class character stands for
 * one character drawn from its alphabet.
 */
export const PID_CLASSES: Record<string, string> = {
  '#': '0123456789',
  '@': 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  '&': 'abcdefghijklmnopqrstuvwxyz',
  '%': '0123456789abcdef',
  $: '0123456789ABCDEF',
  '*': '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  '?': '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
};

export interface SeriesProfile {
  /** Series in the real release. */
  series: number;
  instances: Quantiles;
  mb_per_instance: Quantiles;
  descriptions: Weighted;
  /** [Manufacturer, ManufacturerModelName]. */
  equipment: Weighted<[string | null, string | null]>;
  sop: Weighted<string>;
  transfer_syntaxes: Weighted;
  photometric: Weighted;
  pixel_representation: Weighted;
  /** Share of series whose SeriesDate is NULL. */
  series_date_null: number;
  /** [series_init_idc_version, weight]. */
  init_versions: Weighted<number>;
  /** [license_short_name, aws_bucket]. */
  licenses: Weighted<[string, string]>;
  body_parts: Weighted;
}

export type ModalityProfile = SeriesProfile;

export interface StudySignature {
  /** Modalities of the original series of the study, sorted. */
  mods: string[];
  share: number;
  /** Mean series of each modality per study of this signature (at least 1). */
  per: Record<string, number>;
  max: Record<string, number>;
}

export interface SourceProfile {
  source_id: string;
  title: string;
  doi: string;
  url: string;
  modalities: string;
  license: string;
}

export interface CollectionProfile {
  id: string;
  name: string;
  cancer_types: string | null;
  tumor_locations: string | null;
  species: string | null;
  program: string | null;
  supporting_data: string | null;
  status: string | null;
  updated: string | null;
  /** Original sources (DOI, license, modalities); analysis-result sources are derived from the analysis results. */
  sources: SourceProfile[];
  patients: number;
  studies: number;
  series: number;
  /** PatientID template (see PID_CLASSES); other characters are literal. */
  pid: string;
  /** PatientSex per patient (null = NULL). */
  sex: Weighted;
  /** PatientAge per study: share NULL, and mean and sd in years where present. */
  age: { null: number; mean: number; sd: number };
  /** StudyDate: share NULL and the 2nd and 98th percentile years. */
  dates: { null: number; years: [number, number] };
  studies_per_patient: { mean: number; max: number };
  study_descriptions: Weighted;
  /** Share of series revised since they first appeared. */
  revised: number;
  /** Rows of prior_versions_index per series. */
  prior: number;
  signatures: StudySignature[];
  modalities: Record<string, ModalityProfile>;
}

export interface AnalysisResultPart extends SeriesProfile {
  collection: string;
  /** Derived modality (SEG, SR, ANN, RTSTRUCT, ...). */
  modality: string;
  /** Image modality of the studies the derived series live in (CT, MR, PT, SM, ...). */
  source: string;
  /** Original series of that modality in the collection, in the real release. */
  source_series: number;
}

export interface AnalysisResultProfile {
  id: string;
  title: string;
  doi: string;
  url: string;
  license: string;
  updated: string | null;
  subjects: number;
  parts: AnalysisResultPart[];
}

export interface LicenseProfile {
  short: string;
  long: string;
  url: string;
}

export interface ReleaseProfile {
  format: 'idqs-release-profile/1';
  provenance: { source: string; files: Record<string, string>; extracted_by: string; note: string };
  release: { idc_version: number; index_version: string; versions: [number, string][] };
  totals: { collections: number; analysis_results: number; patients: number; studies: number; series: number; instances: number; size_TB: number };
  licenses: LicenseProfile[];
  collections: CollectionProfile[];
  analysis_results: AnalysisResultProfile[];
}

/** The profile shipped with the generator (the newest release it was calibrated against). */
export const PROFILE_FILE = new URL('../../data/synth/release-profile.json', import.meta.url);

let cached: ReleaseProfile | undefined;

export function loadProfile(): ReleaseProfile {
  cached ??= JSON.parse(readFileSync(PROFILE_FILE, 'utf8')) as ReleaseProfile;
  return cached;
}
