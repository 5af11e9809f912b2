// Manifests of a cohort: object-store URLs of its series (one line per series,
// in manifest order), the plain-text manifest streamed as rows arrive, and the
// download payload (ready-to-run commands of the idqs downloader and s5cmd).
// Buckets and endpoints come from the dataset's store metadata, never from
// code: cloud2 URLs use the bucket map of ctx.dataset.stores.cloud2 and keep
// the s3:// scheme (that store is reached through its S3-compatible endpoint).

import type { AppContext } from '../context.ts';
import type { Param } from '../engine/engine.ts';
import { invalidQuery } from '../errors.ts';
import { compileFilter, type CompiledFilter, type FilterObject } from '../filters/v3.ts';
import { toNumber } from './numbers.ts';

export type StoreKey = 'cloud1' | 'cloud2';

/** Order of manifest pages, manifest.txt lines and the preview (SeriesInstanceUID makes it total). */
export const MANIFEST_ORDER = 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID';

/** Folder the downloader commands and s5cmd lines write into (relative to the working directory). */
export const DOWNLOAD_DIR = 'idqs-data';

export const MANIFEST_FORMATS = ['urls', 's5cmd'] as const;
export type ManifestFormat = (typeof MANIFEST_FORMATS)[number];

/** Names accepted for `source`: the neutral keys, the public service's names and the stores' own names. */
export function sourceNames(ctx: AppContext): Map<string, StoreKey> {
  const m = new Map<string, StoreKey>([
    ['cloud1', 'cloud1'],
    ['cloud2', 'cloud2'],
    ['aws', 'cloud1'],
    ['gcs', 'cloud2'],
  ]);
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
  throw invalidQuery(`Unknown source ${JSON.stringify(source)}. Allowed values: ${listed}. The default is cloud1.`);
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

/** A path component made safe for a relative folder name (no separators, no leading dots). */
function folderPart(column: string): string {
  return `regexp_replace(COALESCE(NULLIF(${column}, ''), '_'), '^\\.+|[^A-Za-z0-9._-]', '_', 'g')`;
}

/** SQL of one manifest line per series: the URL, or an s5cmd `cp` command into a per-series folder. */
function lineExpression(ctx: AppContext, store: StoreKey, format: ManifestFormat): { sql: string; params: Param[] } {
  const url = urlExpression(ctx, store);
  if (format === 'urls') return url;
  const folder = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID'].map(folderPart).join(` || '/' || `);
  return { sql: `'cp ''' || ${url.sql} || ''' ''${DOWNLOAD_DIR}/' || ${folder} || '/'''`, params: url.params };
}

/** Quote a word for POSIX shells only when it needs it. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

export function s5cmdFileName(store: StoreKey): string {
  return `idqs_manifest_${store}.s5cmd`;
}

export function s5cmdRunCommand(ctx: AppContext, store: StoreKey, file = s5cmdFileName(store)): string {
  return `s5cmd --no-sign-request --endpoint-url ${shellQuote(ctx.dataset.stores[store].endpoint)} run ${shellQuote(file)}`;
}

function refuseEmpty(compiled: CompiledFilter): void {
  if (compiled.empty) {
    throw invalidQuery(
      'A manifest needs at least one filter (terms or ranges); an empty filter would list the entire dataset. ' +
        'For whole-dataset totals use POST /v3/cohort/counts with {}; for a manifest, filter e.g. {"terms": {"collection_id": ["nlst"]}}.',
    );
  }
}

export function compileManifestFilter(ctx: AppContext, filters: FilterObject | undefined): Promise<CompiledFilter> {
  return compileFilter(ctx, filters).then((c) => {
    refuseEmpty(c);
    return c;
  });
}

export interface ManifestTextRequest {
  filters?: FilterObject;
  source?: string | null;
  limit?: number | null;
  format?: string | null;
}

export interface ManifestText {
  store: StoreKey;
  format: ManifestFormat;
  /** Series matching the filter. */
  total: number;
  /** Lines of series that will be sent: min(total, limit). */
  returned: number;
  truncated: boolean;
  /** Effective limit after clamping to the manifest cap. */
  limit: number;
  filters_applied: CompiledFilter['filters_applied'];
  warnings: string[];
  /** The body, produced chunk by chunk as the engine streams rows. */
  body: AsyncGenerator<Buffer>;
}

