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
import { Spool } from '../engine/spool.ts';
import { WorkCancelled, workSignal } from '../engine/work.ts';
import { field, invalidQuery, invalidRequest, msg } from '../errors.ts';
import { compileFilter, type CompiledFilter, type FilterObject } from '../filters/v3.ts';
import { folderNameSql } from '../rules/folder-name.ts';
import { DOWNLOAD_DIR, s5cmdFileName, s5cmdRunCommand } from '../rules/shell.ts';
import { STORE_ALIASES, type StoreKey } from '../rules/stores.ts';
import { toNumber } from './numbers.ts';

export type { StoreKey };

/** Order of manifest pages, manifest.txt lines and the preview (SeriesInstanceUID makes it total). */
export const MANIFEST_ORDER = 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID';

/** Columns a manifest line is built from (URL, bucket map, folders). */
const LINE_COLUMNS = 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, aws_bucket, crdc_series_uuid, series_cloud1_url';

export const MANIFEST_FORMATS = ['urls', 's5cmd'] as const;
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
}

interface ManifestMeta {
  store: StoreKey;
  format: ManifestFormat;
  /** Series matching the filter. */
  total: number;
  /** Lines of series that will be sent: min(total, limit). */
  returned: number;
  truncated: boolean;
  /** The limit applied. */
  limit: number;
  filters_applied: CompiledFilter['filters_applied'];
  warnings: string[];
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

/** Lines per block of the text body. */
const BLOCK_LINES = 1024;
/** Most lines one query of the text body produces (128 blocks); the next one resumes after them. */
const RUN_LINES = 128 * BLOCK_LINES;

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
  // An empty filter is the whole release, with the compiler's "entire dataset" warning: the body streams
  // in bounded memory, so the commands a manifest page prints for {} work as printed.
  const compiled = await compileFilter(ctx, req.filters);
  const line = lineExpression(ctx, store, format);
  /** Lines [offset, offset + count) of the manifest (bound as BIGINTs: no cap is the largest exact integer). */
  // The line is built after the sort, for the rows taken only: the sort carries narrow keys, not long lines.
  const lines = `SELECT ${line.sql} AS line FROM (SELECT ${LINE_COLUMNS} FROM "index" WHERE ${compiled.where} ORDER BY ${MANIFEST_ORDER} LIMIT ?::BIGINT OFFSET ?::BIGINT)`;
  return { store, format, limit, compiled, lines, params: [...line.params, ...compiled.params] };
}

function metaOf(o: Awaited<ReturnType<typeof openManifest>>, total: number): ManifestMeta {
  return {
    store: o.store,
    format: o.format,
    total,
    returned: Math.min(total, o.limit),
    truncated: total > o.limit,
    limit: o.limit,
    filters_applied: o.compiled.filters_applied,
    warnings: [...o.compiled.warnings],
  };
}

/** The last line of a cut manifest: a comment every manifest reader skips. */
export function truncationLine(m: Pick<ManifestMeta, 'returned' | 'total' | 'limit'>): string {
  return `# Truncated: ${m.returned} of ${m.total} series listed (limit ${m.limit}); ${m.total - m.returned} series are not in this list. Raise the limit or narrow the filter to get them.`;
}

/**
 * The plain-text manifest, produced into a bounded spool as fast as the engine
 * goes and read at the client's pace. Blocks of BLOCK_LINES lines are joined in
 * the engine: crossing into JavaScript once per block instead of once per line
 * is what makes the text body about as fast as the engine's own export.
 */
