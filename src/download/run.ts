// The download itself: resolve what to fetch (a manifest file, or a cohort
// through the service), list every series prefix in the object store, then
// fetch the objects with bounded parallelism straight to disk. Files land
// under a temporary name and are renamed only when complete; a rerun skips
// files whose size already matches the listing.

import { stat, mkdir } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULT_STORES } from '../core/data/manifest.ts';
import { folderName } from '../core/rules/folder-name.ts';
import { parseLayout, renderLayout, type Layout, type SeriesTarget } from './layout.ts';
import { ManifestError, ManifestStream } from './manifest-stream.ts';
import { Channel } from './channel.ts';
import { humanBytes, type Reporter, type Summary } from './report.ts';
import { EndpointUnreachable, S3Client, type S3Object } from '../core/s3.ts';
import { ServiceClient, type Filters, type LicenseRow, type SeriesRow, type StoreKey, type StoreMeta } from './service.ts';

/** Series listed at once, whatever --jobs says (listings carry no file data). */
const LIST_JOBS = 8;
/** Series listed before their files queue for transfer, in order; the next group is listed while they transfer. */
const LIST_CHUNK = 200;
/**
 * Files waiting for a transfer slot, at most: what bounds memory between listing and transfer
 * (each waiting file holds its listing entry and paths). Enough to keep the transfers busy while
 * the next group of series is listed.
 */
const QUEUE_MAX = 5_000;
/** Folders remembered as made (cleared when full). */
const DIRS_KEPT = 4096;

export interface DownloadOptions {
  manifest?: string;
  collection?: string[];
  series?: string[];
  /** A filter object as JSON ({terms, ranges} or {"filters": {...}}). */
  filters?: string;
  api: string;
  /** Release to download from, when the API serves several. */
  release?: string;
  source: StoreKey;
  endpoint?: string;
  out: string;
  layout: string;
  dryRun: boolean;
  jobs: number;
  yes: boolean;
  /** Ask before downloading more than this many bytes (unless yes). */
  confirmAbove: number;
  retries: number;
  retryBaseMs: number;
  listPageSize?: number;
  /** Lines of a manifest read and resolved at once (RESOLVE_CHUNK unless a test makes it small). */
  resolveChunk?: number;
  /** Verify MD5 against single-part ETags. */
  checksum: boolean;
  /** May a question be asked on the terminal? */
  interactive: boolean;
  /** A saved manifest: download the versions its lines named, not the release's current ones. */
  asSaved?: boolean;
}

/** A usage problem: reported without a stack, exit status 2. */
export class UsageError extends Error {}
/** The store's endpoint cannot be reached: the run stops with one message instead of failing every file. */
export class StoreUnreachable extends Error {}

interface Resolved {
  /** Distinct series to download. */
  series: number;
  /** The series, in order, a chunk at a time (a manifest is read again from disk: nothing grows with its length). */
  chunks: () => AsyncIterable<SeriesTarget[]>;
  stores: Record<StoreKey, StoreMeta> | null;
  /** Size of the series according to the service's index, bytes; null when unknown. */
  indexBytes: number | null;
  licenses: LicenseRow[] | null;
  /** Lines of a saved manifest that name nothing downloaded (each reported): they count as failures. */
  unresolved?: number;
  unresolvedRecap?: string | null;
}

/** The cohort filter of --collection / --series / --filters (combined with AND). */
export function cohortFilters(o: Pick<DownloadOptions, 'collection' | 'series' | 'filters'>): Filters {
  let f: Filters = {};
  if (o.filters !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(o.filters);
    } catch (e) {
      throw new UsageError(`--filters is not valid JSON (${(e as Error).message}); example: --filters '{"terms":{"collection_id":["nlst"],"Modality":["CT"]}}'`);
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'filters' in parsed) parsed = (parsed as { filters: unknown }).filters;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--filters must be a JSON object {"terms": {...}, "ranges": {...}}');
    f = parsed as Filters;
  }
  const terms = { ...(f.terms ?? {}) };
  for (const [attr, values] of [['collection_id', o.collection], ['SeriesInstanceUID', o.series]] as const) {
    if (!values || values.length === 0) continue;
    if (terms[attr]) throw new UsageError(`${attr} is given both in --filters and as ${attr === 'collection_id' ? '--collection' : '--series'}; use one`);
    terms[attr] = values;
  }
  return { ...f, terms };
}

