// VolView links as the portal writes them: the app's URL with
// ?urls=[s3://<bucket>/<crdc_series_uuid>,…], one entry per series (the
// series given, or every series of the study). VolView opens volumes: slide
// microscopy (SM) and photographs (XC) are refused, and so is a study whose
// series lie in several buckets (the portal disables the link for those).

import type { AppContext } from '../context.ts';
import { field, invalidRequest, msg, type Part } from '../errors.ts';

/** Modalities VolView cannot open: slide microscopy and external-camera photographs. */
export const NOT_VOLUMES = ['SM', 'XC'] as const;

/** The link for a list of series folders (`s3://bucket/uuid`), written literally as the portal does. */
export function volviewLink(base: string, folders: readonly string[]): string {
  return `${base}${base.includes('?') ? '&' : '?'}urls=[${folders.join(',')}]`;
}

/** A series as VolView needs it. */
export interface VolviewSeries {
  bucket: string;
  uuid: string;
  modality: string | null;
}

/** Why VolView cannot open these series (their modalities, or several buckets), or null when it can. */
export function volviewRefusal(series: readonly VolviewSeries[], what: 'study' | 'series'): Part[] | null {
  const bad = [...new Set(series.flatMap((r) => (r.modality !== null && (NOT_VOLUMES as readonly string[]).includes(r.modality) ? [r.modality] : [])))].sort();
  if (bad.length > 0) {
    return msg`VolView opens volumes; this ${what} has ${bad.join(' and ')} (${bad.includes('SM') ? 'slide microscopy' : 'photographs'}), which it cannot show. Use ${field('viewer')} slim for slide microscopy, or ohif_v3.`;
  }
  const buckets = [...new Set(series.map((r) => r.bucket))].sort();
  if (buckets.length > 1) {
    return msg`VolView opens series from one bucket; this study's series lie in ${buckets.length} (${buckets.join(', ')}). Give one ${field('series_instance_uid')} of the study instead.`;
  }
  return null;
}

/** The link, or null when VolView cannot open these series. */
export function volviewFor(base: string, series: readonly VolviewSeries[]): string | null {
  return series.length === 0 || volviewRefusal(series, 'study') !== null ? null : volviewLink(base, series.map((r) => `s3://${r.bucket}/${r.uuid}`));
}

/** The series of a study (or the one series) as VolView opens them, or a 422 saying why it cannot. */
export async function volviewUrl(ctx: AppContext, study: string, series: string | null): Promise<string> {
  const rows = await ctx.engine.rows(
    `SELECT aws_bucket AS b, crdc_series_uuid AS u, Modality AS m FROM "index"
     WHERE StudyInstanceUID = ? ${series === null ? '' : 'AND SeriesInstanceUID = ?'} ORDER BY SeriesInstanceUID`,
    series === null ? [study] : [study, series],
  );
  const list = rows.map((r) => ({ bucket: String(r.b), uuid: String(r.u), modality: typeof r.m === 'string' ? r.m : null }));
  const refusal = volviewRefusal(list, series === null ? 'study' : 'series');
  if (refusal) throw invalidRequest(refusal);
  return volviewLink(ctx.config.volviewUrl, list.map((r) => `s3://${r.bucket}/${r.uuid}`));
}
