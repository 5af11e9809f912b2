// Series looked up by their folder in the buckets (crdc_series_uuid, the
// <uuid> of s3://<bucket>/<uuid>/*): their manifest rows, their licenses and
// where the stores are. The downloader reads a manifest of URLs through it,
// to place files in the layout's folders and report sizes and licenses.

import type { AppContext } from '../context.ts';
import { field, invalidQuery, msg } from '../errors.ts';
import { MANIFEST_ORDER, storesInfo, type DownloadInfo } from './manifest.ts';
import { ROW_SELECT, type ManifestRow } from './cohort.ts';
import { licenseBreakdown, type LicenseItem } from './licenses.ts';
import { isSeriesUuid } from '../rules/series-folder.ts';
import { round, tbFromMb } from './numbers.ts';

export interface SeriesLookup {
  /** The series found, in manifest order. */
  series: ManifestRow[];
  /** The UUIDs asked for that no series of the index has, in the order asked. */
  missing: string[];
  size_TB: number;
  size_MB: number;
  /** Series and size per license of the series found (the breakdown of the licenses route). */
  licenses: LicenseItem[];
  stores: DownloadInfo['stores'];
}

export async function lookupSeries(ctx: AppContext, uuids: string[]): Promise<SeriesLookup> {
  const asked = [...new Set(uuids)];
  const bad = asked.find((u) => !isSeriesUuid(u));
  if (bad !== undefined) {
    throw invalidQuery(msg`${field('crdc_series_uuid')} holds UUIDs (the folder of a series: s3://<bucket>/<crdc_series_uuid>/*); got ${JSON.stringify(bad)}.`);
  }
  if (asked.length === 0) return { series: [], missing: [], size_TB: 0, size_MB: 0, licenses: [], stores: storesInfo(ctx) };
  // UUIDs hold no comma: the list travels as one bound value.
  const where = `crdc_series_uuid IN (SELECT unnest(string_split(?, ',')))`;
  const params = [asked.join(',')];
  const [rows, licenses] = await Promise.all([
    ctx.engine.rows(`SELECT ${ROW_SELECT} FROM "index" WHERE ${where} ORDER BY ${MANIFEST_ORDER}`, params),
    licenseBreakdown(ctx, where, params),
  ]);
  const series = rows as unknown as ManifestRow[];
  const found = new Set(series.map((r) => r.crdc_series_uuid));
  const mb = series.reduce((s, r) => s + (r.series_size_MB ?? 0), 0);
  return {
    series,
    missing: asked.filter((u) => !found.has(u)),
    size_TB: tbFromMb(mb),
    size_MB: round(mb, 3),
    licenses,
    stores: storesInfo(ctx),
  };
}