function licenseLine(licenses: LicenseRow[]): string {
  return licenses
    .map((l) => `${l.license_short_name ?? '(no license recorded)'} (${l.series} series${l.commercial_use_allowed === false ? ', non-commercial use only' : ''})`)
    .join('; ');
}

function varsOf(r: SeriesRow, bucket: string): SeriesTarget['vars'] {
  return {
    collection_id: r.collection_id,
    PatientID: r.PatientID,
    StudyInstanceUID: r.StudyInstanceUID,
    SeriesInstanceUID: r.SeriesInstanceUID,
    Modality: r.Modality ?? '',
    crdc_series_uuid: r.crdc_series_uuid ?? '',
    bucket,
  };
}

async function resolveCohort(o: DownloadOptions, api: ServiceClient, rep: Reporter): Promise<Resolved> {
  const filters = cohortFilters(o);
  const [cohort, licenses] = await Promise.all([api.cohort(filters), api.licenses(filters)]);
  for (const w of cohort.warnings) rep.warn(`the API says: ${w}`);
  const map = cohort.stores[o.source].bucket_map;
  // Pages are read as the download goes; a series without a location is said when its page comes.
  const chunks = async function* () {
    for await (const rows of cohort.pages()) {
      const targets: SeriesTarget[] = [];
      for (const r of rows) {
        if (!r.aws_bucket || !r.crdc_series_uuid) {
          rep.warn(`series ${r.SeriesInstanceUID} has no object-store location in the index; skipped`);
          continue;
        }
        const bucket = map[r.aws_bucket] ?? r.aws_bucket;
        targets.push({ url: `s3://${bucket}/${r.crdc_series_uuid}/*`, bucket, prefix: `${r.crdc_series_uuid}/`, vars: varsOf(r, bucket), license: r.license_short_name, sizeMB: r.series_size_MB });
      }
      yield targets;
    }
  };
  return { series: cohort.total, chunks, stores: cohort.stores, indexBytes: Math.round(cohort.size_MB * 1e6), licenses };
}

