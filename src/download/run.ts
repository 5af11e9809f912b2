// The download itself: resolve what to fetch (a manifest file, or a cohort
// through the service), list every series prefix in the object store, then
// fetch the objects with bounded parallelism straight to disk. Files land
// under a temporary name and are renamed only when complete; a rerun skips
// files whose size already matches the listing.

import { readFile, stat, mkdir } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULT_STORES } from '../core/data/manifest.ts';
import { folderName } from '../core/rules/folder-name.ts';
import { parseLayout, parseManifest, renderLayout, type Layout, type SeriesTarget } from './layout.ts';
import { humanBytes, type Reporter, type Summary } from './report.ts';
import { EndpointUnreachable, S3Client, type S3Object } from '../core/s3.ts';
import { invalidLines, planSaved, reportSaved } from './saved.ts';
import { ServiceClient, ServiceUnreachable, type Filters, type LicenseRow, type SeriesRow, type StoreKey, type StoreMeta } from './service.ts';

/** Series listed at once, whatever --jobs says (listings carry no file data). */
const LIST_JOBS = 8;

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
  targets: SeriesTarget[];
  stores: Record<StoreKey, StoreMeta> | null;
  /** Size of the series according to the service's index, bytes; null when unknown. */
  indexBytes: number | null;
  licenses: LicenseRow[] | null;
  /** Lines of a saved manifest that name nothing downloaded (each reported): they count as failures. */
  unresolved?: number;
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
  const targets: SeriesTarget[] = [];
  for (const r of cohort.series) {
    if (!r.aws_bucket || !r.crdc_series_uuid) {
      rep.warn(`series ${r.SeriesInstanceUID} has no object-store location in the index; skipped`);
      continue;
    }
    const bucket = map[r.aws_bucket] ?? r.aws_bucket;
    targets.push({ url: `s3://${bucket}/${r.crdc_series_uuid}/*`, bucket, prefix: `${r.crdc_series_uuid}/`, vars: varsOf(r, bucket), license: r.license_short_name, sizeMB: r.series_size_MB });
  }
  return { targets, stores: cohort.stores, indexBytes: Math.round(cohort.size_MB * 1e6), licenses };
}

