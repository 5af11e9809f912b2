// Links to the web DICOM viewers for a study or series: OHIF (v3 by default,
// v2 on request) for radiology, Slim for slide microscopy, VolView on request
// (volview.ts).

import type { AppContext } from '../context.ts';
import { field, invalidQuery, msg, notFound, see } from '../errors.ts';
import { volviewUrl } from './volview.ts';

export const VIEWERS = ['ohif_v2', 'ohif_v3', 'slim', 'volview'] as const;
export type Viewer = (typeof VIEWERS)[number];

export interface ViewerRequest {
  study_instance_uid?: string | null;
  series_instance_uid?: string | null;
  viewer?: string | null;
}

export interface ViewerUrlResult {
  viewer_url: string;
  viewer: Viewer;
  study_instance_uid: string;
  series_instance_uid: string | null;
  /** Modalities of the study, ascending. */
  modalities: string[];
}

function present(v: string | null | undefined): string | null {
  if (v === undefined || v === null) return null;
  const t = v.trim();
  return t === '' ? null : t;
}

function isViewer(v: string): v is Viewer {
  return (VIEWERS as readonly string[]).includes(v);
}

/** The URL templates of the public viewers (identical to idc-index get_viewer_URL for DICOM UIDs); VolView's names series folders instead (volview.ts). */
export function viewerLink(base: string, viewer: Exclude<Viewer, 'volview'>, study: string, series: string | null): string {
  const st = encodeURIComponent(study);
  const se = series === null ? null : encodeURIComponent(series);
  switch (viewer) {
    case 'ohif_v2':
      return `${base}/viewer/${st}${se ? `?SeriesInstanceUID=${se}` : ''}`;
    case 'ohif_v3':
      return `${base}/v3/viewer/?StudyInstanceUIDs=${st}${se ? `&initialSeriesInstanceUID=${se}` : ''}`;
    case 'slim':
      return `${base}/slim/studies/${st}${se ? `/series/${se}` : ''}`;
  }
}

/** The viewer a study opens in by default: Slim when it has a slide-microscopy (SM) series, else OHIF v3. */
export function defaultViewer(studyModalities: readonly string[]): Exclude<Viewer, 'volview'> {
  return studyModalities.includes('SM') ? 'slim' : 'ohif_v3';
}

/**
 * Resolve a viewer link. The study is looked up from the series when only the
 * series is given; when both are given the series must belong to the study.
 * Without an explicit viewer, studies with a slide-microscopy (SM) series open
 * in Slim and all others in OHIF v3.
 */
export async function viewerUrl(ctx: AppContext, req: ViewerRequest): Promise<ViewerUrlResult> {
  let study = present(req.study_instance_uid);
  const series = present(req.series_instance_uid);
  if (study === null && series === null) {
    throw invalidQuery(msg`Provide ${field('series_instance_uid')} or ${field('study_instance_uid')} (or both).`);
  }
  const requested = present(req.viewer);
  if (requested !== null && !isViewer(requested)) {
    throw invalidQuery(
      msg`${field('viewer')} must be one of: ${VIEWERS.join(', ')}; got ${JSON.stringify(requested)}. Omit it to choose by modality (slim for slide microscopy, otherwise ohif_v3).`,
    );
  }

  if (series !== null) {
    const row = await ctx.engine.one(`SELECT StudyInstanceUID FROM "index" WHERE SeriesInstanceUID = ? LIMIT 1`, [series]);
    if (!row) throw notFound(msg`SeriesInstanceUID not found: ${JSON.stringify(series)}. Check the UID (e.g. with ${see('run_sql')} on index).`);
    const owner = String(row.StudyInstanceUID);
    if (study !== null && study !== owner) {
      throw invalidQuery(
        msg`${field('series_instance_uid')} ${JSON.stringify(series)} does not belong to ${field('study_instance_uid')} ${JSON.stringify(study)}; it belongs to study ${JSON.stringify(
          owner,
        )}. Pass that study, or omit ${field('study_instance_uid')}.`,
      );
    }
    study = owner;
  }

  const rows = await ctx.engine.rows(`SELECT DISTINCT Modality FROM "index" WHERE StudyInstanceUID = ? ORDER BY 1`, [study!]);
  if (rows.length === 0) throw notFound(msg`StudyInstanceUID not found: ${JSON.stringify(study)}. Check the UID (e.g. with ${see('run_sql')} on index).`);
  const modalities = rows.map((r) => r.Modality).filter((m): m is string => typeof m === 'string' && m !== '');
  const viewer: Viewer = requested ?? defaultViewer(modalities);
  return {
    viewer_url: viewer === 'volview' ? await volviewUrl(ctx, study!, series) : viewerLink(ctx.config.viewerBaseUrl, viewer, study!, series),
    viewer,
    study_instance_uid: study!,
    series_instance_uid: series,
    modalities,
  };
}

export interface ViewerExample {
  study_instance_uid: string;
  series_instance_uid: string;
  /** A study that opens in Slim, when the data has one. */
  sm_study_instance_uid: string | null;
}

/**
 * A real radiology series and its study for documentation examples: a CT
 * series of nlst when present, else any CT, else any non-microscopy series.
 */
export async function viewerExample(ctx: AppContext): Promise<ViewerExample | null> {
  // The same order in narrower scopes first (nlst CT, then CT, then all): the first row of a non-empty
  // scope is the first row of the whole order, at a fraction of its cost on the start path.
  let row: Record<string, unknown> | undefined;
  for (const scope of ["collection_id = 'nlst' AND Modality = 'CT'", "Modality = 'CT'", 'TRUE']) {
    row = await ctx.engine.one(
      `SELECT StudyInstanceUID, SeriesInstanceUID FROM "index"
       WHERE ${scope} AND Modality IS NOT NULL AND Modality <> 'SM'
         AND StudyInstanceUID NOT IN (SELECT StudyInstanceUID FROM "index" WHERE Modality = 'SM')
       ORDER BY (collection_id = 'nlst' AND Modality = 'CT') DESC, (Modality = 'CT') DESC, SeriesInstanceUID
       LIMIT 1`,
    );
    if (row) break;
  }
  if (!row) return null;
  const sm = await ctx.engine.one(`SELECT min(StudyInstanceUID) AS study FROM "index" WHERE Modality = 'SM'`);
  return {
    study_instance_uid: String(row.StudyInstanceUID),
    series_instance_uid: String(row.SeriesInstanceUID),
    sm_study_instance_uid: typeof sm?.study === 'string' ? sm.study : null,
  };
}
