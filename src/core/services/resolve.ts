// Resolve what a user saved (a manifest, a list of UIDs) against the served
// release: every line is current, revised, removed, unknown, a header or not
// an identifier at all, with line numbers and totals, so nothing is dropped
// silently. Prior versions come from prior_versions_index (series versions no
// longer in the release, with the releases that had them and their URLs: the
// objects stay in the stores).

import type { AppContext } from '../context.ts';
import { field, invalidQuery, msg, setting, tooLarge } from '../errors.ts';
import { LEGACY_BUCKETS } from '../rules/stores.ts';
import { parseSavedLine, splitLines } from '../rules/saved-lines.ts';
import { toNumber } from './numbers.ts';

export type ResolveClass = 'current' | 'revised' | 'removed' | 'unknown' | 'header' | 'invalid';
export type IdKind = 'crdc_series_uuid' | 'SeriesInstanceUID' | 'StudyInstanceUID' | 'DICOM UID';

/** One version of a series that the served release no longer has. */
export interface PriorVersion {
  crdc_series_uuid: string;
  min_idc_version: number;
  max_idc_version: number;
  series_aws_url: string | null;
  aws_bucket: string | null;
  series_size_MB: number | null;
}

/** The version of a series the served release has. */
export interface CurrentVersion {
  crdc_series_uuid: string;
  /** Release of this revision (series_revised_idc_version). */
  since_idc_version: number | null;
  series_aws_url: string | null;
  aws_bucket: string | null;
  series_size_MB: number | null;
  license_short_name: string | null;
}

export interface ResolvedLine {
  line: number;
  class: ResolveClass;
  kind?: IdKind;
  /** The identifier read from the line (a UUID in lower case). */
  id?: string;
  /** Bucket of a URL line. */
  bucket?: string;
  collection_id?: string;
  PatientID?: string;
  StudyInstanceUID?: string;
  SeriesInstanceUID?: string;
  Modality?: string | null;
  /** Of a crdc_series_uuid line: the version it names, when the release no longer has it. */
  named?: PriorVersion;
  current?: CurrentVersion;
  /** Versions of the series the release no longer has, oldest first (revised and removed series). */
  versions?: PriorVersion[];
  /** Last release that had a removed series (or study). */
  last_idc_version?: number;
  /** Of a study line: its series in the release, and its series the release no longer has. */
  series_current?: number;
  series_removed?: number;
  /** Why a line is invalid or unknown, or a remark (a bucket no store has). */
  message?: string;
}

export interface ResolveTotals {
  lines: number;
  blank: number;
  comments: number;
  header: number;
  current: number;
  revised: number;
  removed: number;
  unknown: number;
  invalid: number;
}

export interface ResolveResult {
  /** The release the lines were resolved against (v<number>). */
  idc_version: string;
  totals: ResolveTotals;
  /** Every line that is not blank or a comment, in order. */
  lines: ResolvedLine[];
}

/** Where the lines come from: a text (a manifest file), or identifiers one per entry. */
export type ResolveInput = { text: string } | { ids: string[] };

/** Lists travel as one bound value: identifiers hold no comma. */
const LIST = (p: string) => `(SELECT unnest(string_split(${p}, ',')))`;

function prior(r: Record<string, unknown>): PriorVersion {
  return {
    crdc_series_uuid: String(r.crdc_series_uuid),
    min_idc_version: toNumber(r.min_v),
    max_idc_version: toNumber(r.max_v),
    series_aws_url: (r.url as string | null) ?? null,
    aws_bucket: (r.aws_bucket as string | null) ?? null,
    series_size_MB: r.size === null || r.size === undefined ? null : toNumber(r.size),
  };
}

interface SeriesFacts {
  collection_id: string;
  PatientID: string;
  StudyInstanceUID: string;
  Modality: string | null;
  current?: CurrentVersion;
  versions: PriorVersion[];
}

