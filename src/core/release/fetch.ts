// Fetch a release of the public index files into a folder, then (ensureRelease)
// build it: from the public bucket or the repository's release assets (every
// table with its _schema.json, .sql and published .sha256) or from the wheel
// on a package index (the core tables). Files download in parallel, resume,
// retry, and are checked against every published sha256; a mismatch is
// refused and the file kept aside. The folder's dataset.json records where
// every file came from; a cached release is reused without the network.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { removeDeadLeftovers, withCacheLock } from '../cache-lock.ts';
import { build, type BuildReport } from '../data/build.ts';
import { DEFAULT_STORES, RELEASE_DEFAULTS, type ClinicalProvenance, type DatasetManifest, type ReleaseProvenance } from '../data/manifest.ts';
import { deriveClinicalIndex, dropStaging, fetchClinical, metadataBucket, releaseNumberOfFolder, type MetadataBucket } from './clinical-fetch.ts';
import { FULL_TABLE_NAMES } from '../registry/full-metadata.ts';
import { TABLES } from '../registry/tables.ts';
import { downloadFile, exists, FetchError, getText, type Downloaded, type GetOptions } from './http-file.ts';
import { sha256File, unpackWheel } from './open.ts';
import { findWheel } from './pypi.ts';
import { ALL_FILES, CORE_FILES, fileUrl, listTags, sortVersions, sourceBase, type ReleaseSource } from './sources.ts';

export type FetchEvent =
  | { type: 'plan'; source: ReleaseSource; release: string; folder: string; files: number }
  | { type: 'length'; file: string; bytes: number | null }
  | { type: 'bytes'; delta: number }
  | { type: 'file'; file: string; status: 'downloaded' | 'reused' | 'missing'; bytes: number; resumed?: number }
  | { type: 'clinical'; prefix: string; tables: number; files: number }
  | { type: 'full'; prefix: string; tables: string[]; files: number; bytes: number; needed: number; free: number }
  | { type: 'unpack'; file: string }
  | { type: 'retry'; message: string }
  | { type: 'warning'; message: string };

export interface FetchOptions {
  /** A version such as 25.0.5, or latest. */
  release: string;
  source: ReleaseSource;
  /** all, core, or file stems / table names (index = idc_index, clinical = the clinical tables); default all the source's files (without the clinical tables). */
  tables?: 'all' | 'core' | string[];
  /** Where the clinical tables are fetched from (default: IDQS_METADATA_S3_ENDPOINT / IDQS_METADATA_BUCKET of env, else the public bucket). */
  metadata?: MetadataBucket;
  cacheDir: string;
  /** Folder to fetch into; default <cacheDir>/releases/<release>-<source>. */
  out?: string;
  mirror?: string;
  env?: NodeJS.ProcessEnv;
  /** Files downloaded at once. */
  concurrency?: number;
  retries?: number;
  retryBaseMs?: number;
  signal?: AbortSignal;
  onEvent?: (e: FetchEvent) => void;
}

export interface FetchResult {
  folder: string;
  source: ReleaseSource;
  requested: string;
  /** The version fetched, when known before reading the files (latest from the bucket is read at build). */
  version: string | null;
  downloaded: string[];
  reused: string[];
  /** Tables not fetched: absent from the source or not asked for. */
  not_fetched: string[];
  warnings: string[];
  /** With --tables all or clinical: the clinical tables fetched and those that could not be. */
  clinical?: ClinicalProvenance;
  bytes: number;
  seconds: number;
}

/** A release that cannot be had: the message says why and what to run. */
export class ReleaseError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ReleaseError';
  }
}

const STEM_BY_TABLE = new Map(TABLES.map((t) => [t.name, t.file]));

