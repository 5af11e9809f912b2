// The real release served when no dataset is named: the newest one in the
// cache; else the latest one from the first source that answers (the public
// bucket, then GitHub, then PyPI), each first probed with a short connect
// timeout so that an unreachable source costs seconds, not minutes of
// retries. Null when none answers: the caller serves the generated demo data.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { http, https } from '../node-http.ts';
import { join } from 'node:path';
import { build, builtMetadata } from '../data/build.ts';
import type { DatasetManifest } from '../data/manifest.ts';
import { RELEASE_DEFAULTS } from '../data/manifest.ts';
import { ensureRelease, releaseDb, type FetchEvent } from './fetch.ts';
import { fileUrl, RELEASE_SOURCES, sortVersions, sourceBase, type ReleaseSource } from './sources.ts';

export interface DefaultRelease {
  db: string;
  folder: string;
  source: ReleaseSource;
  /** Data release (v25) and index version (25.0.5) served. */
  release: string;
  indexVersion: string;
  /** True when fetched now, false when found in the cache. */
  fetched: boolean;
}

export interface DefaultReleaseOptions {
  cacheDir: string;
  env?: NodeJS.ProcessEnv;
  /** Connect timeout of each source's probe. */
  connectTimeoutMs: number;
  /** Sources to try, in order (default: gcs, github, pypi). */
  sources?: readonly ReleaseSource[];
  /** What is being tried and why a source is passed over, one line each. */
  onNote?: (line: string) => void;
  onEvent?: (e: FetchEvent) => void;
  onBuildProgress?: (step: string, done: number, total: number) => void;
}

/** Real releases fetched into the cache (`releases/<version>-<source>/` with its dataset.json), newest first; same version: bucket, GitHub, PyPI. */
export async function cachedReleases(cacheDir: string): Promise<{ folder: string; source: ReleaseSource; version: string }[]> {
  const dir = join(cacheDir, 'releases');
  if (!existsSync(dir)) return [];
  const found: { folder: string; source: ReleaseSource; version: string }[] = [];
  for (const name of readdirSync(dir)) {
    const m = /^(.+)-(gcs|github|pypi)$/.exec(name);
    const folder = join(dir, name);
    if (!m || !existsSync(join(folder, 'dataset.json')) || !existsSync(join(folder, 'idc_index.parquet'))) continue;
    let manifest: DatasetManifest;
    try {
      manifest = JSON.parse(readFileSync(join(folder, 'dataset.json'), 'utf8')) as DatasetManifest;
    } catch {
      continue; // a damaged note: not a release to serve
    }
    if (manifest.synthetic) continue;
    // A "latest" folder says its version in its built database only.
    const version = manifest.index_version || (await builtMetadata(releaseDb(folder)))?.index_version || m[1]!;
    found.push({ folder, source: m[2] as ReleaseSource, version });
  }
  const order = sortVersions(found.map((f) => f.version));
  const rank = (v: string) => (order.includes(v) ? order.indexOf(v) : order.length);
  return found.sort((a, b) => rank(a.version) - rank(b.version) || RELEASE_SOURCES.indexOf(a.source) - RELEASE_SOURCES.indexOf(b.source));
}

/** The URL a source answers for its latest release (a small file, or the package's index page). */
function probeUrl(source: ReleaseSource, env: NodeJS.ProcessEnv): string {
  const base = sourceBase(source, undefined, env);
  if (source === 'pypi') return `${base}/${RELEASE_DEFAULTS.sources.pypi.project}/`;
  const mirrored = Boolean(source === 'gcs' ? env.IDQS_RELEASE_GCS_URL : env.IDQS_RELEASE_GITHUB_URL);
  return fileUrl(source, base, 'latest', 'idc_index.parquet.sha256', mirrored);
}

/** One GET: null when the source answers (2xx or a redirect), else why not. Connecting is bounded by `connectMs`, the answer by 20 s. */
export function probe(url: string, connectMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      resolve(`${url} is not a valid URL`);
      return;
    }
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.get(u, { agent: false, headers: { 'user-agent': 'idqs-fetch', accept: '*/*' } }, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      resolve(status >= 200 && status < 400 ? null : `answered HTTP ${status}`);
      req.destroy();
    });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no connection within ${connectMs / 1000} s`), { code: 'ETIMEDOUT' })), connectMs);
    req.on('socket', (s) => s.once('connect', () => clearTimeout(timer)));
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(e.code && !e.message.includes(e.code) ? `${e.code} (${e.message})` : e.message);
    });
    req.on('close', () => clearTimeout(timer));
  });
}

const SOURCE_NAMES: Record<ReleaseSource, string> = { gcs: 'the public bucket', github: 'GitHub', pypi: 'PyPI' };

/** The newest cached real release (built if needed), else the latest from the first source that answers; null when none does. */
export async function defaultRelease(o: DefaultReleaseOptions): Promise<{ found: DefaultRelease | null; tried: { source: ReleaseSource; reason: string }[] }> {
  const note = o.onNote ?? (() => {});
  const env = o.env ?? process.env;
  const [cached] = await cachedReleases(o.cacheDir);
  if (cached) {
    const b = await build({ from: cached.folder, db: releaseDb(cached.folder), onProgress: o.onBuildProgress });
    return { found: { db: b.db, folder: cached.folder, source: cached.source, release: b.release, indexVersion: b.index_version, fetched: false }, tried: [] };
  }
  const tried: { source: ReleaseSource; reason: string }[] = [];
  const sources = o.sources ?? RELEASE_SOURCES;
  note(`no real release in the cache: looking for the latest one (${sources.map((s) => SOURCE_NAMES[s]).join(', then ')})`);
  for (const source of sources) {
    const url = probeUrl(source, env);
    const why = await probe(url, o.connectTimeoutMs);
    if (why) {
      tried.push({ source, reason: why });
      note(`${SOURCE_NAMES[source]} (${url}): ${why}`);
      continue;
    }
    try {
      const r = await ensureRelease({ release: 'latest', source, cacheDir: o.cacheDir, env, onEvent: o.onEvent, onBuildProgress: o.onBuildProgress });
      return { found: { db: r.db, folder: r.fetch.folder, source, release: r.build.release, indexVersion: r.build.index_version, fetched: true }, tried };
    } catch (e) {
      const reason = (e as Error).message;
      tried.push({ source, reason });
      note(`${SOURCE_NAMES[source]}: the fetch failed (${reason})`);
    }
  }
  return { found: null, tried };
}