export async function manifestText(ctx: AppContext, req: ManifestTextRequest): Promise<ManifestText> {
  const o = await openManifest(ctx, req);
  // row_number() OVER () is DuckDB's streaming window, which keeps the order of the sorted input.
  const blocks = `SELECT block, n, strlen(block)::BIGINT AS bytes FROM (
    SELECT string_agg(line, chr(10) ORDER BY rn) || chr(10) AS block, count(*)::INTEGER AS n, (rn - 1) // ${BLOCK_LINES} AS b
    FROM (SELECT line, row_number() OVER () AS rn FROM (${o.lines}))
    GROUP BY b) ORDER BY b`;
  const spool = new Spool(ctx.config.exportBufferMb * 1024 * 1024);
  const signal = workSignal();
  const stop = new AbortController();
  const both = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const run = { signal: both, timeoutMs: ctx.config.exportTimeoutMs, timeoutSetting: 'IDQS_EXPORT_TIMEOUT_MS' };
  const produce = async () => {
    let offset = 0;
    let bytes = 0;
    while (offset < o.limit) {
      // Each query produces about one spool of lines (the first one RUN_LINES, then by the bytes per
      // line seen): the engine chunk that unread blocks keep alive stays near the spool's size, and a
      // fast reader needs few queries (each one sorts the cohort again).
      const perRun = offset === 0 ? RUN_LINES : Math.max(RUN_LINES, Math.floor(spool.highWater / (bytes / offset)));
      const take = Math.min(o.limit - offset, perRun);
      let got = 0;
      const outcome = await ctx.engine.produceExport(blocks, [...o.params, take, offset], (chunk) => {
        const counts = chunk.getColumnVector(1);
        const sizes = chunk.getColumnVector(2);
        // Blocks are read from the engine's chunk when the reader takes them, not here; the
        // closure holds the chunk itself, so its memory lives as long as a block still needs it.
        for (let r = 0; r < chunk.rowCount; r++) {
          const size = Number(sizes.getItem(r) as bigint);
          spool.push({ bytes: size, read: () => Buffer.from(chunk.getColumnVector(0).getItem(r) as string) });
          bytes += size;
          const n = counts.getItem(r) as number;
          offset += n;
          got += n;
        }
        return !spool.full;
      }, run);
      if (outcome === 'end' && got < take) break; // the cohort ended
      // The reader is behind: resume from here once it has caught up, without holding a connection.
      await spool.drained(both);
    }
  };
  const [count] = await Promise.all([
    ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE ${o.compiled.where}`, o.compiled.params),
    // Production starts now; its first block is awaited so a failing query fails the request, not the body.
    (async () => {
      const done = produce().then(() => spool.end(), (e: unknown) => spool.fail(e));
      await Promise.race([spool.started(), done]);
    })(),
  ]);
  if (spool.error) throw spool.error;
  const meta = metaOf(o, toNumber(count?.n));
  const header: string[] = [];
  if (meta.format === 's5cmd') header.push(`# Run with: ${s5cmdRun(ctx, meta.store)}`);
  async function* body(): AsyncGenerator<Buffer> {
    try {
      if (header.length > 0) yield Buffer.from(header.join('\n') + '\n');
      yield* spool.drain();
      // A cut list says so in its own last line, not only in headers a saved file loses.
      if (meta.truncated) yield Buffer.from(truncationLine(meta) + '\n');
    } finally {
      // The reader stopped (finished, failed or gone): so does the producer.
      stop.abort(new WorkCancelled('the manifest reader stopped'));
    }
  }
  return { ...meta, body: body() };
}

/** The manifest as lines, one per series (what a caller that wants the URLs themselves reads; limits are small). */
export async function manifestLines(ctx: AppContext, req: ManifestTextRequest): Promise<ManifestLines> {
  const o = await openManifest(ctx, req);
  const [count, rows] = await Promise.all([
    ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE ${o.compiled.where}`, o.compiled.params),
    ctx.engine.rows(o.lines, [...o.params, o.limit, 0]),
  ]);
  return { ...metaOf(o, toNumber(count?.n)), lines: rows.map((r) => String(r.line)) };
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
export type CommandWriter = (applied: CompiledFilter['filters_applied']) => WrittenCommands;

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
  args: { applied: CompiledFilter['filters_applied']; total_series: number; size_TB: number; size_MB: number; preview: string[]; commands: CommandWriter },
): DownloadInfo {
  const cap = manifestCapOf(ctx.config);
  const truncated = args.total_series > cap;
  const stores = ctx.dataset.stores;
  const written = args.commands(args.applied);
  const note =
    `The buckets are public: no credentials are needed (s5cmd --no-sign-request). ` +
    `Check the size first (${args.size_TB} TB = ${args.size_MB} MB in ${args.total_series} series) and the licenses of the same filter before downloading. ` +
    `idqs: run the per-collection lines, or the --filters line, or save the manifest with save_manifest and run the --manifest line. ` +
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