/** File stems of the --tables option, checked against the release's file list. */
export function selectFiles(tables: FetchOptions['tables'], source: ReleaseSource): string[] {
  if (tables === undefined) return source === 'pypi' ? CORE_FILES : ALL_FILES;
  if (tables === 'all') return ALL_FILES;
  if (tables === 'core') return CORE_FILES;
  const out: string[] = [];
  for (const raw of tables) {
    const name = raw.trim().replace(/\.parquet$/, '');
    if (!name) continue;
    // The clinical tables come from the metadata bucket; their dictionary is a release file.
    if (name.toLowerCase() === 'clinical') {
      if (!out.includes('clinical_index')) out.push('clinical_index');
      continue;
    }
    // core or all inside a list (core,clinical): their files.
    if (name.toLowerCase() === 'core' || name.toLowerCase() === 'all') {
      for (const f of name.toLowerCase() === 'core' ? CORE_FILES : ALL_FILES) if (!out.includes(f)) out.push(f);
      continue;
    }
    const stem = STEM_BY_TABLE.get(name) ?? name;
    if (!ALL_FILES.includes(stem)) throw new ReleaseError(`unknown table ${JSON.stringify(raw)}: use all, core, or names among ${ALL_FILES.join(', ')} (index = idc_index; clinical = the clinical tables of the metadata bucket; full = the full metadata: ${FULL_TABLE_NAMES.join(', ')})`);
    if (!out.includes(stem)) out.push(stem);
  }
  if (!out.includes('idc_index')) out.unshift('idc_index');
  return out;
}

/** Whether --tables asks for the clinical tables of the metadata bucket: all, or a list naming clinical. */
export function wantsClinical(tables: FetchOptions['tables']): boolean {
  return tables === 'all' || (Array.isArray(tables) && tables.some((t) => ['clinical', 'all'].includes(t.trim().toLowerCase())));
}

/** The default folder of a release in the cache. */
export function releaseFolder(cacheDir: string, release: string, source: ReleaseSource): string {
  return join(cacheDir, 'releases', `${release}-${source}`);
}

async function readDatasetJson(folder: string): Promise<DatasetManifest | null> {
  const p = join(folder, 'dataset.json');
  return existsSync(p) ? (JSON.parse(await readFile(p, 'utf8')) as DatasetManifest) : null;
}

async function writeDatasetJson(folder: string, m: DatasetManifest): Promise<void> {
  await writeFile(join(folder, 'dataset.json.tmp'), JSON.stringify(m, null, 2) + '\n');
  await rename(join(folder, 'dataset.json.tmp'), join(folder, 'dataset.json'));
}

function manifestOf(version: string | null, checksums: Record<string, string>, provenance: ReleaseProvenance): DatasetManifest {
  return {
    format: 'idqs-dataset/1',
    // Empty when unknown (latest from the bucket): the build reads it from the files.
    release: version ? `v${version.split('.')[0]}` : '',
    index_version: version ?? '',
    synthetic: false,
    row_counts: {},
    stores: DEFAULT_STORES,
    checksums,
    provenance,
  };
}

/** A cached release that a pinned request can use as it is (no network). */
async function cachedRelease(folder: string, source: ReleaseSource, release: string, files: string[], clinical = false): Promise<DatasetManifest | null> {
  if (release === 'latest') return null;
  const m = await readDatasetJson(folder);
  if (!m?.provenance || m.provenance.source !== source || m.index_version !== release) return null;
  // Clinical tables asked for: cached only when an earlier fetch brought every one of them.
  if (clinical && (!m.provenance.clinical || m.provenance.clinical.failed.length > 0)) return null;
  const wanted = source === 'pypi' ? CORE_FILES : files;
  const have = (f: string) => Boolean(m.checksums[`${f}.parquet`]) && existsSync(join(folder, `${f}.parquet`));
  const settled = (f: string) => have(f) || m.provenance!.not_fetched.includes(TABLES.find((t) => t.file === f)?.name ?? f) || m.provenance!.not_fetched.includes(f);
  return wanted.every(settled) && have('idc_index') ? m : null;
}

/**
 * Fetch a release into a folder (no network when a pinned release is already
 * there). One process at a time writes a folder: the others wait for it, then
 * find the release cached (the wheel's folder is known once the index answers:
 * fetchWheel locks it).
 */
export async function fetchRelease(o: FetchOptions): Promise<FetchResult> {
  if (o.source === 'pypi') return fetchFolder(o);
  const folder = o.out ?? releaseFolder(o.cacheDir, o.release, o.source);
  // A pinned release already complete is read without taking the lock (nothing is written).
  if (await cachedRelease(folder, o.source, o.release, selectFiles(o.tables, o.source), wantsClinical(o.tables))) return fetchFolder(o);
  return withCacheLock(folder, `fetching release ${o.release} from ${o.source}`, () => fetchFolder(o), o.signal);
}

