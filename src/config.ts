// Configuration from the environment, with defaults that work out of the box.
// Every setting is an IDQS_* variable except PORT and HOST; CLI flags win.

import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Config {
  host: string;
  port: number;
  /** Prebuilt database to serve; when unset the default dataset is used (and built on first use). */
  db: string | null;
  /** Real release to serve (a version such as 25.0.5, or latest): fetched and built on first use. */
  release: string | null;
  /** Where to fetch it from: gcs (default), github or pypi. */
  releaseSource: string;
  cacheDir: string;
  scale: number;
  seed: number;
  /** Curated queries (counts, manifests, discovery). */
  memoryLimit: string;
  threads: number;
  connections: number;
  tempDirSize: string;
  /** Caller SQL budget. */
  sqlMemoryLimit: string;
  sqlThreads: number;
  sqlConnections: number;
  sqlQueue: number;
  sqlTimeoutMs: number;
  sqlMaxRows: number;
  sqlMaxRowsCap: number;
  clinicalMaxRows: number;
  clinicalMaxRowsCap: number;
  pageSize: number;
  maxPageSize: number;
  manifestCap: number;
  valuesLimit: number;
  valuesLimitCap: number;
  viewerBaseUrl: string;
  /** Public base URL of this API (behind a proxy), used in generated download commands. */
  publicUrl: string | null;
  /** Endpoint overrides of the object stores (a mirror or a local S3-compatible server); null = the dataset's own. */
  cloud1Endpoint: string | null;
  cloud2Endpoint: string | null;
  build: string | null;
  logLevel: string;
  sqlLogMode: 'snippet' | 'hash';
  bodyLimit: number;
  hstsMaxAge: number;
  /** /v2 manifests: default and largest page, and how long a page may take before the answer is a 202. */
  v2PageSize: number;
  v2MaxPageSize: number;
  v2DeadlineMs: number;
  /** Memory for /v2 manifests being paged (materialized once, then sliced), MB. */
  v2CacheMb: number;
  /** Extra secret mixed into the signing key of /v2 page tokens (same value on every replica). */
  tokenSecret: string;
}

function num(env: NodeJS.ProcessEnv, name: string, def: number, min = -Infinity): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min) throw new Error(`${name}=${JSON.stringify(raw)} is not a number >= ${min}`);
  return v;
}

function str(env: NodeJS.ProcessEnv, name: string, def: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? def : raw;
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.IDQS_CACHE_DIR) return env.IDQS_CACHE_DIR;
  const xdg = env.XDG_CACHE_HOME || join(homedir() || tmpdir(), '.cache');
  return join(xdg, 'idqs');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const sqlLogMode = str(env, 'IDQS_SQL_LOG_MODE', 'snippet');
  if (sqlLogMode !== 'snippet' && sqlLogMode !== 'hash') throw new Error(`IDQS_SQL_LOG_MODE must be snippet or hash; got ${sqlLogMode}`);
  return {
    host: str(env, 'HOST', '127.0.0.1'),
    port: num(env, 'PORT', 8000, 0),
    db: env.IDQS_DB || null,
    release: env.IDQS_RELEASE || null,
    releaseSource: str(env, 'IDQS_RELEASE_SOURCE', 'gcs'),
    cacheDir: defaultCacheDir(env),
    scale: num(env, 'IDQS_SCALE', 0.03, 0.0001),
    seed: num(env, 'IDQS_SEED', 42, 0),
    memoryLimit: str(env, 'IDQS_MEMORY_LIMIT', '3GB'),
    threads: num(env, 'IDQS_THREADS', 2, 1),
    connections: num(env, 'IDQS_CONNECTIONS', 8, 1),
    tempDirSize: str(env, 'IDQS_TEMP_DIR_SIZE', '4GB'),
    sqlMemoryLimit: str(env, 'IDQS_SQL_MEMORY_LIMIT', '2GB'),
    sqlThreads: num(env, 'IDQS_SQL_THREADS', 1, 1),
    sqlConnections: num(env, 'IDQS_SQL_CONNECTIONS', 4, 1),
    sqlQueue: num(env, 'IDQS_SQL_QUEUE', 32, 0),
    sqlTimeoutMs: num(env, 'IDQS_SQL_TIMEOUT_MS', 30_000, 1),
    sqlMaxRows: num(env, 'IDQS_SQL_MAX_ROWS', 5000, 1),
    sqlMaxRowsCap: num(env, 'IDQS_SQL_MAX_ROWS_CAP', 10_000, 1),
    clinicalMaxRows: num(env, 'IDQS_CLINICAL_MAX_ROWS', 5000, 1),
    clinicalMaxRowsCap: num(env, 'IDQS_CLINICAL_MAX_ROWS_CAP', 10_000, 1),
    pageSize: num(env, 'IDQS_PAGE_SIZE', 100, 1),
    maxPageSize: num(env, 'IDQS_MAX_PAGE_SIZE', 5000, 1),
    manifestCap: num(env, 'IDQS_MANIFEST_CAP', 100_000, 1),
    valuesLimit: num(env, 'IDQS_VALUES_LIMIT', 100, 1),
    valuesLimitCap: num(env, 'IDQS_VALUES_LIMIT_CAP', 10_000, 1),
    viewerBaseUrl: str(env, 'IDQS_VIEWER_BASE_URL', 'https://viewer.imaging.datacommons.cancer.gov').replace(/\/+$/, ''),
    publicUrl: env.IDQS_PUBLIC_URL ? env.IDQS_PUBLIC_URL.replace(/\/+$/, '') : null,
    cloud1Endpoint: env.IDQS_CLOUD1_ENDPOINT ? env.IDQS_CLOUD1_ENDPOINT.replace(/\/+$/, '') : null,
    cloud2Endpoint: env.IDQS_CLOUD2_ENDPOINT ? env.IDQS_CLOUD2_ENDPOINT.replace(/\/+$/, '') : null,
    build: env.IDQS_BUILD || null,
    logLevel: str(env, 'IDQS_LOG_LEVEL', 'info'),
    sqlLogMode,
    bodyLimit: num(env, 'IDQS_BODY_LIMIT', 1_048_576, 1024),
    hstsMaxAge: num(env, 'IDQS_HSTS_MAX_AGE', 31_536_000, 0),
    v2PageSize: num(env, 'IDQS_V2_PAGE_SIZE', 1000, 1),
    v2MaxPageSize: num(env, 'IDQS_V2_MAX_PAGE_SIZE', 50_000, 1),
    v2DeadlineMs: num(env, 'IDQS_V2_DEADLINE_MS', 25_000, 1),
    v2CacheMb: num(env, 'IDQS_V2_CACHE_MB', 512, 0),
    tokenSecret: str(env, 'IDQS_TOKEN_SECRET', ''),
  };
}
