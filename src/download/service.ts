// The downloader's client of a running IDQS service: it resolves a cohort to
// series (pages of POST /v3/cohort/manifest), reads the stores' endpoints and
// bucket names from that payload, the license breakdown (POST /v3/licenses),
// and the layout metadata of a manifest's series (POST /v3/sql on index).
// Only HTTP: the downloader never opens the database.

export type StoreKey = 'cloud1' | 'cloud2';

export interface StoreMeta {
  name: string;
  endpoint: string;
  bucket_map: Record<string, string>;
}

export interface SeriesRow {
  collection_id: string;
  PatientID: string;
  StudyInstanceUID: string;
  SeriesInstanceUID: string;
  Modality: string | null;
  aws_bucket: string | null;
  crdc_series_uuid: string | null;
  series_size_MB: number | null;
  license_short_name: string | null;
}

export interface LicenseRow {
  license_short_name: string | null;
  series: number;
  size_MB: number;
  commercial_use_allowed: boolean | null;
}

export interface Filters {
  terms?: Record<string, string[]>;
  ranges?: Record<string, { gte?: number | string; lte?: number | string }>;
}

export class ServiceUnreachable extends Error {}

const PAGE_SIZE = 5000;
const TIMEOUT_MS = 60_000;

export class ServiceClient {
  readonly base: string;
  constructor(base: string) {
    this.base = base.replace(/\/+$/, '');
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new ServiceUnreachable(
        `cannot reach the IDQS API at ${this.base} (${cause?.code ?? cause?.message ?? (e as Error).message}); start it with "idqs serve" or pass --api URL`,
      );
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${this.base}${path} answered HTTP ${res.status} with a body that is not JSON: is --api the base URL of an IDQS service?`);
    }
    if (!res.ok) {
      const err = (json as { error?: { code?: string; message?: string } }).error;
      throw new Error(`the API refused ${path} (HTTP ${res.status}${err?.code ? ` ${err.code}` : ''}): ${err?.message ?? text.slice(0, 300)}`);
    }
    return json as T;
  }

  /** Every series of a cohort, in manifest order, with the stores' metadata and the totals. */
  async cohort(filters: Filters): Promise<{ series: SeriesRow[]; stores: Record<StoreKey, StoreMeta>; size_MB: number; warnings: string[] }> {
    const series: SeriesRow[] = [];
    let stores: Record<StoreKey, StoreMeta> | undefined;
    let size = 0;
    const warnings = new Set<string>();
    for (let page = 0; ; page++) {
      const r = await this.post<{
        series: SeriesRow[];
        has_more: boolean;
        counts: { size_MB: number };
        download: { stores?: Record<StoreKey, StoreMeta> };
        warnings: string[];
      }>('/v3/cohort/manifest', { filters, page, page_size: PAGE_SIZE });
      for (const w of r.warnings) if (!/^page_size/.test(w)) warnings.add(w);
      if (page === 0) {
        stores = r.download.stores;
        size = r.counts.size_MB;
      }
      series.push(...r.series);
      if (!r.has_more || r.series.length === 0) break;
    }
    if (!stores?.cloud1 || !stores.cloud2) throw new Error(`the API at ${this.base} does not say where its objects are (no download.stores); pass --endpoint URL`);
    return { series, stores, size_MB: size, warnings: [...warnings] };
  }

  async licenses(filters: Filters): Promise<LicenseRow[]> {
    return (await this.post<{ licenses: LicenseRow[] }>('/v3/licenses', { filters })).licenses;
  }

  /** Index rows of series given by crdc_series_uuid (unknown or malformed UUIDs are simply absent). */
  async seriesByUuid(uuids: string[]): Promise<SeriesRow[]> {
    const valid = [...new Set(uuids.filter((u) => /^[0-9a-fA-F-]{36}$/.test(u)))];
    const out: SeriesRow[] = [];
    for (let i = 0; i < valid.length; i += 1000) {
      const chunk = valid.slice(i, i + 1000);
      // Values are checked to be UUIDs above, so they are safe as SQL literals.
      const sql =
        `SELECT collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, aws_bucket, crdc_series_uuid, series_size_MB, license_short_name ` +
        `FROM index WHERE crdc_series_uuid IN (${chunk.map((u) => `'${u}'`).join(', ')})`;
      const r = await this.post<{ rows: SeriesRow[] }>('/v3/sql', { sql, max_rows: chunk.length });
      out.push(...r.rows);
    }
    return out;
  }
}