/**
 * Download `url` to `dest`; when the file does not match `expected` and part
 * of it came from an earlier, interrupted run, that part is the suspect: it is
 * dropped and the file downloaded once more from its start. A mismatch left
 * after that is the source's (our download was the only writer: cache lock).
 */
async function downloadChecked(url: string, dest: string, expected: string | null, opts: GetOptions): Promise<Downloaded> {
  const got = await downloadFile(url, dest, opts);
  if (!expected || got.sha256 === expected || got.resumed === 0) return got;
  opts.onRetry?.(1, new Error(`${url}: the file resumed from an interrupted run does not match its sha256; downloading it again from the start`));
  await rm(dest, { force: true });
  opts.onBytes?.(-got.bytes);
  return downloadFile(url, dest, opts);
}

async function fetchFolder(o: FetchOptions): Promise<FetchResult> {
  const started = Date.now();
  const files = selectFiles(o.tables, o.source);
  const emit = o.onEvent ?? (() => {});
  const get: GetOptions = {
    retries: o.retries ?? 5,
    retryBaseMs: o.retryBaseMs,
    signal: o.signal,
    onRetry: (_n, err) => emit({ type: 'retry', message: err.message }),
  };
  if (o.source === 'pypi') return fetchWheel(o, files, get, started);

  const mirrored = Boolean(o.mirror || (o.source === 'gcs' ? o.env?.IDQS_RELEASE_GCS_URL : o.env?.IDQS_RELEASE_GITHUB_URL));
  const base = sourceBase(o.source, o.mirror, o.env);
  const folder = o.out ?? releaseFolder(o.cacheDir, o.release, o.source);
  const result: FetchResult = {
    folder, source: o.source, requested: o.release, version: o.release === 'latest' ? null : o.release,
    downloaded: [], reused: [], not_fetched: [], warnings: [], bytes: 0, seconds: 0,
  };
  const cached = await cachedRelease(folder, o.source, o.release, files, wantsClinical(o.tables));
  if (cached) {
    result.reused = Object.keys(cached.checksums).filter((f) => f.endsWith('.parquet'));
    result.not_fetched = cached.provenance!.not_fetched;
    result.clinical = cached.provenance!.clinical;
    result.seconds = (Date.now() - started) / 1000;
    return result;
  }
  const fresh = !existsSync(folder);
  await mkdir(folder, { recursive: true });
  const previous = await readDatasetJson(folder);
  const checksums: Record<string, string> = {};
  const provenance: ReleaseProvenance = { source: o.source, requested: o.release, fetched_at: new Date().toISOString(), urls: {}, verified: {}, not_fetched: [] };
  // Keep what an earlier fetch of the same release brought (e.g. --tables core, then seg_index).
  if (previous?.provenance?.source === o.source && previous.provenance.requested === o.release) {
    for (const [f, sum] of Object.entries(previous.checksums)) {
      if (existsSync(join(folder, f))) {
        checksums[f] = sum;
        if (previous.provenance.urls[f]) provenance.urls[f] = previous.provenance.urls[f]!;
        if (f in previous.provenance.verified) provenance.verified[f] = previous.provenance.verified[f]!;
      }
    }
    if (previous.provenance.clinical) provenance.clinical = previous.provenance.clinical;
  }
  emit({ type: 'plan', source: o.source, release: o.release, folder, files: files.length });
  const ac = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, ac.signal]) : ac.signal;
  const url = (f: string) => fileUrl(o.source as 'gcs' | 'github', base, o.release, f, mirrored);

  const fetchOne = async (stem: string): Promise<void> => {
    const name = `${stem}.parquet`;
    const sidecar = await getText(url(`${name}.sha256`), { ...get, signal });
    const published = sidecar ? (/^\s*([0-9a-fA-F]{64})\b/.exec(sidecar.text)?.[1]?.toLowerCase() ?? null) : null;
    if (sidecar && !published) throw new ReleaseError(`${url(`${name}.sha256`)} does not hold a sha256: is this a release mirror?`);
    const dest = join(folder, name);
    if (published && checksums[name] === published && existsSync(dest)) {
      result.reused.push(name);
      emit({ type: 'file', file: name, status: 'reused', bytes: 0 });
    } else {
      let got;
      try {
        got = await downloadChecked(url(name), dest, published, { ...get, signal, onBytes: (d) => emit({ type: 'bytes', delta: d }), onLength: (n) => emit({ type: 'length', file: name, bytes: n }) });
      } catch (e) {
        if (!(e instanceof FetchError && e.kind === 'not_found')) throw e;
        // A core file absent because the whole release is: say which releases there are.
        if (CORE_FILES.includes(stem) && (stem === 'idc_index' || !(await exists(url('idc_index.parquet'), { headers: {} })))) {
          throw await tagMissing(o, base, mirrored, url(name), get);
        }
        const table = TABLES.find((t) => t.file === stem)?.name ?? stem;
        if (CORE_FILES.includes(stem)) throw new ReleaseError(`the release ${o.release} at ${base} has no ${name} (${url(name)} answered 404): a core table is missing, so the release is incomplete; try another source (--source) or release`);
        result.not_fetched.push(table);
        result.warnings.push(`${name} is not in the release ${o.release} at ${base} (404): ${table} will be missing (normal for releases older than that table)`);
        emit({ type: 'warning', message: result.warnings.at(-1)! });
        emit({ type: 'file', file: name, status: 'missing', bytes: 0 });
        return;
      }
      if (published && got.sha256 !== published) {
        const aside = `${dest}.rejected`;
        await rename(dest, aside);
        throw new ReleaseError(
          `${name} does not match its published sha256 (got ${got.sha256}, ${url(`${name}.sha256`)} says ${published}): refused and kept aside as ${aside}. ` +
            'This process was the only one downloading it, so the source or mirror serves a damaged file (or it changed during the download): run the fetch again later, or try another --source.',
        );
      }
      checksums[name] = got.sha256;
      result.bytes += got.bytes;
      result.downloaded.push(name);
      emit({ type: 'file', file: name, status: 'downloaded', bytes: got.bytes, resumed: got.resumed });
    }
    provenance.urls[name] = url(name);
    provenance.verified[name] = published;
    // Sidecars describing the table: optional (older releases lack some).
    for (const side of [`${stem}_schema.json`, `${stem}.sql`]) {
      const t = await getText(url(side), { ...get, signal });
      if (!t) continue;
      await writeFile(join(folder, side), t.text);
      checksums[side] = createHashHex(t.text);
      provenance.urls[side] = url(side);
    }
  };

  // The first failure stops the other transfers; it is the error reported.
  const limit = pLimit(Math.max(1, o.concurrency ?? 4));
  let first: unknown;
  await Promise.allSettled(
    files.map((f) =>
      limit(async () => {
        if (signal.aborted) return;
        await fetchOne(f).catch((e: unknown) => {
          if (first === undefined) {
            first = e;
            ac.abort(e);
          }
        });
      }),
    ),
  );
  if (first !== undefined) {
    // A first fetch that got nothing leaves no empty release folder behind.
    if (fresh) await rmdir(folder).catch(() => {});
    throw unreachable(first, o, base);
  }
  if (o.signal?.aborted) throw o.signal.reason;
  if (wantsClinical(o.tables)) await fetchClinicalInto(o, folder, checksums, provenance, result, emit);
  const asked = new Set(files);
  for (const f of ALL_FILES) {
    const t = TABLES.find((x) => x.file === f)?.name ?? f;
    if (!asked.has(f) && !checksums[`${f}.parquet`] && !provenance.not_fetched.includes(t)) provenance.not_fetched.push(t);
  }
  for (const t of result.not_fetched) if (!provenance.not_fetched.includes(t)) provenance.not_fetched.push(t);
  result.not_fetched = provenance.not_fetched;
  result.clinical = provenance.clinical;
  await writeDatasetJson(folder, manifestOf(result.version, checksums, provenance));
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