/**
 * The plain-text manifest: the count query runs first (concurrently with the
 * first chunk of the line query) so totals are known before any byte is sent;
 * the lines are then streamed block by block without building the body in memory.
 */
const BLOCK_LINES = 1024;

export async function manifestText(ctx: AppContext, req: ManifestTextRequest): Promise<ManifestText> {
  const store = resolveSource(ctx, req.source);
  const format = (req.format ?? 'urls').trim().toLowerCase() as ManifestFormat;
  if (!MANIFEST_FORMATS.includes(format)) {
    throw invalidQuery(`Unknown format ${JSON.stringify(req.format)}. Allowed values: ${MANIFEST_FORMATS.join(', ')} (default urls).`);
  }
  const compiled = await compileManifestFilter(ctx, req.filters);
  const cap = ctx.config.manifestCap;
  const warnings = [...compiled.warnings];
  let limit = req.limit ?? cap;
  if (limit > cap) {
    warnings.push(`limit ${limit} is above the manifest cap; clamped to ${cap}.`);
    limit = cap;
  }
  limit = Math.max(1, Math.floor(limit));

  const line = lineExpression(ctx, store, format);
  // The engine joins the lines into blocks of BLOCK_LINES: crossing into
  // JavaScript once per block instead of once per line is what makes the
  // stream about as fast as the engine's own export. row_number() OVER () is
  // DuckDB's streaming window, which keeps the order of the sorted input.
  const rows = ctx.engine.stream(
    `SELECT string_agg(line, chr(10) ORDER BY rn) || chr(10) AS block
     FROM (SELECT line, row_number() OVER () AS rn
           FROM (SELECT ${line.sql} AS line FROM "index" WHERE ${compiled.where} ORDER BY ${MANIFEST_ORDER} LIMIT ?))
     GROUP BY (rn - 1) // ${BLOCK_LINES} ORDER BY (rn - 1) // ${BLOCK_LINES}`,
    [...line.params, ...compiled.params, limit],
  );
  const [count, first] = await Promise.allSettled([
    ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE ${compiled.where}`, compiled.params),
    rows.next(),
  ]);
  if (count.status === 'rejected' || first.status === 'rejected') {
    await rows.return(undefined);
    throw count.status === 'rejected' ? count.reason : (first as PromiseRejectedResult).reason;
  }
  const total = toNumber(count.value?.n);
  const returned = Math.min(total, limit);
  const truncated = total > limit;

  const header: string[] = [];
  if (format === 's5cmd') {
    header.push(`# Run with: ${s5cmdRunCommand(ctx, store)}`);
    if (truncated) header.push(`# Truncated: ${returned} of ${total} series (limit ${limit}); narrow the filter to get the rest.`);
  }
  async function* body(): AsyncGenerator<Buffer> {
    try {
      if (header.length > 0) yield Buffer.from(header.join('\n') + '\n');
      let next = first.status === 'fulfilled' ? first.value : { done: true as const, value: undefined };
      while (!next.done) {
        for (const r of next.value) yield Buffer.from(String(r[0]));
        next = await rows.next();
      }
    } finally {
      await rows.return(undefined);
    }
  }
  return { store, format, total, returned, truncated, limit, filters_applied: compiled.filters_applied, warnings, body: body() };
}

export interface DownloadCommands {
  /** Commands of the idqs downloader; each line (or the per-collection lines together) downloads the cohort. */
  idqs: string[];
  /** Save the URL manifest the `idqs download --manifest` line reads. */
  save_manifest: string;
  s5cmd_cloud1: string[];
  s5cmd_cloud2: string[];
}

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

function curlManifest(apiBase: string, body: unknown, out: string): string {
  return (
    `curl -fsS -X POST ${shellQuote(`${apiBase}/v3/cohort/manifest.txt`)} -H 'content-type: application/json' ` +
    `-d ${shellQuote(JSON.stringify(body))} -o ${shellQuote(out)}`
  );
}

/** Folder the `idc` commands of the public service's payload write into. */
export const IDC_DOWNLOAD_DIR = './idc-data';

/** `idc` (idc-index) commands for the same cohort; `saveManifest` writes idc_manifest.txt. */
function idcCommands(applied: CompiledFilter['filters_applied'], saveManifest: string): string[] {
  const out: string[] = [];
  const termKeys = Object.keys(applied.terms);
  if (termKeys.length === 1 && termKeys[0] === 'collection_id' && Object.keys(applied.ranges).length === 0) {
    for (const id of applied.terms.collection_id ?? []) out.push(`idc download ${shellQuote(id)} --download-dir ${IDC_DOWNLOAD_DIR}`);
  }
  out.push(`# Or save the full manifest, then download it:\n${saveManifest}\nidc download idc_manifest.txt --download-dir ${IDC_DOWNLOAD_DIR}`);
  return out;
}

/** Download payload of a manifest page: commands for the same filters, and what to check first. */
export function downloadInfo(
  ctx: AppContext,
  args: { applied: CompiledFilter['filters_applied']; total_series: number; size_TB: number; size_MB: number; preview: string[]; apiBase: string },
): DownloadInfo {
  const { applied, apiBase } = args;
  // Every command names this API: the downloader resolves the cohort (or the folders of a manifest's series) through it.
  const tail = `--api ${shellQuote(apiBase)} --out ./${DOWNLOAD_DIR}`;
  const idqs: string[] = [];
  const termKeys = Object.keys(applied.terms);
  if (termKeys.length === 1 && termKeys[0] === 'collection_id' && Object.keys(applied.ranges).length === 0) {
    for (const id of applied.terms.collection_id ?? []) idqs.push(`idqs download --collection ${shellQuote(id)} ${tail}`);
  }
  idqs.push(`idqs download --filters ${shellQuote(JSON.stringify(applied))} ${tail}`);
  idqs.push(`idqs download --manifest idqs_manifest.txt ${tail}`);
  const s5 = (store: StoreKey) => [curlManifest(apiBase, { filters: applied, source: store, format: 's5cmd' }, s5cmdFileName(store)), s5cmdRunCommand(ctx, store)];
  const cap = ctx.config.manifestCap;
  const truncated = args.total_series > cap;
  const stores = ctx.dataset.stores;
  const note =
    `The buckets are public: no credentials are needed (s5cmd --no-sign-request). ` +
    `Check the size first (${args.size_TB} TB = ${args.size_MB} MB in ${args.total_series} series) and the licenses (POST /v3/licenses with the same filters) before downloading. ` +
    `idqs: run the per-collection lines, or the --filters line, or save the manifest with save_manifest and run the --manifest line. ` +
    `s5cmd: run the two lines of s5cmd_cloud1 (${stores.cloud1.name}) or s5cmd_cloud2 (${stores.cloud2.name}) in order. ` +
    `cloud2 is reached through its S3-compatible endpoint ${stores.cloud2.endpoint}, so its URLs keep the s3:// scheme.` +
    (truncated ? ` The manifest is capped at ${cap} series and this cohort has ${args.total_series}: split it (e.g. by collection_id) to get everything.` : '');
  return {
    total_series: args.total_series,
    idc_commands: idcCommands(applied, curlManifest(apiBase, { filters: applied }, 'idc_manifest.txt')),
    size_TB: args.size_TB,
    size_MB: args.size_MB,
    manifest_preview: args.preview,
    manifest_truncated: truncated,
    commands: {
      idqs,
      save_manifest: curlManifest(apiBase, { filters: applied }, 'idqs_manifest.txt'),
      s5cmd_cloud1: s5('cloud1'),
      s5cmd_cloud2: s5('cloud2'),
    },
    stores: {
      cloud1: { name: stores.cloud1.name, endpoint: stores.cloud1.endpoint, bucket_map: stores.cloud1.bucket_map },
      cloud2: { name: stores.cloud2.name, endpoint: stores.cloud2.endpoint, bucket_map: stores.cloud2.bucket_map },
    },
    note,
  };
}