async function resolveManifest(o: DownloadOptions, layout: Layout, api: ServiceClient, rep: Reporter): Promise<Resolved> {
  // The service says what each line is in its release; without it, the URLs are downloaded as written.
  const m = new ManifestStream(o.manifest!, o.source, o.asSaved ?? false, api, layout, o.out, o.resolveChunk);
  try {
    const t = await m.totals(rep);
    return { ...t, chunks: () => m.targets() };
  } catch (e) {
    if (e instanceof ManifestError) throw new UsageError(e.message);
    throw e;
  }
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** Run `fn` over `items` with at most `n` at a time, stopping early when `signal` aborts. */
async function pool<T>(items: T[], n: number, signal: AbortSignal, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (!signal.aborted && next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

interface FileJob {
  obj: S3Object;
  dest: string;
}

const urlOf = (j: FileJob) => `s3://${j.obj.bucket}/${j.obj.key}`;

export async function runDownload(o: DownloadOptions, rep: Reporter, signal: AbortSignal): Promise<Summary> {
  const started = Date.now();
  let layout: Layout;
  try {
    layout = parseLayout(o.layout);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const out = resolve(o.out);
  const api = new ServiceClient(o.api, o.release);
  const resolved = o.manifest ? await resolveManifest(o, layout, api, rep) : await resolveCohort(o, api, rep);
  if (resolved.series === 0) throw new UsageError(o.manifest ? `the manifest ${o.manifest} names no series to download${resolved.unresolved ? ` (${resolved.unresolved} line(s) unresolved, listed above)` : ''}` : 'the cohort is empty: no series match the filter');

  const endpoint = o.endpoint ?? resolved.stores?.[o.source].endpoint ?? DEFAULT_STORES[o.source].endpoint;
  rep.event('cohort', {
    series: resolved.series,
    index_bytes: resolved.indexBytes,
    licenses: resolved.licenses,
    source: o.source,
    endpoint,
  });
  rep.info(
    `${resolved.series} series${resolved.indexBytes !== null ? `, ${humanBytes(resolved.indexBytes)} according to the index` : ''}, from ${o.source} (${endpoint})` +
      (resolved.licenses ? `\nlicenses: ${licenseLine(resolved.licenses)}` : ''),
  );
  if (resolved.licenses?.some((l) => l.commercial_use_allowed === false)) rep.warn('some series are licensed for non-commercial use only');

  const ask = async (bytes: number, what: string) => {
    if (o.dryRun || o.yes || bytes <= o.confirmAbove) return;
    const q = `${what} is ${humanBytes(bytes)}, above ${humanBytes(o.confirmAbove)}.`;
    if (!o.interactive) throw new UsageError(`${q} Re-run with --yes to download it (or raise --confirm-above).`);
    if (!(await confirm(`${q} Download it to ${out}? [y/N] `))) throw new UsageError('not confirmed; nothing downloaded');
  };
  if (resolved.indexBytes !== null) await ask(resolved.indexBytes, 'The cohort');

  const s3 = new S3Client({
    endpoint,
    // Listing requests are small: they may run wider than the transfers.
    connections: Math.max(o.jobs, LIST_JOBS),
    retries: o.retries,
    retryBaseMs: o.retryBaseMs,
    listPageSize: o.listPageSize,
    checksum: o.checksum,
    onRetry: (what, attempt, err, delay) => rep.info(`retry ${attempt}/${o.retries} in ${(delay / 1000).toFixed(1)}s: ${what}: ${err.message}`),
  });
  // The first file that finds the endpoint unreachable stops every other one.
  let unreachable: EndpointUnreachable | null = null;
  const halt = new AbortController();
  const work = AbortSignal.any([signal, halt.signal]);
  const other = o.source === 'cloud1' ? 'cloud2' : 'cloud1';
  const stopIfUnreachable = (e: unknown): boolean => {
    if (!(e instanceof EndpointUnreachable)) return false;
    unreachable ??= e;
    halt.abort(e);
    return true;
  };
  const unreachableError = (e: EndpointUnreachable) =>
    new StoreUnreachable(
      `the ${o.source} store is unreachable: ${e.message}. Check the network, or choose another store with --source ${other}, ` +
        `or another endpoint (a mirror) with --endpoint URL.${o.dryRun ? ' The dry run lists every file, so it needs the store too.' : ''}`,
    );
  const summary: Summary = {
    series: resolved.series, files: 0, downloaded: 0, skipped: 0, failed: resolved.unresolved ?? 0, bytes: 0, total_bytes: 0, seconds: 0, interrupted: false, dry_run: o.dryRun, out,
  };
  const needsFallback = layout.needsService;
  const fallback = parseLayout('%crdc_series_uuid');

  /**
   * List every series, a group at a time in order, and hand each file to
   * `queue` (null: count only). Listing runs ahead of the transfers by at
   * most the queue's room. Returns the files and bytes listed and the
   * series that failed to list (reported unless `quiet`).
   */
  const listAll = async (queue: Channel<FileJob> | null, quiet: boolean): Promise<{ files: number; bytes: number; failed: number }> => {
    const tally = { files: 0, bytes: 0, failed: 0 };
    for await (const chunk of resolved.chunks()) {
      for (let i = 0; i < chunk.length && !work.aborted; i += LIST_CHUNK) {
        const group = chunk.slice(i, i + LIST_CHUNK);
        const listed: (S3Object[] | null)[] = Array.from({ length: group.length }, () => null);
        await pool(group.map((t, k) => ({ t, k })), Math.max(o.jobs, LIST_JOBS), work, async ({ t, k }) => {
          try {
            let objects = await s3.list(t.bucket, t.prefix, work);
            if (!t.prefix.endsWith('/')) objects = objects.filter((x) => x.key === t.prefix);
            if (objects.length === 0) throw new Error(`no objects under ${t.url} at ${endpoint} (missing from the store?)`);
            listed[k] = objects;
          } catch (e) {
            if (stopIfUnreachable(e) || work.aborted) return;
            tally.failed++;
            if (!quiet) rep.file({ status: 'failed', url: t.url, path: null, bytes: 0, error: (e as Error).message });
          }
        });
        // Two objects mapping to one file can only come from series of one group (each series is listed once).
        const seen = new Set<string>();
        for (let k = 0; k < group.length && !work.aborted; k++) {
          const t = group[k]!;
          const objects = listed[k];
          if (!objects) continue;
          const known = t.vars?.collection_id !== undefined;
          const folder = renderLayout(needsFallback && !known ? fallback : layout, t.vars ?? {});
          let files = 0;
          let bytes = 0;
          for (const obj of objects) {
            const rel = (t.prefix.endsWith('/') ? obj.key.slice(t.prefix.length) : basename(obj.key)).split('/').map(folderName).join('/');
            const dest = join(out, folder, rel);
            if (seen.has(dest)) {
              tally.failed++;
              if (!quiet) rep.file({ status: 'failed', url: `s3://${obj.bucket}/${obj.key}`, path: dest, bytes: 0, error: 'another object maps to the same file under this layout' });
              continue;
            }
            seen.add(dest);
            files++;
            bytes += obj.size;
            if (queue) {
              rep.planned(1, obj.size);
              await queue.push({ obj, dest });
            }
          }
          tally.files += files;
          tally.bytes += bytes;
        }
        if (!quiet && o.dryRun) rep.info(`listed ${tally.files} files (${humanBytes(tally.bytes)})…`);
      }
      if (work.aborted) break;
    }
    return tally;
  };

  try {
    // Without the index's size, the listing says how much it is, before anything transfers.
    if (resolved.indexBytes === null && !o.dryRun && !o.yes) {
      rep.info(`listing ${resolved.series} series to size the download…`);
      const sized = await listAll(null, true);
      if (signal.aborted) {
        summary.interrupted = true;
        return summary;
      }
      if (unreachable) throw unreachableError(unreachable);
      await ask(sized.bytes, 'The download');
    }
    rep.info(`listing ${resolved.series} series${o.dryRun ? '' : ' as the files transfer'}…`);
    if (o.dryRun) {
      const t = await listAll(null, false);
      summary.interrupted = signal.aborted;
      if (unreachable && !signal.aborted) throw unreachableError(unreachable);
      summary.failed += t.failed;
      summary.files = t.files;
      summary.total_bytes = t.bytes;
      rep.event('plan', { files: t.files, bytes: t.bytes });
      rep.info(`would download ${t.files} files, ${humanBytes(t.bytes)} (${t.bytes} bytes), into ${out}`);
      return summary;
    }

    // List and fetch at once: the transfers take files off the queue as the listing fills it.
    rep.start(resolved.indexBytes ?? 0);
    const queue = new Channel<FileJob>(QUEUE_MAX);
    const dirs = new Map<string, Promise<unknown>>();
    const transfer = async (j: FileJob) => {
      try {
        const st = await stat(j.dest).catch(() => null);
        if (st?.isFile() && st.size === j.obj.size) {
          summary.skipped++;
          rep.file({ status: 'skipped', url: urlOf(j), path: j.dest, bytes: j.obj.size });
          return;
        }
        const dir = dirname(j.dest);
        // Folders made once each: files come series by series, so the recent folders are enough to remember
        // (a forgotten one costs one more mkdir, which is idempotent; the map never grows with the cohort).
        if (!dirs.has(dir)) {
          if (dirs.size >= DIRS_KEPT) dirs.clear();
          dirs.set(dir, mkdir(dir, { recursive: true }));
        }
        await dirs.get(dir);
        await s3.download(j.obj, join(dir, `.${basename(j.dest)}.idqs-part`), j.dest, work, (n) => {
          summary.bytes += n;
          rep.progress(n);
        });
        summary.downloaded++;
        rep.file({ status: 'downloaded', url: urlOf(j), path: j.dest, bytes: j.obj.size });
      } catch (e) {
        if (stopIfUnreachable(e) || work.aborted) return;
        summary.failed++;
        rep.file({ status: 'failed', url: urlOf(j), path: j.dest, bytes: 0, error: (e as Error).message });
      }
    };
    const workers = Array.from({ length: o.jobs }, async () => {
      for (let j = await queue.take(); j !== null && !work.aborted; j = await queue.take()) await transfer(j);
    });
    const listing = listAll(queue, false).finally(() => queue.close());
    // A stop (interrupt, endpoint unreachable) ends the workers; the queue is closed so the lister returns too.
    work.addEventListener('abort', () => queue.close(), { once: true });
    const [t] = await Promise.all([listing, ...workers]);
    summary.failed += t.failed;
    // A real run's files count those that could not be listed and the manifest's unresolved lines too.
    summary.files = t.files + t.failed + (resolved.unresolved ?? 0);
    summary.total_bytes = t.bytes;
    summary.interrupted = signal.aborted;
    if (unreachable && !signal.aborted) throw unreachableError(unreachable);
    return summary;
  } finally {
    s3.close();
    summary.seconds = (Date.now() - started) / 1000;
    // The lines reported as they were read, recalled beside the summary.
    if (resolved.unresolvedRecap) rep.warn(`${resolved.unresolved} line(s) of ${o.manifest} were not downloaded (each said above): ${resolved.unresolvedRecap}`);
  }
}