const NETWORK_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A source that cannot be reached: say where, that the cache is as it was, and how to use a mirror. */
function unreachable(e: unknown, o: FetchOptions, base: string): unknown {
  const code = (e as { code?: string; cause?: { code?: string } })?.code ?? (e as { cause?: { code?: string } })?.cause?.code;
  const network = (e instanceof FetchError && e.kind === 'network') || (typeof code === 'string' && NETWORK_CODES.has(code));
  if (!network || e instanceof ReleaseError) return e;
  const setting = o.source === 'gcs' ? 'IDQS_RELEASE_GCS_URL' : 'IDQS_RELEASE_GITHUB_URL';
  return new ReleaseError(
    `cannot reach the ${o.source} source at ${base} (${(e as Error).message}); nothing served was changed. Check the network, or fetch from a mirror with --mirror URL (or ${setting}), or another --source.`,
    { cause: e },
  );
}

/** The clinical tables of the release from the metadata bucket: failures are named, never fatal to the release. */
async function fetchClinicalInto(
  o: FetchOptions,
  folder: string,
  checksums: Record<string, string>,
  provenance: ReleaseProvenance,
  result: FetchResult,
  emit: (e: FetchEvent) => void,
): Promise<void> {
  const store = o.metadata ?? metadataBucket(o.env ?? process.env);
  const n = result.version ? Number(result.version.split('.')[0]) : await releaseNumberOfFolder(folder);
  if (!n) {
    const reason = 'the release number is unknown (idc_index.parquet carries no idc_index_data_version): fetch a pinned release (--release 25.0.5) to get its clinical tables';
    provenance.clinical = { prefix: '', tables: [], failed: [{ table: '*', reason }] };
    result.warnings.push(`clinical tables not fetched: ${reason}`);
    emit({ type: 'warning', message: result.warnings.at(-1)! });
    return;
  }
  const c = await fetchClinical({
    folder, releaseNumber: n, store, checksums, urls: provenance.urls, haveIndex: Boolean(checksums['clinical_index.parquet']),
    concurrency: o.concurrency, retries: o.retries, retryBaseMs: o.retryBaseMs ?? (Number(o.env?.IDQS_FETCH_RETRY_BASE_MS) || undefined), signal: o.signal, emit,
  });
  provenance.clinical = { prefix: c.prefix, tables: c.tables, failed: c.failed };
  provenance.not_fetched = provenance.not_fetched.filter((t) => !t.startsWith('clinical.'));
  for (const f of c.failed) {
    if (f.table !== '*') result.not_fetched.push(`clinical.${f.table}`);
    result.warnings.push(`clinical table ${f.table === '*' ? '(all)' : f.table} not fetched: ${f.reason}`);
  }
  // The release files lacked clinical_index: the bucket's, else one made from the tables fetched.
  const fromBucket = c.tables.includes('clinical_index') && !c.failed.some((f) => f.table === 'clinical_index');
  const derived = !fromBucket && !checksums['clinical_index.parquet'] ? await deriveClinicalIndex(folder, n, checksums) : 0;
  if (fromBucket || derived > 0) {
    result.not_fetched = result.not_fetched.filter((t) => t !== 'clinical_index');
    result.warnings = result.warnings.filter((w) => !w.startsWith('clinical_index.parquet is not in the release'));
  }
  if (derived > 0) {
    result.warnings.push(
      `clinical_index is in neither the release files nor ${c.prefix}: made from the columns of the ${derived} clinical tables fetched (collection, table, column; no labels or coded values)`,
    );
    emit({ type: 'warning', message: result.warnings.at(-1)! });
  }
  result.downloaded.push(...c.downloaded);
  result.reused.push(...c.reused);
  result.bytes += c.bytes;
  // Staged parts of a failed table are kept for the next run to resume; the rest is cleared.
  await dropStaging(folder, c.failed.map((f) => f.table));
}

