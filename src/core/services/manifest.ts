// Manifests of a cohort: object-store URLs of its series (one line per series,
// in manifest order) as a stream of lines or of text blocks, and the download
// payload. Buckets and endpoints come from the dataset's store metadata, never
// from code: cloud2 URLs use the bucket map of ctx.dataset.stores.cloud2 and
// keep the s3:// scheme (that store is reached through its S3-compatible
// endpoint). The command lines of the payload, which name this service's
// routes and the downloader's flags, are written by the caller (src/contract).

import { manifestCapOf } from '../../config.ts';
import type { AppContext } from '../context.ts';
import type { Param } from '../engine/engine.ts';
import { streamLines } from './line-stream.ts';
import { MANIFEST_ORDER } from '../rules/manifest-order.ts';

export { MANIFEST_ORDER };
import { answer } from '../planner/plan.ts';
import { field, invalidQuery, invalidRequest, msg } from '../errors.ts';
import { compileFilter, type CompiledFilter, type FilterObject } from '../filters/v3.ts';
import { folderNameSql } from '../rules/folder-name.ts';
import { DOWNLOAD_DIR, s5cmdFileName, s5cmdRunCommand } from '../rules/shell.ts';
import { STORE_ALIASES, type StoreKey } from '../rules/stores.ts';
import { asOfCohort } from './as-of.ts';
import { qi } from '../registry/tables.ts';
import { isTableFormat, jsonArray, manifestColumns, TABLE_FORMATS, tableLine, URL_COLUMN } from './manifest-columns.ts';

export type { StoreKey };

/** Columns a manifest line is built from (URL, bucket map, folders). */
const LINE_COLUMNS = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'aws_bucket', 'crdc_series_uuid', 'series_cloud1_url'];

export const MANIFEST_FORMATS = ['urls', 's5cmd', ...TABLE_FORMATS] as const;
export type ManifestFormat = (typeof MANIFEST_FORMATS)[number];

/** Names accepted for `source`: the neutral keys, the public service's names and the stores' own names. */
export function sourceNames(ctx: AppContext): Map<string, StoreKey> {
  const m = new Map(STORE_ALIASES);
  for (const key of ['cloud1', 'cloud2'] as const) {
    const name = ctx.dataset.stores[key].name.toLowerCase();
    if (name && !m.has(name)) m.set(name, key);
  }
  return m;
}

export function resolveSource(ctx: AppContext, source: string | undefined | null): StoreKey {
  if (source === undefined || source === null) return 'cloud1';
  const names = sourceNames(ctx);
  const key = names.get(source.trim().toLowerCase());
  if (key) return key;
  const listed = [...names].map(([n, k]) => (n === k ? n : `${n} (= ${k})`)).join(', ');
  throw invalidQuery(msg`Unknown ${field('source')} ${JSON.stringify(source)}. Allowed values: ${listed}. The default is cloud1.`);
}

/**
 * SQL expression of the series URL in a store: the index's cloud1 URL when
 * the store keeps the primary bucket names, else s3://<mapped bucket>/<uuid>/*
 * with the bucket map bound as parameters.
 */
export function urlExpression(ctx: AppContext, store: StoreKey): { sql: string; params: Param[] } {
  const map = Object.entries(ctx.dataset.stores[store].bucket_map).filter(([from, to]) => from !== to);
  if (map.length === 0) return { sql: 'series_cloud1_url', params: [] };
  const cases = map.map(() => 'WHEN ? THEN ?').join(' ');
  return {
    sql: `'s3://' || CASE aws_bucket ${cases} ELSE aws_bucket END || '/' || crdc_series_uuid || '/*'`,
    params: map.flat(),
  };
}

/** SQL of one manifest line per series: the URL, or an s5cmd `cp` command into a per-series folder. */
function lineExpression(ctx: AppContext, store: StoreKey, format: ManifestFormat): { sql: string; params: Param[] } {
  const url = urlExpression(ctx, store);
  if (format === 'urls') return url;
  const folder = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID'].map(folderNameSql).join(` || '/' || `);
  return { sql: `'cp ''' || ${url.sql} || ''' ''${DOWNLOAD_DIR}/' || ${folder} || '/'''`, params: url.params };
}

