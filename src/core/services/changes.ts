// What changed in a cohort between two releases: series added (served by the
// later release only), revised (served by both, in another version) and
// removed (served by the earlier only), with counts and sizes, computed from
// the served release's index and prior_versions_index.

import type { AppContext } from '../context.ts';
import { manifestCapOf } from '../../config.ts';
import { field, invalidQuery, msg, setting, tooLarge } from '../errors.ts';
import type { FilterObject } from '../filters/v3.ts';
import { round, tbFromMb, toNumber } from './numbers.ts';
import { parseReleaseArg, servedSql, VERSION_ATTRIBUTES, versionFilter } from './release-versions.ts';
import { gapWarning } from './as-of.ts';
import { pagedLines, streamLines } from './line-stream.ts';

export const CHANGE_KINDS = ['added', 'revised', 'removed'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export interface ChangeRow {
  change: ChangeKind;
  SeriesInstanceUID: string;
  collection_id: string;
  PatientID: string;
  StudyInstanceUID: string;
  Modality: string | null;
  /** The version the earlier release served (null when added). */
  from_crdc_series_uuid: string | null;
  /** The version the later release serves (null when removed). */
  to_crdc_series_uuid: string | null;
  /** URL of the later version, or of the earlier one for a removed series (its objects stay in the stores). */
  series_aws_url: string | null;
  series_size_MB: number | null;
}

export interface ChangesRequest {
  filters?: FilterObject;
  from: string | number;
  to?: string | number;
  /** Rows to list (0 for counts only). */
  limit: number;
  /** Also count the changes per value of this attribute (a dashboard's rows). */
  by?: ChangeGroupBy;
}

/** What changes can be counted by: the attributes every release records. */
export const CHANGE_GROUP_BY = ['collection_id', 'Modality'] as const;
export type ChangeGroupBy = (typeof CHANGE_GROUP_BY)[number];

/** The changes of one value of `by`: series per kind, and the size of the changed ones. */
export interface ChangeGroup {
  value: string | null;
  added: number;
  revised: number;
  removed: number;
  unchanged: number;
  /** Size of the added, revised and removed series (of the later version; of the earlier for removed). */
  changed_MB: number;
}

export interface ChangesResult {
  from: string;
  to: string;
  /** The release whose data answered. */
  computed_on: string;
  counts: Record<ChangeKind, { series: number; size_MB: number; size_TB: number }> & { unchanged: number };
  series: ChangeRow[];
  returned: number;
  truncated: boolean;
  /** Attributes a filter over releases may use. */
  filterable: string[];
  /** Where the served release's records may disagree with the earlier release's own tables (as as_of says). */
  warnings: string[];
  /** With by: every value that has series in either release, most changed series first (then by value). */
  groups?: ChangeGroup[];
}

/** The SQL of every change between two releases for a filter, ordered; with its parameters. */
export async function changesQuery(ctx: AppContext, req: Omit<ChangesRequest, 'limit'>): Promise<{ sql: string; params: string[]; from: number; to: number }> {
  const current = await parseReleaseArg(ctx, ctx.dataset.release, 'to');
  const from = await parseReleaseArg(ctx, req.from, 'from');
  const to = req.to === undefined ? current : await parseReleaseArg(ctx, req.to, 'to');
  if (from >= to) throw invalidQuery(msg`${field('from')} (v${from}) must be an earlier release than ${field('to')} (v${to}).`);
  const w = versionFilter(req.filters, 'filters');
  const sql = `SELECT CASE WHEN a.SeriesInstanceUID IS NULL THEN 'added' WHEN b.SeriesInstanceUID IS NULL THEN 'removed'
        WHEN a.crdc_series_uuid <> b.crdc_series_uuid THEN 'revised' ELSE 'unchanged' END AS change,
      coalesce(b.SeriesInstanceUID, a.SeriesInstanceUID) AS SeriesInstanceUID, coalesce(b.collection_id, a.collection_id) AS collection_id,
      coalesce(b.PatientID, a.PatientID) AS PatientID, coalesce(b.StudyInstanceUID, a.StudyInstanceUID) AS StudyInstanceUID,
      coalesce(b.Modality, a.Modality) AS Modality, a.crdc_series_uuid AS from_crdc_series_uuid, b.crdc_series_uuid AS to_crdc_series_uuid,
      coalesce(b.url, a.url) AS series_aws_url, coalesce(b.series_size_MB, a.series_size_MB) AS series_size_MB
    FROM ${servedSql(current, from, w.sql)} a FULL OUTER JOIN ${servedSql(current, to, w.sql)} b ON a.SeriesInstanceUID = b.SeriesInstanceUID`;
  return { sql, params: [...w.params, ...w.params], from, to };
}

export async function cohortChanges(ctx: AppContext, req: ChangesRequest): Promise<ChangesResult> {
  if (!ctx.catalog.tables.includes('prior_versions_index')) throw invalidQuery('The served release has no prior_versions_index table, so earlier releases cannot be compared.');
  if (req.by !== undefined && !(CHANGE_GROUP_BY as readonly string[]).includes(req.by)) {
    throw invalidQuery(msg`${field('by')} must be one of ${CHANGE_GROUP_BY.join(', ')}; got ${JSON.stringify(req.by)}.`);
  }
  const q = await changesQuery(ctx, req);
  const grouped =
    req.by === undefined
      ? Promise.resolve(undefined)
      : ctx.engine
          .rows(
            `SELECT ${req.by} AS value, count(*) FILTER (WHERE change = 'added') AS added, count(*) FILTER (WHERE change = 'revised') AS revised,
               count(*) FILTER (WHERE change = 'removed') AS removed, count(*) FILTER (WHERE change = 'unchanged') AS unchanged,
               coalesce(sum(series_size_MB) FILTER (WHERE change <> 'unchanged'), 0) AS mb
             FROM (${q.sql}) GROUP BY 1 ORDER BY added + revised + removed DESC, 1 NULLS LAST`,
            q.params,
          )
          .then((rows) =>
            rows.map((g) => ({
              value: g.value === null ? null : String(g.value),
              added: toNumber(g.added),
              revised: toNumber(g.revised),
              removed: toNumber(g.removed),
              unchanged: toNumber(g.unchanged),
              changed_MB: round(toNumber(g.mb), 3),
            })),
          );
  const [totals, rows, groups] = await Promise.all([
    ctx.engine.rows(`SELECT change, count(*) AS n, coalesce(sum(series_size_MB), 0) AS mb FROM (${q.sql}) GROUP BY change`, q.params),
    req.limit > 0
      ? ctx.engine.rows(
          `SELECT * FROM (${q.sql}) WHERE change <> 'unchanged' ORDER BY change, collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID LIMIT ${Math.floor(req.limit) + 1}`,
          q.params,
        )
      : Promise.resolve([]),
    grouped,
  ]);
  const counts = { added: { series: 0, size_MB: 0, size_TB: 0 }, revised: { series: 0, size_MB: 0, size_TB: 0 }, removed: { series: 0, size_MB: 0, size_TB: 0 }, unchanged: 0 };
  for (const t of totals) {
    const n = toNumber(t.n);
    const mb = toNumber(t.mb);
    if (t.change === 'unchanged') counts.unchanged = n;
    else counts[t.change as ChangeKind] = { series: n, size_MB: round(mb, 3), size_TB: tbFromMb(mb) };
  }
  const truncated = rows.length > req.limit;
  const series = rows.slice(0, req.limit).map((r) => ({ ...r, series_size_MB: r.series_size_MB === null ? null : toNumber(r.series_size_MB) }) as unknown as ChangeRow);
  return {
    from: `v${q.from}`,
    to: `v${q.to}`,
    computed_on: ctx.dataset.release,
    counts,
    series,
    returned: series.length,
    truncated,
    filterable: [...VERSION_ATTRIBUTES],
    warnings: [changesWarning(q.from, ctx.dataset.release)],
    ...(groups ? { groups } : {}),
  };
}

/**
 * Both releases are reconstructed from the served one's records, which know no gaps: a series absent from the
 * earlier release but recorded as first released before it (61 mri_dir series between 24.2.2 and 25.0.5) is
 * counted as unchanged instead of added. The same caution as as_of's, said on every comparison.
 */
export function changesWarning(from: number, computedOn: string): string {
  return `Changes are computed from ${computedOn}'s records, not from v${from}'s own tables. ${gapWarning(`v${from}`, computedOn)} Such series count as unchanged here rather than added; compare the two releases' own index tables (serve both: --release with a list) for an exact list.`;
}

const TSV_COLUMNS = ['change', 'SeriesInstanceUID', 'collection_id', 'PatientID', 'StudyInstanceUID', 'Modality', 'from_crdc_series_uuid', 'to_crdc_series_uuid', 'series_aws_url', 'series_size_MB'];

/** A TSV cell in SQL: empty for NULL, tabs and line breaks as spaces; a whole number of MB without a decimal point (as JSON writes it). */
function tsvCell(c: string): string {
  const text = c === 'series_size_MB' ? `CASE WHEN ${c} = trunc(${c}) THEN CAST(CAST(${c} AS BIGINT) AS VARCHAR) ELSE CAST(${c} AS VARCHAR) END` : `CAST(${c} AS VARCHAR)`;
  return `coalesce(regexp_replace(${text}, '[\t\n\r]', ' ', 'g'), '')`;
}

export interface ChangesTsv {
  /** Changed series listed. */
  total: number;
  warnings: string[];
  /** The list, a header line first, streamed (bounded memory; no engine connection held while the reader is behind). */
  body: AsyncGenerator<Buffer>;
}

/** Every change as tab-separated lines (a header first): the downloadable list, streamed. */
export async function changesTsv(ctx: AppContext, req: Omit<ChangesRequest, 'limit'>): Promise<ChangesTsv> {
  const q = await changesQuery(ctx, req);
  // IDQS_MANIFEST_CAP 0 (the default) is no cap.
  const cap = manifestCapOf(ctx.config);
  const changed = `SELECT * FROM (${q.sql}) WHERE change <> 'unchanged'`;
  const lines = `SELECT concat_ws(chr(9), ${TSV_COLUMNS.map(tsvCell).join(', ')}) AS line
    FROM (${changed} ORDER BY change, collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID LIMIT ?::BIGINT OFFSET ?::BIGINT)`;
  const stream = streamLines(ctx, pagedLines(lines, q.params), cap, 'changes list');
  let total: number;
  try {
    const [count] = await Promise.all([ctx.engine.one(`SELECT count(*) AS n FROM (${changed})`, q.params), stream.started]);
    if (stream.error) throw stream.error;
    total = toNumber(count?.n);
    if (total > cap) {
      throw tooLarge(msg`More than ${cap} series changed between v${q.from} and v${q.to} for this filter; the list holds at most ${cap} (${setting('IDQS_MANIFEST_CAP')}): narrow ${field('filters')}, e.g. by collection_id.`);
    }
  } catch (e) {
    stream.stop();
    throw e;
  }
  async function* body(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from(TSV_COLUMNS.join('\t') + '\n');
      yield* stream.blocks();
    } finally {
      stream.stop();
    }
  }
  return { total, warnings: [changesWarning(q.from, ctx.dataset.release)], body: body() };
}
