// The explorer's calls to the IDQS API (same origin), typed after the /v3
// responses it reads. Errors arrive as ApiError with the API's code and
// message, which the UI shows as they are (they say what to fix).

export type CountMode = 'patients' | 'studies' | 'series';
export type Bound = number | string;

export interface Filter {
  /** null among the values: series without a value (the None bucket). */
  terms: Record<string, (string | null)[]>;
  /** Values a study must all have (the portal's ALL): every series of such studies. */
  all_terms?: Record<string, string[]>;
  ranges: Record<string, { gte?: Bound; lte?: Bound }>;
  /** A union (the cart): series matching one of these filters. */
  any_of?: Filter[];
}

export interface AttributeInfo {
  name: string;
  data_type: string;
  kind: 'term' | 'range';
  categorical: boolean;
  description: string;
  value_format?: 'YYYY-MM-DD';
}

export interface Bucket {
  count: number;
  filtered_count: number;
}

export interface TermFacet {
  kind: 'term';
  categorical: boolean;
  selected: string[];
  values: ({ value: string } & Bucket)[];
  distinct: number | null;
  truncated: boolean;
  missing: Bucket | null;
}

export interface RangeFacet {
  kind: 'range';
  value_format?: 'YYYY-MM-DD';
  selected: { gte?: Bound; lte?: Bound } | null;
  min: Bound | null;
  max: Bound | null;
  bins: ({ gte: Bound; lt: Bound } & Bucket)[];
  missing: Bucket;
}

export type Facet = TermFacet | RangeFacet;

export interface Totals {
  patients: number;
  studies: number;
  series: number;
  instances: number;
  size_TB: number;
  size_MB: number;
}

export interface Facets {
  count: CountMode;
  totals: Totals;
  facets: Record<string, Facet>;
  filters_applied: Filter;
  warnings: string[];
}

export interface Version {
  idc_version: string;
  idc_index_data_version: string;
  api_version: string;
  synthetic: boolean;
  /** Present when the server serves several releases, newest (the default) first. */
  releases?: ServedRelease[];
}

export interface ServedRelease {
  release: string;
  idc_version: string;
  default: boolean;
}

/**
 * The release every call asks for: the one the page's link names (?release=),
 * checked against what the server serves by `chooseRelease`; null: the server's default.
 */
let release: string | null = null;

export function currentRelease(): string | null {
  return release;
}

/** `path` asking for the current release. */
function withRelease(path: string): string {
  return release === null ? path : `${path}${path.includes('?') ? '&' : '?'}release=${encodeURIComponent(release)}`;
}

/**
 * Before any other call: the release the link names, if the server serves it
 * (by index version, or data release such as v24); else a note that says so,
 * and the default release is shown. With several served, links always carry one.
 */
export async function chooseRelease(search: string): Promise<{ note: string | null }> {
  const asked = new URLSearchParams(search).get('release');
  const v = await get<Version>('/v3/version');
  const served = v.releases ?? [{ release: v.idc_index_data_version, idc_version: v.idc_version, default: true }];
  const n = asked?.trim().toLowerCase().replace(/^v/, '');
  const match = n ? served.find((r) => r.release.toLowerCase() === n) ?? served.filter((r) => r.idc_version.toLowerCase().replace(/^v/, '') === n).at(0) : undefined;
  release = match && v.releases ? match.release : v.releases ? v.releases[0]!.release : null;
  if (asked && !match) {
    return { note: `This link names data release ${asked}, which this server does not serve (it serves ${served.map((r) => r.release).join(', ')}); showing ${served[0]!.release} instead.` };
  }
  return { note: null };
}

export interface License {
  license_short_name: string | null;
  license_long_name?: string;
  license_url?: string;
  series: number;
  size_MB: number;
  commercial_use_allowed: boolean | null;
}

export interface Licenses {
  licenses: License[];
  commercial_use_allowed_for_all: boolean;
}

export type Cell = string | number | boolean | null | Cell[] | { [k: string]: Cell };

export interface TablePage {
  level: string;
  columns: string[];
  rows: Record<string, Cell>[];
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
  sort: string | null;
  order: 'asc' | 'desc';
  warnings: string[];
}

export interface ManifestPayload {
  download: {
    total_series: number;
    size_TB: number;
    manifest_truncated: boolean;
    commands: { idqs: string[]; save_manifest: string; s5cmd_cloud1: string[]; s5cmd_cloud2: string[] };
    stores: Record<'cloud1' | 'cloud2', { name: string; endpoint: string }>;
    note: string;
  };
}

export interface SqlResult {
  columns: string[];
  types: string[];
  rows: Record<string, Cell>[];
  row_count: number;
  truncated: boolean;
  max_rows: number;
}

export interface TableSummary {
  name: string;
  description: string;
}

export interface TableSchema {
  name: string;
  description?: string;
  columns: { name: string; type: string; mode?: string; description?: string }[];
}

export interface Citations {
  format: string;
  count: number;
  citations: (string | Record<string, unknown>)[];
  idc_acknowledgment: string | Record<string, unknown>;
  recommendation: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function failure(r: Response): Promise<ApiError> {
  try {
    const body = (await r.json()) as { error?: { code?: string; message?: string } };
    return new ApiError(r.status, body.error?.code ?? 'error', body.error?.message ?? `${r.status} ${r.statusText}`);
  } catch {
    return new ApiError(r.status, 'error', `${r.status} ${r.statusText}`);
  }
}

export async function get<T>(path: string, signal?: AbortSignal): Promise<T> {
  const r = await fetch(withRelease(path), { signal });
  if (!r.ok) throw await failure(r);
  return (await r.json()) as T;
}

export async function post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const r = await fetch(withRelease(path), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  if (!r.ok) throw await failure(r);
  return (await r.json()) as T;
}

/** POST returning text with its response headers (manifest.txt). */
export async function postText(path: string, body: unknown, signal?: AbortSignal): Promise<{ text: string; headers: Headers }> {
  const r = await fetch(withRelease(path), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  if (!r.ok) throw await failure(r);
  return { text: await r.text(), headers: r.headers };
}

/** True when a filter selects something narrower than the whole release. */
export function hasFilter(f: Filter): boolean {
  return Object.keys(f.terms).length > 0 || Object.keys(f.ranges).length > 0 || Object.keys(f.all_terms ?? {}).length > 0 || (f.any_of?.length ?? 0) > 0;
}

/** A collection as GET /v3/collections lists it (the fields the explorer reads). */
export interface CollectionInfo {
  collection_id: string;
  collection_name: string | null;
  cancer_types: string | null;
  tumor_locations: string | null;
  species: string | null;
  subjects: number | null;
  supporting_data: string | null;
  description: string | null;
  program_id: string | null;
  sources: { source_DOI: string | null; source_url: string | null; license_short_name: string | null; license_url: string | null; commercial_use_allowed: boolean | null }[];
}

let collections: Promise<CollectionInfo[]> | null = null;

/** The release's collections, asked for once (the data never changes while the page is open). */
export function allCollections(): Promise<CollectionInfo[]> {
  collections ??= get<CollectionInfo[]>('/v3/collections').catch((e: unknown) => {
    collections = null;
    throw e;
  });
  return collections;
}