/** The s5cmd command that runs a store's manifest file. */
export function s5cmdRun(ctx: AppContext, store: StoreKey, file = s5cmdFileName(store)): string {
  return s5cmdRunCommand(ctx.dataset.stores[store].endpoint, file);
}

export interface ManifestTextRequest {
  filters?: FilterObject;
  source?: string | null;
  /** Most series lines, already lowered to the caller's cap (default: the manifest cap). */
  limit?: number | null;
  format?: string | null;
  /** The columns of a table format (csv, tsv, json): a list, or names separated by commas; default DEFAULT_MANIFEST_COLUMNS. */
  columns?: unknown;
  /** A past release: the manifest of the versions of the series it served. */
  as_of?: string | number;
}

interface ManifestMeta {
  store: StoreKey;
  format: ManifestFormat;
  /** The columns of a table format's rows (empty for urls and s5cmd). */
  columns: string[];
  /** Series matching the filter. */
  total: number;
  /** Lines of series that will be sent: min(total, limit). */
  returned: number;
  truncated: boolean;
  /** The limit applied. */
  limit: number;
  filters_applied: CompiledFilter['filters_applied'];
  warnings: string[];
  /** With as_of: the release listed and the release whose data answered. */
  as_of?: string;
  computed_on?: string;
}

export interface ManifestText extends ManifestMeta {
  /**
   * The body, block by block. The engine fills a bounded spool ahead of the
   * reader and holds a connection only while it does; a slow reader makes it
   * pause (connection released) and resume where it stopped.
   */
  body: AsyncGenerator<Buffer>;
}

export interface ManifestLines extends ManifestMeta {
  /** One line per series (no line break), in manifest order. */
  lines: string[];
}


/** Check the request and count the cohort; the SQL of its lines. */
async function openManifest(ctx: AppContext, req: ManifestTextRequest) {
  const store = resolveSource(ctx, req.source);
  const format = (req.format ?? 'urls').trim().toLowerCase() as ManifestFormat;
  if (!MANIFEST_FORMATS.includes(format)) {
    throw invalidQuery(msg`Unknown ${field('format')} ${JSON.stringify(req.format)}. Allowed values: ${MANIFEST_FORMATS.join(', ')} (default urls).`);
  }
  const cap = manifestCapOf(ctx.config);
  const limit = req.limit ?? cap;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > cap) {
    throw invalidRequest(msg`${field('limit')} must be an integer from 1 to ${cap}; got ${JSON.stringify(limit)}.`);
  }
  const src = await manifestSource(ctx, req);
  const columns = manifestColumns(ctx, req.columns, format, src.names !== null);
  const table = isTableFormat(format) ? tableLine(format, columns, urlExpression(ctx, store)) : null;
  const line = table ?? lineExpression(ctx, store, format);
  // The row's own columns beside those every line is built from (url is computed from them).
  const read = [...new Set([...LINE_COLUMNS, ...columns.filter((c) => c !== URL_COLUMN)])].map(qi).join(', ');
  const { linesAt, total } = await answer('manifestLines', ctx, {
    from: src.from,
    where: src.where,
    params: src.params,
    // The rows of a past release (as_of) are no rows of the served index.
    indexable: src.names === null,
    filters: src.filters_applied,
    line,
    columns: read,
    order: MANIFEST_ORDER,
  });
  return { store, format, columns, header: table?.header ?? null, limit, compiled: src, linesAt, total };
}

/**
 * The rows a manifest lists: index rows matching the filter, or (as_of) the
 * versions a past release served, whose URLs are those of that version
 * (prior_versions_index's for a version since revised).
 */
