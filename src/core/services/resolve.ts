// Resolve what a user saved (a manifest, a list of UIDs) against the served
// release: every line is current, revised, removed, unknown, a header or not
// an identifier at all, with line numbers and totals, so nothing is dropped
// silently. Prior versions come from prior_versions_index (series versions no
// longer in the release, with the releases that had them and their URLs: the
// objects stay in the stores).

import type { AppContext } from '../context.ts';
import { field, invalidQuery, msg, setting, tooLarge } from '../errors.ts';
import { storesInfo, type DownloadInfo } from './manifest.ts';
import { LEGACY_BUCKETS } from '../rules/stores.ts';
import { parseSavedLine, splitLines } from '../rules/saved-lines.ts';

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
  /** Where the objects of every version are (current and prior versions share the buckets). */
  stores: DownloadInfo['stores'];
}

/** Where the lines come from: a text (a manifest file), or identifiers one per entry. */
export type ResolveInput = { text: string } | { ids: string[] };

/** Lists travel as one bound value: identifiers hold no comma. */
const LIST = (p: string) => `(SELECT unnest(string_split(${p}, ',')))`;

// Rows come back packed in one string (fields and records split by control
// characters no identifier or URL holds): for 100,000 lines this is several
// times faster than converting each value of each row.
const FIELD = '\u001f';
const RECORD = '\u001e';
const NULL = '\u0002';

/** Columns of a current version, in the order the rows are read. */
const CUR_COLS = `SeriesInstanceUID, collection_id, PatientID, StudyInstanceUID, Modality, crdc_series_uuid, series_revised_idc_version,
  series_cloud1_url, aws_bucket, series_size_MB, license_short_name`;

/** A row of N fields. */
type Fields<N extends number, A extends (string | null)[] = []> = A['length'] extends N ? A : Fields<N, [...A, string | null]>;

/** SQL of the rows of a query of `n` columns packed in one string (column `packed`), in the order of `orderBy` (columns c0.., or none). */
function packedSql(n: number, sql: string, orderBy = ''): string {
  const names = Array.from({ length: n }, (_, i) => `c${i}`);
  const fields = names.map((c) => `coalesce(CAST(${c} AS VARCHAR), '${NULL}')`).join(', ');
  return `SELECT string_agg(concat_ws('${FIELD}', ${fields}), '${RECORD}'${orderBy ? ` ORDER BY ${orderBy}` : ''}) AS packed FROM (${sql}) AS t(${names.join(', ')})`;
}

/** The rows packed by packedSql, as arrays of strings (null for NULL). */
function unpack<N extends number>(packed: unknown): Fields<N>[] {
  if (typeof packed !== 'string' || packed === '') return [];
  return packed.split(RECORD).map((rec) => rec.split(FIELD).map((v) => (v === NULL ? null : v)) as Fields<N>);
}