function createHashHex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The error for a release tag the source does not have, with the tags it has. */
async function tagMissing(o: FetchOptions, base: string, mirrored: boolean, probe: string, get: GetOptions): Promise<ReleaseError> {
  const tags = await listTags(o.source as 'gcs' | 'github', base, mirrored, { ...get, signal: undefined });
  const list = tags && tags.length > 0 ? `available releases: ${tags.slice(0, 12).join(', ')}${tags.length > 12 ? ', …' : ''}` : `the available releases could not be listed at ${base}`;
  return new ReleaseError(`release ${o.release} was not found at ${base} (${probe} answered 404); ${list}`);
}

/** The wheel route: find it on the index, download, check, unpack its tables. */
async function fetchWheel(o: FetchOptions, files: string[], get: GetOptions, started: number): Promise<FetchResult> {
  const index = sourceBase('pypi', o.mirror, o.env);
  const project = RELEASE_DEFAULTS.sources.pypi.project;
  // clinical_index with the clinical tables: from the bucket, or made from the tables (see fetchClinicalInto).
  const extra = files.filter((f) => !CORE_FILES.includes(f) && !(f === 'clinical_index' && wantsClinical(o.tables)));
  const warnings = extra.length > 0 ? [`the wheel holds the core tables only; ${extra.join(', ')} need --source gcs or github`] : [];
  // The clinical tables come from the metadata bucket whatever the source: after the wheel, into its folder.
  const clinical = (r: FetchResult) => (wantsClinical(o.tables) ? wheelClinical(o, r, started) : r);
  if (o.release !== 'latest') {
    const folder = o.out ?? releaseFolder(o.cacheDir, o.release, 'pypi');
    const cached = await cachedRelease(folder, 'pypi', o.release, files);
    if (cached) {
      return clinical({
        folder, source: 'pypi', requested: o.release, version: o.release, downloaded: [], reused: Object.keys(cached.checksums).filter((f) => f.endsWith('.parquet')),
        not_fetched: cached.provenance!.not_fetched, warnings, bytes: 0, seconds: (Date.now() - started) / 1000,
      });
    }
  }
  let wheel;
  try {
    wheel = await findWheel(index, project, o.release, get);
  } catch (e) {
    throw new ReleaseError((e as Error).message, { cause: e });
  }
  const folder = o.out ?? releaseFolder(o.cacheDir, wheel.version, 'pypi');
  const chosen = wheel;
  return clinical(await withCacheLock(folder, `fetching release ${wheel.version} from pypi`, () => fetchWheelInto(o, chosen, folder, index, warnings, get, started), o.signal));
}