async function manifestSource(ctx: AppContext, req: ManifestTextRequest) {
  if (req.as_of === undefined) {
    // An empty filter is the whole release, with the compiler's "entire dataset" warning: the body streams
    // in bounded memory, so the commands a manifest page prints for {} work as printed.
    const c = await compileFilter(ctx, req.filters);
    return { from: '"index"', where: c.where, params: c.params as Param[], filters_applied: c.filters_applied, warnings: c.warnings, names: null };
  }
  // An empty filter is the whole release that as_of names, streamed as the served release's is (with a warning saying so).
  const c = await asOfCohort(ctx, req.filters, req.as_of);
  if (c.empty) c.warnings.push(`No filter: this is every series of the whole ${c.as_of} release.`);
  const names = { as_of: c.as_of, computed_on: c.computed_on };
  return { from: c.from, where: 'TRUE', params: c.params as Param[], filters_applied: c.filters_applied, warnings: c.warnings, names };
}

function metaOf(o: Awaited<ReturnType<typeof openManifest>>, total: number): ManifestMeta {
  return {
    store: o.store,
    format: o.format,
    columns: o.columns,
    total,
    returned: Math.min(total, o.limit),
    truncated: total > o.limit,
    limit: o.limit,
    filters_applied: o.compiled.filters_applied,
    warnings: [...o.compiled.warnings],
    ...(o.compiled.names ?? {}),
  };
}

/** The first line of a manifest of a past release: a comment saying which release it lists (a saved file keeps it). */
export function asOfLine(m: Pick<ManifestMeta, 'as_of' | 'computed_on'>): string | null {
  return m.as_of === undefined ? null : `# The series versions release ${m.as_of} served, computed on release ${m.computed_on}.`;
}

/** The last line of a cut manifest: a comment every manifest reader skips. */
export function truncationLine(m: Pick<ManifestMeta, 'returned' | 'total' | 'limit'>): string {
  return `# Truncated: ${m.returned} of ${m.total} series listed (limit ${m.limit}); ${m.total - m.returned} series are not in this list. Raise the limit or narrow the filter to get them.`;
}

/**
 * The plain-text manifest, streamed (see line-stream.ts). A URL list is URLs only, one per line (clients read
 * it line by line as URLs): that a list is cut, or lists a past release, is said by the route's headers and the
 * JSON forms. An s5cmd run file, whose syntax has comments, also says both in its own comment lines (a saved
 * file keeps them), and how to run it.
 */
export async function manifestText(ctx: AppContext, req: ManifestTextRequest): Promise<ManifestText> {
  const o = await openManifest(ctx, req);
  const stream = streamLines(ctx, o.linesAt, o.limit, 'manifest');
  const [total] = await Promise.all([o.total(), stream.started]);
  if (stream.error) throw stream.error;
  const meta = metaOf(o, total);
  const comments = meta.format === 's5cmd';
  const header: string[] = [];
  const named = asOfLine(meta);
  if (comments && named !== null) header.push(named);
  if (comments) header.push(`# Run with: ${s5cmdRun(ctx, meta.store)}`);
  // A CSV or TSV manifest starts with its header row; a JSON one is an array (no comment lines in either).
  if (o.header !== null) header.push(o.header);
  async function* body(): AsyncGenerator<Buffer> {
    try {
      if (header.length > 0) yield Buffer.from(header.join('\n') + '\n');
      if (meta.format === 'json') yield* jsonArray(stream.blocks());
      else yield* stream.blocks();
      // A cut run file says so in its own last line, not only in headers a saved file loses.
      if (comments && meta.truncated) yield Buffer.from(truncationLine(meta) + '\n');
    } finally {
      // The reader stopped (finished, failed or gone): so does the producer.
      stream.stop();
    }
  }
  return { ...meta, body: body() };
}

/** The manifest as lines, one per series (what a caller that wants the URLs themselves reads; limits are small). */
export async function manifestLines(ctx: AppContext, req: ManifestTextRequest): Promise<ManifestLines> {
  const o = await openManifest(ctx, req);
  const q = o.linesAt(o.limit, 0);
  const [total, rows] = await Promise.all([o.total(), ctx.engine.rows(q.sql, q.params)]);
  return { ...metaOf(o, total), lines: rows.map((r) => String(r.line)) };
}