async function resolveManifest(o: DownloadOptions, layout: Layout, api: ServiceClient, rep: Reporter): Promise<Resolved> {
  let text: string;
  try {
    text = await readFile(o.manifest!, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read the manifest ${o.manifest}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  // The service says what each line is in its release; without it, the URLs are downloaded as written.
  const invalid = invalidLines(text, o.manifest!);
  if (invalid.length > 0) throw new UsageError(`${invalid.length} line(s) are not identifiers or URLs; fix or remove them:\n  ${invalid.slice(0, 20).join('\n  ')}${invalid.length > 20 ? `\n  … and ${invalid.length - 20} more` : ''}`);
  try {
    const r = await api.resolve(text);
    const plan = planSaved(r, text, o.source, o.asSaved ?? false);
    reportSaved(r, plan, o.manifest!, o.asSaved ?? false, rep);
    const licenses = plan.currentUuids.length > 0 ? (await api.lookupSeries(plan.currentUuids)).licenses : [];
    return {
      targets: plan.targets,
      stores: r.stores as Resolved['stores'],
      indexBytes: plan.unknownAsWritten > 0 ? null : Math.round(plan.sizeMB * 1e6),
      licenses,
      unresolved: plan.unresolved.length,
    };
  } catch (e) {
    if (!(e instanceof ServiceUnreachable)) throw e;
    if (o.asSaved) throw new UsageError(`--as-saved needs the service, which knows each line's version: ${e.message}`);
  }
  let targets: SeriesTarget[];
  try {
    targets = parseManifest(text, o.manifest);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  for (const t of targets) t.vars = { crdc_series_uuid: t.prefix.split('/')[0]!, bucket: t.bucket };
  // The service knows each series' folders, licenses and the stores' endpoints; without it the
  // files go to <crdc_series_uuid>/ folders and the endpoint is the public default (or --endpoint).
  let rows: SeriesRow[] = [];
  let licenses: LicenseRow[] = [];
  let stores: Resolved['stores'] = null;
  try {
    const found = await api.lookupSeries(targets.map((t) => t.vars!.crdc_series_uuid!));
    rows = found.series;
    licenses = found.licenses;
    if (rows.length > 0) stores = found.stores;
  } catch (e) {
    if (!(e instanceof ServiceUnreachable)) throw e;
    if (layout.needsService) rep.warn(`${e.message}; without it the layout cannot be filled: files go to ${join(o.out, '<crdc_series_uuid>')}/`);
    else rep.info(`note: ${e.message}; sizes and licenses are not known before listing`);
  }
  const byUuid = new Map(rows.map((r) => [r.crdc_series_uuid, r]));
  let unknown = 0;
  for (const t of targets) {
    const r = byUuid.get(t.vars!.crdc_series_uuid!);
    if (r) {
      t.vars = varsOf(r, t.bucket);
      t.license = r.license_short_name;
      t.sizeMB = r.series_size_MB;
    } else unknown++;
  }
  if (rows.length > 0 && unknown > 0) {
    rep.warn(`${unknown} of ${targets.length} series of the manifest are unknown to the API at ${api.base}${layout.needsService ? `: their files go to ${join(o.out, '<crdc_series_uuid>')}/` : ''}`);
  }
  const known = targets.filter((t) => byUuid.has(t.vars?.crdc_series_uuid ?? ''));
  return {
    targets,
    stores,
    indexBytes: rows.length > 0 && unknown === 0 ? Math.round(known.reduce((s, t) => s + (t.sizeMB ?? 0), 0) * 1e6) : null,
    licenses: rows.length > 0 ? licenses : null,
  };
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
  url: string;
}

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
  const { targets } = resolved;
  if (targets.length === 0) throw new UsageError(o.manifest ? `the manifest ${o.manifest} names no series to download${resolved.unresolved ? ` (${resolved.unresolved} line(s) unresolved, listed above)` : ''}` : 'the cohort is empty: no series match the filter');

  const endpoint = o.endpoint ?? resolved.stores?.[o.source].endpoint ?? DEFAULT_STORES[o.source].endpoint;
  rep.event('cohort', {
    series: targets.length,
    index_bytes: resolved.indexBytes,
    licenses: resolved.licenses,
    source: o.source,
    endpoint,
  });
  rep.info(
    `${targets.length} series${resolved.indexBytes !== null ? `, ${humanBytes(resolved.indexBytes)} according to the index` : ''}, from ${o.source} (${endpoint})` +
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
    series: targets.length, files: 0, downloaded: 0, skipped: 0, failed: resolved.unresolved ?? 0, bytes: 0, total_bytes: 0, seconds: 0, interrupted: false, dry_run: o.dryRun, out,
  };
  try {
    // 1. List every series (so totals, progress and ETA are exact).
    rep.info(`listing ${targets.length} series…`);
    const jobs: FileJob[] = [];
    const listed: { t: SeriesTarget; objects: S3Object[] }[] = [];
    await pool(targets, Math.max(o.jobs, LIST_JOBS), work, async (t) => {
      try {
        let objects = await s3.list(t.bucket, t.prefix, work);
        if (!t.prefix.endsWith('/')) objects = objects.filter((x) => x.key === t.prefix);
        if (objects.length === 0) throw new Error(`no objects under ${t.url} at ${endpoint} (missing from the store?)`);
        listed.push({ t, objects });
      } catch (e) {
        if (stopIfUnreachable(e) || work.aborted) return;
        summary.failed++;
        rep.file({ status: 'failed', url: t.url, path: null, bytes: 0, error: (e as Error).message });
      }
    });
    if (signal.aborted) {
      summary.interrupted = true;
      return summary;
    }
    if (unreachable) throw unreachableError(unreachable);
    const needsFallback = layout.needsService;
    const fallback = parseLayout('%crdc_series_uuid');
    const seen = new Set<string>();
    // Keep the manifest's order of series.
    const order = new Map(targets.map((t, i) => [t, i]));
    listed.sort((a, b) => order.get(a.t)! - order.get(b.t)!);
    for (const { t, objects } of listed) {
      const known = t.vars?.collection_id !== undefined;
      const folder = renderLayout(needsFallback && !known ? fallback : layout, t.vars ?? {});
      for (const obj of objects) {
        const rel = (t.prefix.endsWith('/') ? obj.key.slice(t.prefix.length) : basename(obj.key)).split('/').map(folderName).join('/');
        const dest = join(out, folder, rel);
        if (seen.has(dest)) {
          summary.failed++;
          rep.file({ status: 'failed', url: `s3://${obj.bucket}/${obj.key}`, path: dest, bytes: 0, error: 'another object maps to the same file under this layout' });
          continue;
        }
        seen.add(dest);
        jobs.push({ obj, dest, url: `s3://${obj.bucket}/${obj.key}` });
      }
    }
    // A dry run counts the files it would download; a real run also counts the ones that failed.
    summary.files = jobs.length + (o.dryRun ? 0 : summary.failed);
    summary.total_bytes = jobs.reduce((s, j) => s + j.obj.size, 0);
    if (resolved.indexBytes === null) await ask(summary.total_bytes, 'The download');
    if (o.dryRun) {
      rep.event('plan', { files: jobs.length, bytes: summary.total_bytes });
      rep.info(`would download ${jobs.length} files, ${humanBytes(summary.total_bytes)} (${summary.total_bytes} bytes), into ${out}`);
      return summary;
    }

    // 2. Fetch.
    rep.start(jobs.length, summary.total_bytes);
    const dirs = new Map<string, Promise<unknown>>();
    await pool(jobs, o.jobs, work, async (j) => {
      try {
        const st = await stat(j.dest).catch(() => null);
        if (st?.isFile() && st.size === j.obj.size) {
          summary.skipped++;
          rep.file({ status: 'skipped', url: j.url, path: j.dest, bytes: j.obj.size });
          return;
        }
        const dir = dirname(j.dest);
        if (!dirs.has(dir)) dirs.set(dir, mkdir(dir, { recursive: true }));
        await dirs.get(dir);
        await s3.download(j.obj, join(dir, `.${basename(j.dest)}.idqs-part`), j.dest, work, (n) => {
          summary.bytes += n;
          rep.progress(n);
        });
        summary.downloaded++;
        rep.file({ status: 'downloaded', url: j.url, path: j.dest, bytes: j.obj.size });
      } catch (e) {
        if (stopIfUnreachable(e) || work.aborted) return;
        summary.failed++;
        rep.file({ status: 'failed', url: j.url, path: j.dest, bytes: 0, error: (e as Error).message });
      }
    });
    summary.interrupted = signal.aborted;
    if (unreachable && !signal.aborted) throw unreachableError(unreachable);
    return summary;
  } finally {
    s3.close();
    summary.seconds = (Date.now() - started) / 1000;
  }
}