export async function resolveSaved(ctx: AppContext, input: ResolveInput): Promise<ResolveResult> {
  const raw = 'text' in input ? splitLines(input.text) : input.ids;
  const max = ctx.config.resolveMaxLines;
  if (raw.length > max) {
    throw tooLarge(msg`${raw.length} lines were sent; one request resolves at most ${max} lines (${setting('IDQS_RESOLVE_MAX_LINES')}): split the ${field('text' in input ? 'text' : 'ids')} into parts.`);
  }
  if (!ctx.catalog.tables.includes('prior_versions_index')) {
    throw invalidQuery('The served release has no prior_versions_index table, so earlier versions of series cannot be resolved; serve a release that has it (idc-index-data 19.0.0 or later).');
  }
  const totals: ResolveTotals = { lines: raw.length, blank: 0, comments: 0, header: 0, current: 0, revised: 0, removed: 0, unknown: 0, invalid: 0 };
  const out: ResolvedLine[] = [];
  const uuids = new Set<string>();
  const uids = new Set<string>();
  let first = true;
  for (let i = 0; i < raw.length; i++) {
    const p = parseSavedLine(raw[i]!, first);
    if (p.type === 'blank') totals.blank++;
    else if (p.type === 'comment') totals.comments++;
    else {
      first = false;
      if (p.type === 'header') out.push({ line: i + 1, class: 'header', message: `a header line (${p.text.slice(0, 80)}), not an identifier` });
      else if (p.type === 'invalid') out.push({ line: i + 1, class: 'invalid', message: p.reason });
      else if (p.type === 'uuid') {
        uuids.add(p.value);
        const l: ResolvedLine = { line: i + 1, class: 'unknown', kind: 'crdc_series_uuid', id: p.value };
        if (p.bucket !== null) l.bucket = p.bucket;
        out.push(l);
      } else {
        uids.add(p.value);
        out.push({ line: i + 1, class: 'unknown', kind: 'DICOM UID', id: p.value });
      }
    }
  }

  // 1. Folders: the series each one is a version of, in the release or in the prior versions.
  const uuidSeries = new Map<string, { sid: string; current: boolean }>();
  if (uuids.size > 0) {
    const rows = await ctx.engine.rows(
      `WITH q AS (SELECT DISTINCT u FROM ${LIST('?')} t(u))
       SELECT q.u, i.SeriesInstanceUID AS sid, true AS cur FROM q JOIN "index" i ON i.crdc_series_uuid = q.u
       UNION ALL
       SELECT DISTINCT q.u, p.SeriesInstanceUID AS sid, false AS cur FROM q JOIN prior_versions_index p ON p.crdc_series_uuid = q.u`,
      [[...uuids].join(',')],
    );
    for (const r of rows) {
      const had = uuidSeries.get(String(r.u));
      if (!had || r.cur === true) uuidSeries.set(String(r.u), { sid: String(r.sid), current: r.cur === true });
    }
  }

  // 2. The series named or reached: their current version and every prior one.
  const sids = new Set<string>(uids);
  for (const v of uuidSeries.values()) sids.add(v.sid);
  const series = new Map<string, SeriesFacts>();
  if (sids.size > 0) {
    const list = [[...sids].join(',')];
    const [cur, old] = await Promise.all([
      ctx.engine.rows(
        `SELECT SeriesInstanceUID, collection_id, PatientID, StudyInstanceUID, Modality, crdc_series_uuid, series_revised_idc_version AS since,
           series_cloud1_url AS url, aws_bucket, series_size_MB AS size, license_short_name
         FROM "index" WHERE SeriesInstanceUID IN ${LIST('?')}`,
        list,
      ),
      // A version may have several rows (one per bucket it sat in): one per folder, the URL where there is one.
      ctx.engine.rows(
        `SELECT SeriesInstanceUID, crdc_series_uuid, any_value(collection_id) AS collection_id, any_value(PatientID) AS PatientID,
           any_value(StudyInstanceUID) AS StudyInstanceUID, any_value(Modality) AS Modality,
           min(min_idc_version) AS min_v, max(max_idc_version) AS max_v, max(series_aws_url) AS url, max(aws_bucket) AS aws_bucket, max(series_size_MB) AS size
         FROM prior_versions_index WHERE SeriesInstanceUID IN ${LIST('?')}
         GROUP BY SeriesInstanceUID, crdc_series_uuid ORDER BY SeriesInstanceUID, max_v, min_v`,
        list,
      ),
    ]);
    for (const r of cur) {
      series.set(String(r.SeriesInstanceUID), {
        collection_id: String(r.collection_id),
        PatientID: String(r.PatientID),
        StudyInstanceUID: String(r.StudyInstanceUID),
        Modality: (r.Modality as string | null) ?? null,
        current: {
          crdc_series_uuid: String(r.crdc_series_uuid),
          since_idc_version: r.since === null ? null : toNumber(r.since),
          series_aws_url: (r.url as string | null) ?? null,
          aws_bucket: (r.aws_bucket as string | null) ?? null,
          series_size_MB: r.size === null ? null : toNumber(r.size),
          license_short_name: (r.license_short_name as string | null) ?? null,
        },
        versions: [],
      });
    }
    for (const r of old) {
      const sid = String(r.SeriesInstanceUID);
      let s = series.get(sid);
      if (!s) {
        s = { collection_id: String(r.collection_id), PatientID: String(r.PatientID), StudyInstanceUID: String(r.StudyInstanceUID), Modality: (r.Modality as string | null) ?? null, versions: [] };
        series.set(sid, s);
      }
      s.versions.push(prior(r));
    }
  }

  // 3. UIDs that are no series: studies, in the release or only in prior versions.
  const studyUids = [...uids].filter((u) => !series.has(u));
  const studies = new Map<string, { collection_id: string; PatientID: string; current: number; removed: number; last: number | null }>();
  if (studyUids.length > 0) {
    const rows = await ctx.engine.rows(
      `WITH q AS (SELECT DISTINCT u FROM ${LIST('?')} t(u)),
       cur AS (SELECT StudyInstanceUID AS u, any_value(collection_id) AS c, any_value(PatientID) AS p, count(*) AS n
               FROM "index" WHERE StudyInstanceUID IN (SELECT u FROM q) GROUP BY 1),
       gone AS (SELECT StudyInstanceUID AS u, any_value(collection_id) AS c, any_value(PatientID) AS p, count(DISTINCT SeriesInstanceUID) AS n, max(max_idc_version) AS last
                FROM prior_versions_index WHERE StudyInstanceUID IN (SELECT u FROM q)
                  AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM "index" WHERE StudyInstanceUID IN (SELECT u FROM q)) GROUP BY 1)
       SELECT coalesce(cur.u, gone.u) AS u, coalesce(cur.c, gone.c) AS c, coalesce(cur.p, gone.p) AS p,
              coalesce(cur.n, 0) AS n_cur, coalesce(gone.n, 0) AS n_gone, gone.last
       FROM cur FULL OUTER JOIN gone ON cur.u = gone.u`,
      [studyUids.join(',')],
    );
    for (const r of rows) {
      studies.set(String(r.u), { collection_id: String(r.c), PatientID: String(r.p), current: toNumber(r.n_cur), removed: toNumber(r.n_gone), last: r.last === null ? null : toNumber(r.last) });
    }
  }

  const buckets = knownBuckets(ctx);
  const describe = (l: ResolvedLine, sid: string, s: SeriesFacts) => {
    l.collection_id = s.collection_id;
    l.PatientID = s.PatientID;
    l.StudyInstanceUID = s.StudyInstanceUID;
    l.SeriesInstanceUID = sid;
    l.Modality = s.Modality;
    if (s.current) l.current = s.current;
    if (s.versions.length > 0) l.versions = s.versions;
    if (!s.current) l.last_idc_version = Math.max(...s.versions.map((v) => v.max_idc_version));
  };
  for (const l of out) {
    if (l.kind === 'crdc_series_uuid') {
      const hit = uuidSeries.get(l.id!);
      const s = hit ? series.get(hit.sid) : undefined;
      if (!hit || !s) l.message = 'no version of any series of this release or of prior_versions_index has this crdc_series_uuid';
      else {
        describe(l, hit.sid, s);
        if (hit.current) {
          l.class = 'current';
          delete l.versions;
        } else {
          l.named = s.versions.find((v) => v.crdc_series_uuid === l.id);
          l.class = s.current ? 'revised' : 'removed';
        }
      }
      if (l.bucket !== undefined && !buckets.has(l.bucket)) {
        const where = hit ? ` (the release places this series in ${l.current?.aws_bucket ?? l.named?.aws_bucket ?? 'another bucket'})` : '';
        l.message = `${l.message ? `${l.message}; ` : ''}the bucket ${l.bucket} is not one of the stores' buckets${where}`;
      }
    } else if (l.kind === 'DICOM UID') {
      const s = series.get(l.id!);
      const st = studies.get(l.id!);
      if (s) {
        l.kind = 'SeriesInstanceUID';
        describe(l, l.id!, s);
        l.class = s.current ? (s.versions.length > 0 ? 'revised' : 'current') : 'removed';
      } else if (st) {
        l.kind = 'StudyInstanceUID';
        l.collection_id = st.collection_id;
        l.PatientID = st.PatientID;
        l.StudyInstanceUID = l.id!;
        l.series_current = st.current;
        l.series_removed = st.removed;
        if (st.current > 0) l.class = 'current';
        else {
          l.class = 'removed';
          if (st.last !== null) l.last_idc_version = st.last;
        }
      } else l.message = 'no series or study of this release or of prior_versions_index has this UID';
    }
    totals[l.class]++;
  }
  return { idc_version: ctx.dataset.release, totals, lines: out };
}

/** Buckets of either store, under their names in both (a URL of a portal manifest may name either). */
function knownBuckets(ctx: AppContext): Set<string> {
  const out = new Set<string>(LEGACY_BUCKETS.keys());
  for (const store of [ctx.dataset.stores.cloud1, ctx.dataset.stores.cloud2]) {
    for (const [from, to] of Object.entries(store.bucket_map)) {
      out.add(from);
      out.add(to);
    }
  }
  return out;
}