/** The clinical tables of a wheel's release (the wheel has none, nor their dictionary), fetched into its folder under its lock. */
async function wheelClinical(o: FetchOptions, result: FetchResult, started: number): Promise<FetchResult> {
  return withCacheLock(result.folder, `fetching the clinical tables of release ${result.version ?? o.release}`, async () => {
    const m = await readDatasetJson(result.folder);
    if (!m?.provenance) throw new ReleaseError(`${result.folder} has no dataset.json: fetch the release again`);
    const checksums = { ...m.checksums };
    const provenance = m.provenance;
    const emit = o.onEvent ?? (() => {});
    const out: FetchResult = { ...result, not_fetched: provenance.not_fetched.filter((t) => !t.startsWith('clinical.')), warnings: [...result.warnings] };
    await fetchClinicalInto(o, result.folder, checksums, provenance, out, emit);
    provenance.not_fetched = out.not_fetched;
    await writeDatasetJson(result.folder, manifestOf(m.index_version || result.version, checksums, provenance));
    out.clinical = provenance.clinical;
    out.seconds = (Date.now() - started) / 1000;
    return out;
  }, o.signal);
}

/** Under the folder's lock: download the wheel (under its own lock: other folders may want it too), check it, unpack it. */
async function fetchWheelInto(
  o: FetchOptions,
  wheel: Awaited<ReturnType<typeof findWheel>>,
  folder: string,
  index: string,
  warnings: string[],
  get: GetOptions,
  started: number,
): Promise<FetchResult> {
  const files = selectFiles(o.tables, 'pypi');
  const result: FetchResult = {
    folder, source: 'pypi', requested: o.release, version: wheel.version, downloaded: [], reused: [], not_fetched: [], warnings, bytes: 0, seconds: 0,
  };
  for (const w of warnings) o.onEvent?.({ type: 'warning', message: w });
  const cached = await cachedRelease(folder, 'pypi', wheel.version, files);
  const prior = await readDatasetJson(folder);
  if (cached && (!wheel.sha256 || prior?.provenance?.verified[wheel.filename] === wheel.sha256)) {
    result.reused = Object.keys(cached.checksums).filter((f) => f.endsWith('.parquet'));
    result.not_fetched = cached.provenance!.not_fetched;
    result.seconds = (Date.now() - started) / 1000;
    return result;
  }
  o.onEvent?.({ type: 'plan', source: 'pypi', release: wheel.version, folder, files: 1 });
  const downloads = join(o.cacheDir, 'downloads');
  await mkdir(downloads, { recursive: true });
  const dest = join(downloads, wheel.filename);
  removeDeadLeftovers(folder, '.partial-');
  return withCacheLock(dest, `downloading ${wheel.filename}`, async () => {
    const got = await downloadChecked(wheel.url, dest, wheel.sha256, {
      ...get,
      onBytes: (d) => o.onEvent?.({ type: 'bytes', delta: d }),
      onLength: (n) => o.onEvent?.({ type: 'length', file: wheel.filename, bytes: n ?? wheel.size }),
    });
    if (wheel.sha256 && got.sha256 !== wheel.sha256) {
      const aside = `${dest}.rejected`;
      await rename(dest, aside);
      throw new ReleaseError(
        `${wheel.filename} does not match the sha256 the index publishes (got ${got.sha256}, ${index} says ${wheel.sha256}): refused and kept aside as ${aside}. ` +
          'This process was the only one downloading it, so the index or mirror serves a damaged file (or it changed during the download): run the fetch again later, or try another --source.',
      );
    }
    o.onEvent?.({ type: 'file', file: wheel.filename, status: 'downloaded', bytes: got.bytes, resumed: got.resumed });
    o.onEvent?.({ type: 'unpack', file: wheel.filename });
    const names = await unpackWheel(dest, folder);
    const checksums: Record<string, string> = {};
    for (const n of names) checksums[n] = await sha256File(join(folder, n));
    await rm(dest, { force: true });
    const present = new Set(names.filter((n) => n.endsWith('.parquet')).map((n) => n.slice(0, -'.parquet'.length)));
    const provenance: ReleaseProvenance = {
      source: 'pypi',
      requested: o.release,
      fetched_at: new Date().toISOString(),
      urls: { [wheel.filename]: wheel.url },
      verified: { [wheel.filename]: wheel.sha256 },
      not_fetched: ALL_FILES.filter((f) => !present.has(f)).map((f) => TABLES.find((t) => t.file === f)?.name ?? f),
    };
    await writeDatasetJson(folder, manifestOf(wheel.version, checksums, provenance));
    result.downloaded = [wheel.filename];
    result.bytes = got.bytes;
    result.not_fetched = provenance.not_fetched;
    result.seconds = (Date.now() - started) / 1000;
    return result;
  }, o.signal);
}