export interface DownloadCommands {
  /** Commands of the idqs downloader; each line (or the per-collection lines together) downloads the cohort. */
  idqs: string[];
  /** Save the URL manifest the `idqs download --manifest` line reads. */
  save_manifest: string;
  s5cmd_cloud1: string[];
  s5cmd_cloud2: string[];
}

/** The command lines of a download payload: ours, and the public service's `idc` list for clients written against it. */
export interface WrittenCommands {
  commands: DownloadCommands;
  idc_commands: string[];
}

/** Writes the command lines of a download payload for a filter (they name routes and flags: see src/contract). */
export type CommandWriter = (applied: CompiledFilter['filters_applied'], asOf?: string) => WrittenCommands;

export interface DownloadInfo {
  total_series: number;
  /**
   * The public service's list of `idc` commands (pip install idc-index), for
   * clients written against it: per collection when the filter is
   * collection_id alone, then the manifest route (save it, then idc download it).
   */
  idc_commands: string[];
  size_TB: number;
  size_MB: number;
  manifest_preview: string[];
  manifest_truncated: boolean;
  commands: DownloadCommands;
  /** Where the objects are: endpoint and bucket names of each store (what the idqs downloader reads). */
  stores: Record<StoreKey, { name: string; endpoint: string; bucket_map: Record<string, string> }>;
  note: string;
}

/** The stores as the download payload and the series look-up describe them. */
export function storesInfo(ctx: AppContext): DownloadInfo['stores'] {
  const stores = ctx.dataset.stores;
  return {
    cloud1: { name: stores.cloud1.name, endpoint: stores.cloud1.endpoint, bucket_map: stores.cloud1.bucket_map },
    cloud2: { name: stores.cloud2.name, endpoint: stores.cloud2.endpoint, bucket_map: stores.cloud2.bucket_map },
  };
}

/** Download payload of a manifest page: the commands for the same filters, and what to check first. */
export function downloadInfo(
  ctx: AppContext,
  args: { applied: CompiledFilter['filters_applied']; total_series: number; size_TB: number; size_MB: number; preview: string[]; commands: CommandWriter; as_of?: string },
): DownloadInfo {
  const cap = manifestCapOf(ctx.config);
  const truncated = args.total_series > cap;
  const stores = ctx.dataset.stores;
  const written = args.commands(args.applied, args.as_of);
  const note =
    `The buckets are public: no credentials are needed (s5cmd --no-sign-request). ` +
    `Check the size first (${args.size_TB} TB = ${args.size_MB} MB in ${args.total_series} series) and the licenses of the same filter before downloading. ` +
    (args.as_of === undefined
      ? `idqs: run the per-collection lines, or the --filters line, or save the manifest with save_manifest and run the --manifest line. `
      : `idqs: save the manifest of the versions ${args.as_of} served with save_manifest and run the --manifest --as-saved line (without --as-saved, the current versions are downloaded). `) +
    `s5cmd: run the two lines of s5cmd_cloud1 (${stores.cloud1.name}) or s5cmd_cloud2 (${stores.cloud2.name}) in order. ` +
    `cloud2 is reached through its S3-compatible endpoint ${stores.cloud2.endpoint}, so its URLs keep the s3:// scheme.` +
    (truncated
      ? ` This server caps a manifest at ${cap} series and this cohort has ${args.total_series}: its last line says how many were left out; split the cohort (e.g. by collection_id or PatientID range) to get everything.`
      : '');
  return {
    total_series: args.total_series,
    idc_commands: written.idc_commands,
    size_TB: args.size_TB,
    size_MB: args.size_MB,
    manifest_preview: args.preview,
    manifest_truncated: truncated,
    commands: written.commands,
    stores: storesInfo(ctx),
    note,
  };
}