/** The rows of a query of `n` columns as arrays of strings (null for NULL). */
async function packedRows<N extends number>(ctx: AppContext, n: N, sql: string, params: string[]): Promise<Fields<N>[]> {
  return unpack<N>((await ctx.engine.one(packedSql(n, sql), params))?.packed);
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
  // Every identifier as sent (the query keeps each once): a Set here would hash every one of them once more.
  const uuids: string[] = [];
  const uids: string[] = [];
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
        uuids.push(p.value);
        const l: ResolvedLine = { line: i + 1, class: 'unknown', kind: 'crdc_series_uuid', id: p.value };
        if (p.bucket !== null) l.bucket = p.bucket;
        out.push(l);
      } else {
        uids.push(p.value);
        out.push({ line: i + 1, class: 'unknown', kind: 'DICOM UID', id: p.value });
      }
    }
  }

  // 1. The series named or reached, in one pass over each table: the prior versions of the folders and UIDs
  // asked, then the current rows of those folders, UIDs and of the series the prior versions belong to, then
  // every prior version of all of them.
  const series = new Map<string, SeriesFacts>();
  // The series of each folder asked (its facts held here, so a line's folder is one lookup).
  const uuidSeries = new Map<string, { sid: string; s: SeriesFacts; current: boolean }>();
  if (uuids.length > 0 || uids.length > 0) {
    const params = [uuids.join(','), uids.join(',')];
    // One query, its sets materialised once: the asked lists, the series of prior versions asked, the current rows (one scan of
    // index for both kinds of identifier), and every prior version of all of them.
    const cte = `qu AS MATERIALIZED (SELECT DISTINCT u FROM ${LIST('?')} t(u)), qs AS MATERIALIZED (SELECT DISTINCT u FROM ${LIST('?')} t(u)),
      pv AS MATERIALIZED (SELECT DISTINCT SeriesInstanceUID AS sid FROM prior_versions_index WHERE crdc_series_uuid IN (SELECT u FROM qu) OR SeriesInstanceUID IN (SELECT u FROM qs)),
      cur AS MATERIALIZED (SELECT ${CUR_COLS}, crdc_series_uuid IN (SELECT u FROM qu) AS asked FROM "index" WHERE crdc_series_uuid IN (SELECT u FROM qu) OR SeriesInstanceUID IN (SELECT u FROM qs UNION ALL SELECT sid FROM pv))`;
    // A version may have several rows (one per bucket it sat in): one per folder, the URL where there is one.
    // Rows of either table say whether their folder was asked (the engine has that set at hand; a lookup here would hash every folder again).
    const prior = `SELECT g.*, g.u IN (SELECT u FROM qu) FROM (SELECT SeriesInstanceUID, crdc_series_uuid AS u, any_value(collection_id), any_value(PatientID),
        any_value(StudyInstanceUID), any_value(Modality), min(min_idc_version), max(max_idc_version), max(series_aws_url), max(aws_bucket), max(series_size_MB)
      FROM prior_versions_index WHERE SeriesInstanceUID IN (SELECT sid FROM pv UNION ALL SELECT SeriesInstanceUID FROM cur)
      GROUP BY SeriesInstanceUID, crdc_series_uuid) AS g`;
    const both = await ctx.engine.one(
      `WITH ${cte} SELECT (${packedSql(12, `SELECT ${CUR_COLS}, asked FROM cur`)}) AS cur, (${packedSql(12, prior, 'c0, c7, c6')}) AS old`,
      params,
    );
    const cur = unpack<12>(both?.cur);
    const old = unpack<12>(both?.old);
    for (const [sid, collection_id, PatientID, StudyInstanceUID, Modality, uuid, since, url, bucket, size, license, asked] of cur) {
      const s: SeriesFacts = {
        collection_id: collection_id!,
        PatientID: PatientID!,
        StudyInstanceUID: StudyInstanceUID!,
        Modality,
        current: {
          crdc_series_uuid: uuid!,
          since_idc_version: since === null ? null : Number(since),
          series_aws_url: url,
          aws_bucket: bucket,
          series_size_MB: size === null ? null : Number(size),
          license_short_name: license,
        },
        versions: [],
      };
      series.set(sid!, s);
      if (asked === 'true') uuidSeries.set(uuid!, { sid: sid!, s, current: true });
    }
    for (const [sid, uuid, collection_id, PatientID, StudyInstanceUID, Modality, min, max, url, bucket, size, asked] of old) {
      let s = series.get(sid!);
      if (s === undefined) {
        s = { collection_id: collection_id!, PatientID: PatientID!, StudyInstanceUID: StudyInstanceUID!, Modality, versions: [] };
        series.set(sid!, s);
      }
      s.versions.push({
        crdc_series_uuid: uuid!,
        min_idc_version: Number(min),
        max_idc_version: Number(max),
        series_aws_url: url,
        aws_bucket: bucket,
        series_size_MB: size === null ? null : Number(size),
      });
      if (asked === 'true' && !uuidSeries.has(uuid!)) uuidSeries.set(uuid!, { sid: sid!, s, current: false });
    }
  }

  // 2. UIDs that are no series: studies, in the release or only in prior versions.
  const studyUids = uids.filter((u) => !series.has(u));
  const studies = new Map<string, { collection_id: string; PatientID: string; current: number; removed: number; last: number | null }>();
  if (studyUids.length > 0) {
    const rows = await packedRows(
      ctx,
      6,
      `WITH q AS (SELECT DISTINCT u FROM ${LIST('?')} t(u)),
       cur AS (SELECT StudyInstanceUID AS u, any_value(collection_id) AS c, any_value(PatientID) AS p, count(*) AS n
               FROM "index" WHERE StudyInstanceUID IN (SELECT u FROM q) GROUP BY 1),
       gone AS (SELECT StudyInstanceUID AS u, any_value(collection_id) AS c, any_value(PatientID) AS p, count(DISTINCT SeriesInstanceUID) AS n, max(max_idc_version) AS last
                FROM prior_versions_index WHERE StudyInstanceUID IN (SELECT u FROM q)
                  AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM "index" WHERE StudyInstanceUID IN (SELECT u FROM q)) GROUP BY 1)
       SELECT coalesce(cur.u, gone.u), coalesce(cur.c, gone.c), coalesce(cur.p, gone.p), coalesce(cur.n, 0), coalesce(gone.n, 0), gone.last
       FROM cur FULL OUTER JOIN gone ON cur.u = gone.u`,
      [studyUids.join(',')],
    );
    for (const [u, c, p, n, gone, last] of rows) {
      studies.set(u!, { collection_id: c!, PatientID: p!, current: Number(n), removed: Number(gone), last: last === null ? null : Number(last) });
    }
  }

  const buckets = knownBuckets(ctx);
  // `versions` is left out rather than deleted for a current folder: a deleted property turns an object into a
  // slow dictionary, which JSON.stringify and the TSV rows then read several times slower.
  const describe = (l: ResolvedLine, sid: string, s: SeriesFacts, versions: boolean) => {
    l.collection_id = s.collection_id;
    l.PatientID = s.PatientID;
    l.StudyInstanceUID = s.StudyInstanceUID;
    l.SeriesInstanceUID = sid;
    l.Modality = s.Modality;
    if (s.current) l.current = s.current;
    if (versions && s.versions.length > 0) l.versions = s.versions;
    if (!s.current) l.last_idc_version = Math.max(...s.versions.map((v) => v.max_idc_version));
  };
  for (const l of out) {
    if (l.kind === 'crdc_series_uuid') {
      const hit = uuidSeries.get(l.id!);
      if (!hit) l.message = 'no version of any series of this release or of prior_versions_index has this crdc_series_uuid';
      else {
        const s = hit.s;
        describe(l, hit.sid, s, !hit.current);
        if (hit.current) l.class = 'current';
        else {
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
      const st = s ? undefined : studies.get(l.id!);
      if (s) {
        l.kind = 'SeriesInstanceUID';
        describe(l, l.id!, s, true);
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
  return { idc_version: ctx.dataset.release, totals, lines: out, stores: storesInfo(ctx) };
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
