// The downloader's client of a running IDQS service: it resolves a cohort to
// series (pages of the cohort manifest route), reads the stores' endpoints
// and bucket names from that payload, the license breakdown (the licenses
// route), and the rows, licenses and stores of a manifest's series (the
// series look-up route). Only HTTP: the downloader never opens the database;
// its wire types are those of the routes' own schemas (src/contract).

import { isSeriesUuid } from '../core/rules/series-folder.ts';
import type { StoreKey } from '../core/rules/stores.ts';
import { SURFACES } from '../contract/capabilities.ts';
import { SERIES_LOOKUP_MAX, type LicenseItemWire, type ManifestRowWire, type SeriesLookupWire, type StoreWire } from '../contract/cohort-schemas.ts';
import type { FilterBody } from '../contract/filter-schema.ts';
import type { ResolveWire } from '../contract/resolve-schemas.ts';
import { applyLimit } from '../contract/limits.ts';

export type { StoreKey };
export type StoreMeta = StoreWire;
export type SeriesRow = ManifestRowWire;
export type LicenseRow = LicenseItemWire;
export type Filters = FilterBody;

export class ServiceUnreachable extends Error {}

/** Lines of a saved manifest read, resolved and planned at once (below the service's default limit): what bounds the downloader's memory. */
export const RESOLVE_CHUNK = 2_000;

/** Series asked per manifest page: the service lowers it to its own ceiling and pages follow the size it applied. */
const PAGE_SIZE = 5000;
const TIMEOUT_MS = 60_000;

export class ServiceClient {
  readonly base: string;
  /** The release asked of an API that serves several (--release); none: the newest it serves. */
  private readonly query: string;
  constructor(base: string, release?: string) {
    this.base = base.replace(/\/+$/, '');
    this.query = release ? `?release=${encodeURIComponent(release)}` : '';
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}${this.query}`, {
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

  /** One page of a cohort's manifest. */
  private async page(filters: Filters, page: number) {
    return this.post<{
      series: SeriesRow[];
      total_series: number;
      page_size: number;
      has_more: boolean;
      counts: { size_MB: number };
      download: { stores?: Record<StoreKey, StoreMeta> };
      warnings: string[];
    }>(SURFACES.build_cohort.rest.path, { filters, page, page_size: PAGE_SIZE });
  }

  /**
   * A cohort: its totals, the stores' metadata and the warnings (from its
   * first page), and its series in manifest order a page at a time, fetched as
   * they are read (a whole release is a million series: never all held).
   */
  async cohort(filters: Filters): Promise<{ total: number; stores: Record<StoreKey, StoreMeta>; size_MB: number; warnings: string[]; pages: () => AsyncGenerator<SeriesRow[]> }> {
    const first = await this.page(filters, 0);
    // The service's own warning of the page size it lowered says nothing about the cohort.
    const lowered = applyLimit('page_size', PAGE_SIZE, { default: PAGE_SIZE, cap: first.page_size }).warning;
    const stores = first.download.stores;
    if (!stores?.cloud1 || !stores.cloud2) throw new Error(`the API at ${this.base} does not say where its objects are (no download.stores); pass --endpoint URL`);
    const pages = async function* (this: ServiceClient): AsyncGenerator<SeriesRow[]> {
      for (let page = 0; ; page++) {
        const r = page === 0 ? first : await this.page(filters, page);
        if (r.total_series !== first.total_series) throw new Error(`the cohort changed while it was read (${first.total_series} series, now ${r.total_series}): the service switched release? Run the command again`);
        yield r.series;
        if (!r.has_more || r.series.length === 0) break;
      }
    };
    return { total: first.total_series, stores, size_MB: first.counts.size_MB, warnings: first.warnings.filter((w) => w !== lowered), pages: () => pages.call(this) };
  }

  async licenses(filters: Filters): Promise<LicenseRow[]> {
    return (await this.post<{ licenses: LicenseRow[] }>(SURFACES.get_licenses.rest.path, { filters })).licenses;
  }

  /**
   * The series of the given folders (crdc_series_uuid), their licenses and the
   * stores, in as many requests as the route's limit needs. Malformed UUIDs
   * are not asked for: no series has them.
   */
  async lookupSeries(uuids: string[]): Promise<{ series: SeriesRow[]; missing: string[]; licenses: LicenseRow[]; stores: Record<StoreKey, StoreMeta> | null }> {
    const asked = [...new Set(uuids)];
    const valid = asked.filter(isSeriesUuid);
    const out = { series: [] as SeriesRow[], missing: asked.filter((u) => !valid.includes(u)), licenses: [] as LicenseRow[], stores: null as Record<StoreKey, StoreMeta> | null };
    const byLicense = new Map<string | null, LicenseRow>();
    for (let i = 0; i < valid.length; i += SERIES_LOOKUP_MAX) {
      const r = await this.post<SeriesLookupWire>(SURFACES.lookup_series.rest.path, { crdc_series_uuid: valid.slice(i, i + SERIES_LOOKUP_MAX) });
      out.series.push(...r.series);
      out.missing.push(...r.missing);
      out.stores ??= r.stores as Record<StoreKey, StoreMeta>;
      // Breakdowns of several requests add up; what each license allows is the service's verdict.
      for (const l of r.licenses) {
        const sum = byLicense.get(l.license_short_name);
        if (sum) {
          sum.series += l.series;
          sum.size_MB += l.size_MB;
          sum.size_TB += l.size_TB;
        } else byLicense.set(l.license_short_name, { ...l });
      }
    }
    out.licenses = [...byLicense.values()].sort((a, b) => b.series - a.series);
    return out;
  }

  /**
   * What each line of one chunk of a saved manifest is in the served release
   * (line numbers from 1 within the chunk). The downloader streams a manifest
   * in chunks of at most RESOLVE_CHUNK lines.
   */
  async resolveLines(lines: string[]): Promise<ResolveWire> {
    return this.post<ResolveWire>(SURFACES.resolve_series.rest.path, { text: lines.join('\n') });
  }
}