/** Newest cached release of a source, for a latest request without network. */
export async function newestCached(cacheDir: string, source: ReleaseSource): Promise<string | null> {
  const dir = join(cacheDir, 'releases');
  if (!existsSync(dir)) return null;
  const suffix = `-${source}`;
  const names = (await readdir(dir)).filter((n) => n.endsWith(suffix) && existsSync(join(dir, n, 'dataset.json')));
  const versions = sortVersions(names.map((n) => n.slice(0, -suffix.length)));
  if (versions[0]) return join(dir, `${versions[0]}${suffix}`);
  return names.includes(`latest${suffix}`) ? join(dir, `latest${suffix}`) : null;
}

export interface EnsuredRelease {
  fetch: FetchResult;
  build: BuildReport;
  db: string;
}

/** Database file of a release folder: beside its files and dataset.json. */
export function releaseDb(folder: string): string {
  return join(folder, 'idqs.duckdb');
}

/**
 * Fetch (when needed) and build a release; what `serve --release` and the
 * real-data tests use. A latest request that cannot reach the source falls
 * back to the newest release in the cache, with a warning.
 */
export async function ensureRelease(
  o: FetchOptions & { onBuildProgress?: (step: string, done: number, total: number) => void },
): Promise<EnsuredRelease> {
  let fetched: FetchResult;
  try {
    fetched = await fetchRelease(o);
  } catch (e) {
    const fallback = o.release === 'latest' && !o.out && !(e instanceof ReleaseError && /sha256/.test(e.message)) ? await newestCached(o.cacheDir, o.source) : null;
    if (!fallback) throw e;
    o.onEvent?.({ type: 'warning', message: `cannot reach the ${o.source} source (${(e as Error).message}); serving the newest cached release instead: ${fallback}` });
    fetched = { folder: fallback, source: o.source, requested: 'latest', version: null, downloaded: [], reused: [], not_fetched: [], warnings: [], bytes: 0, seconds: 0 };
  }
  const db = releaseDb(fetched.folder);
  const report = await build({ from: fetched.folder, db, onProgress: o.onBuildProgress });
  return { fetch: fetched, build: report, db };
}
