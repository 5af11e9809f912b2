// Configuration from the environment: one schema of every setting (its
// variable, type, bounds, default and meaning), checked once at start-up with
// every problem reported at once, cross-checks (a default never above its
// cap) and unknown IDQS_* names warned about with a "did you mean" (another
// program may export IDQS_ variables of its own). Every setting
// is an IDQS_* variable except PORT and HOST; CLI flags win.

import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type, type TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { suggest, suggestionText } from './core/suggest.ts';

export type TrustProxy = boolean | string[];

export interface Config {
  host: string;
  port: number;
  /** Prebuilt database to serve; when unset the default dataset is used (and built on first use). */
  db: string | null;
  /** Real release to serve (a version such as 25.0.5, or latest): fetched and built on first use. */
  release: string | null;
  /** Where to fetch it from: gcs (default), github or pypi. */
  releaseSource: string;
  /** Serve the generated demo dataset, never touching the network (`--demo`). */
  demo: boolean;
  /** With no release cached: connect timeout of each release source tried, so an unreachable one costs seconds. */
  sourceTimeoutMs: number;
  cacheDir: string;
  scale: number;
  seed: number;
  /** Curated queries (counts, manifests, discovery): engine budget, connections, their queue and deadlines. */
  memoryLimit: string;
  threads: number;
  connections: number;
  queue: number;
  queueTimeoutMs: number;
  queryTimeoutMs: number;
  tempDirSize: string;
  /** Streamed exports (manifest.txt, /v2 pages): how many at once, their queue, run deadline, spool and write deadlines. */
  exports: number;
  exportQueue: number;
  exportTimeoutMs: number;
  exportBufferMb: number;
  writeTimeoutMs: number;
  streamMaxS: number;
  /** Caller SQL: worker processes, their memory, queue, deadline and result caps. */
  /** A size, or 'auto': sized from the machine (src/core/engine/caller-sizing.ts). */
  sqlMemoryLimit: string;
  sqlThreads: number;
  /** Worker processes, or 'auto': one per core, at most four. */
  sqlConnections: number | 'auto';
  sqlQueue: number;
  sqlTimeoutMs: number;
  sqlMaxRows: number;
  sqlMaxRowsCap: number;
  sqlMaxBytes: number;
  sqlIdleS: number;
  /** Memory for caller SQL results kept by statement (MB); 0 keeps none. */
  sqlCacheMb: number;
  /** Facet counts (computed in the server process): how many at once, and their queue. */
  facetSlots: number;
  facetQueue: number;
  /** Requests whose body is at least this large (bytes) take a slot of the large-body lane. */
  largeBodyBytes: number;
  largeBodies: number;
  largeBodyQueue: number;
  /** Memory for facet answers kept per release (MB); 0 keeps none. */
  facetCacheMb: number;
  /** Memory for manifest and table rows kept per release by row (MB); 0 keeps none. */
  rowCacheMb: number;
  /** Answer cohort counts, pages and facets from the in-memory cohort index ('off': the engine, by SQL). */
  cohortIndex: 'on' | 'off';
  /** A Trino coordinator serving this release's tables (null: none; DuckDB answers alone). */
  trinoUrl: string | null;
  trinoCatalog: string;
  trinoSchema: string;
  trinoUser: string;
  /** Caller SQL on Trino: the memory one query may take on the cluster (a Trino data size). */
  trinoQueryMemory: string;
  clinicalMaxRows: number;
  clinicalMaxRowsCap: number;
  pageSize: number;
  maxPageSize: number;
  manifestCap: number;
  /** Most lines one resolve request (identifiers or manifest lines) may hold. */
  resolveMaxLines: number;
  valuesLimit: number;
  valuesLimitCap: number;
  viewerBaseUrl: string;
  volviewUrl: string;
  /** Public base URL of this API (behind a proxy), used in every absolute URL it returns. */
  publicUrl: string | null;
  /** Host names (host or host:port) a request may name for the absolute URLs of its answer; loopback names always may. */
  allowedHosts: string[];
  /** Which proxies' X-Forwarded-* headers to believe: false, true (any), or their addresses/CIDRs. */
  trustProxy: TrustProxy;
  /** Endpoint overrides of the object stores (a mirror or a local S3-compatible server); null = the dataset's own. */
  cloud1Endpoint: string | null;
  cloud2Endpoint: string | null;
  /** The public metadata bucket the clinical tables are fetched from (S3 endpoint and bucket; a mirror replaces them). */
  metadataEndpoint: string;
  metadataBucket: string;
  /** Free disk space `data fetch --tables full` assumes instead of asking the disk (tests; null = ask the disk). */
  freeSpaceBytes: number | null;
  build: string | null;
  logLevel: string;
  /** An agent tool call that asks for progress is told after this long, then at this interval. */
  mcpProgressMs: number;
  sqlLogMode: 'snippet' | 'hash';
  /** HTTP hygiene: body size, header/body/keep-alive deadlines, connection cap, shutdown deadline. */
  bodyLimit: number;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  shutdownS: number;
  hstsMaxAge: number;
  /** /v2 manifests: default and largest page, how long a page may take before the answer is a 202, and parked pages. */
  v2PageSize: number;
  v2MaxPageSize: number;
  v2DeadlineMs: number;
  v2OrphanMs: number;
  v2Parked: number;
  /** Memory for /v2 manifests being paged (materialized once, then sliced), MB. */
  v2CacheMb: number;
  /** Extra secret mixed into the signing key of /v2 page tokens (same value on every replica). */
  tokenSecret: string;
  /** idqs serve: worker processes sharing its port; 1 = a single process (the default), 0 = one per core. */
  workers: number;
  /** Processes of the fleet this one belongs to (set by the fleet's primary); 1 when serving alone. */
  fleetSize: number;
}

/** A size the engine reads: 512MB, 2 GB, 1.5GiB, 100KB. */
const SIZE = '^[0-9]+(\\.[0-9]+)?\\s*([kKmMgGtT]i?[bB]|[bB])$';
const HTTP_URL = '^https?://[^\\s/?#]+(/[^\\s?#]*)?$';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The manifest cap in effect: IDQS_MANIFEST_CAP, or when it is 0 (the default) none (the largest exact integer). */
export function manifestCapOf(c: Pick<Config, 'manifestCap'>): number {
  return c.manifestCap > 0 ? c.manifestCap : Number.MAX_SAFE_INTEGER;
}

const int = (def: number, min: number, max = Number.MAX_SAFE_INTEGER) => Type.Integer({ default: def, minimum: min, maximum: max });
const size = (def: string) => Type.String({ default: def, pattern: SIZE, description: 'a size such as 512MB or 2GB' });
const url = () => Type.String({ pattern: HTTP_URL, description: 'an http(s) URL' });
const oneOf = (def: string, values: string[]) => Type.String({ default: def, enum: values });

interface Setting {
  key: keyof Config;
  schema: TSchema;
  /** What the README's configuration table says of it. */
  doc: string;
  /** Read from the raw string before the schema sees it (lists, special words). */
  parse?: (raw: string) => unknown;
}

/** Every setting, by environment variable. */
export const SETTINGS: Record<string, Setting> = {
  PORT: { key: 'port', schema: int(8000, 0, 65535), doc: 'port `idqs serve` listens on' },
  HOST: { key: 'host', schema: Type.String({ default: '127.0.0.1', minLength: 1 }), doc: 'interface `idqs serve` binds' },
  IDQS_DB: { key: 'db', schema: Type.String({ minLength: 1 }), doc: 'prebuilt database to serve; unset = the default dataset' },
  IDQS_RELEASE: { key: 'release', schema: Type.String({ minLength: 1 }), doc: 'real release to serve (`25.0.5`, `latest`)' },
  IDQS_RELEASE_SOURCE: { key: 'releaseSource', schema: oneOf('gcs', ['gcs', 'github', 'pypi']), doc: 'where to fetch it' },
  IDQS_DEMO: {
    key: 'demo',
    schema: Type.Boolean({ default: false, description: 'true or false (1/0, yes/no, on/off)' }),
    doc: 'serve the generated demo dataset without touching the network (same as `--demo`)',
    parse: (raw) => (/^(1|true|yes|on)$/i.test(raw.trim()) ? true : /^(0|false|no|off)$/i.test(raw.trim()) ? false : raw),
  },
  IDQS_SOURCE_TIMEOUT_MS: {
    key: 'sourceTimeoutMs',
    schema: int(3000, 100, 120_000),
    doc: 'when no release is cached and none is named: connect timeout of each release source tried in turn (bucket, GitHub, PyPI)',
  },
  IDQS_CACHE_DIR: { key: 'cacheDir', schema: Type.String({ minLength: 1 }), doc: 'generated datasets, fetched releases and built databases' },
  IDQS_SCALE: { key: 'scale', schema: Type.Number({ default: 0.03, exclusiveMinimum: 0, maximum: 10 }), doc: 'size of the default dataset (1.0 ≈ the real corpus)' },
  IDQS_SEED: { key: 'seed', schema: int(42, 0), doc: 'seed of the default dataset' },
  IDQS_MEMORY_LIMIT: { key: 'memoryLimit', schema: size('3GB'), doc: 'engine memory of curated queries' },
  IDQS_THREADS: { key: 'threads', schema: int(2, 1, 256), doc: 'engine threads of curated queries' },
  IDQS_CONNECTIONS: { key: 'connections', schema: int(8, 1, 256), doc: 'curated queries run at once' },
  IDQS_QUEUE: { key: 'queue', schema: int(64, 0, 100_000), doc: 'curated queries that may wait for a connection (503 `busy` beyond)' },
  IDQS_QUEUE_TIMEOUT_MS: { key: 'queueTimeoutMs', schema: int(10_000, 1), doc: 'longest wait for a slot of any budget (503 `busy` after)' },
  IDQS_QUERY_TIMEOUT_MS: { key: 'queryTimeoutMs', schema: int(30_000, 1), doc: 'run deadline of a curated query (504 `query_timeout`)' },
  IDQS_TEMP_DIR_SIZE: { key: 'tempDirSize', schema: size('4GB'), doc: 'cap on engine spill files (shared by caller-SQL workers)' },
  IDQS_EXPORTS: { key: 'exports', schema: int(8, 1, 10_000), doc: 'streamed exports (manifest.txt, /v2 pages) in flight, writing included' },
  IDQS_EXPORT_QUEUE: { key: 'exportQueue', schema: int(16, 0, 100_000), doc: 'exports that may wait for a slot' },
  IDQS_EXPORT_TIMEOUT_MS: { key: 'exportTimeoutMs', schema: int(120_000, 1), doc: 'run deadline of an export’s queries' },
  IDQS_EXPORT_BUFFER_MB: { key: 'exportBufferMb', schema: int(32, 1, 4096), doc: 'most an export spools ahead of its client (then it pauses and re-reads)' },
  IDQS_WRITE_TIMEOUT_MS: { key: 'writeTimeoutMs', schema: int(30_000, 1), doc: 'a streamed response whose client takes no byte for this long is cut' },
  IDQS_STREAM_MAX_S: { key: 'streamMaxS', schema: int(600, 1), doc: 'longest a streamed response may take, however fast its client reads' },
  IDQS_SQL_MEMORY_LIMIT: {
    key: 'sqlMemoryLimit',
    schema: Type.Union([Type.Literal('auto'), Type.String({ pattern: SIZE })], { default: 'auto', description: 'auto or a size such as 512MB or 2GB' }),
    doc: 'memory of caller SQL, split among its worker processes; `auto` = a quarter of the memory this machine (or its container) has, divided among the fleet\'s processes',
    parse: (raw) => (raw.trim().toLowerCase() === 'auto' ? 'auto' : raw.trim()),
  },
  IDQS_SQL_THREADS: { key: 'sqlThreads', schema: int(1, 1, 256), doc: 'engine threads per caller-SQL worker' },
  IDQS_SQL_CONNECTIONS: {
    key: 'sqlConnections',
    schema: Type.Union([Type.Literal('auto'), Type.Integer({ minimum: 1, maximum: 64 })], { default: 'auto', description: 'auto or an integer from 1 to 64' }),
    doc: 'caller-SQL worker processes (queries at once); `auto` = one per core, at most four',
    parse: (raw) => (raw.trim().toLowerCase() === 'auto' ? 'auto' : /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw),
  },
  IDQS_SQL_QUEUE: { key: 'sqlQueue', schema: int(32, 0, 100_000), doc: 'caller queries that may wait for a worker' },
  IDQS_SQL_TIMEOUT_MS: { key: 'sqlTimeoutMs', schema: int(30_000, 1), doc: 'caller SQL is stopped after this (504 `query_timeout`), its worker replaced if it does not stop' },
  IDQS_SQL_MAX_ROWS: { key: 'sqlMaxRows', schema: int(5000, 1), doc: 'default `max_rows` of `/v3/sql`' },
  IDQS_SQL_MAX_ROWS_CAP: { key: 'sqlMaxRowsCap', schema: int(10_000, 1), doc: 'ceiling of `max_rows`' },
  IDQS_SQL_MAX_BYTES: { key: 'sqlMaxBytes', schema: int(32 * 1024 * 1024, 1024, 2 ** 31), doc: 'byte budget of a SQL result (JSON rows); cut with `truncated_reason: max_bytes`' },
  IDQS_SQL_CACHE_MB: { key: 'sqlCacheMb', schema: int(64, 0, 65_536), doc: 'memory for caller-SQL results kept per release by statement (the data of a release never changes); `0` keeps none' },
  IDQS_SQL_IDLE_S: { key: 'sqlIdleS', schema: int(20, 0), doc: 'a caller-SQL worker idle this long is stopped (started again on next use); `0` keeps them' },
  IDQS_FACET_SLOTS: { key: 'facetSlots', schema: int(1, 1, 64), doc: 'facet counts computed at once' },
  IDQS_FACET_QUEUE: { key: 'facetQueue', schema: int(16, 0, 100_000), doc: 'facet requests that may wait' },
  IDQS_LARGE_BODY_BYTES: {
    key: 'largeBodyBytes',
    schema: int(65_536, 1024, 2 ** 30),
    doc: 'a request whose body is at least this large (or of unknown length) is read and answered in the large-body lane, so that such requests never hold the event loop for the others',
  },
  IDQS_LARGE_BODIES: { key: 'largeBodies', schema: int(1, 1, 64), doc: 'large-body requests read and answered at once' },
  IDQS_LARGE_BODY_QUEUE: { key: 'largeBodyQueue', schema: int(32, 0, 100_000), doc: 'large-body requests that may wait (503 `busy` beyond); their bodies stay unread meanwhile' },
  IDQS_FACET_CACHE_MB: { key: 'facetCacheMb', schema: int(32, 0, 65_536), doc: 'memory for facet answers kept per release by filter; `0` keeps none' },
  IDQS_ROW_CACHE_MB: { key: 'rowCacheMb', schema: int(32, 0, 65_536), doc: 'memory for the rows of manifest and table pages kept per release (a repeated page reads nothing from the engine); `0` keeps none' },
  IDQS_COHORT_INDEX: { key: 'cohortIndex', schema: oneOf('on', ['on', 'off']), doc: 'cohort counts, manifest pages and facets from the in-memory cohort index (`off`: by SQL in the engine)' },
  IDQS_CLINICAL_MAX_ROWS: { key: 'clinicalMaxRows', schema: int(5000, 1), doc: 'default `max_rows` of clinical rows' },
  IDQS_CLINICAL_MAX_ROWS_CAP: { key: 'clinicalMaxRowsCap', schema: int(10_000, 1), doc: 'its ceiling' },
  IDQS_PAGE_SIZE: { key: 'pageSize', schema: int(100, 1), doc: 'manifest page size default' },
  IDQS_MAX_PAGE_SIZE: { key: 'maxPageSize', schema: int(5000, 1), doc: 'manifest page size ceiling' },
  IDQS_MANIFEST_CAP: { key: 'manifestCap', schema: int(0, 0), doc: 'most series lines one manifest.txt (or s5cmd file) returns; `0`: the whole cohort. A cut body ends with a `#` line saying how many series were left out' },
  IDQS_RESOLVE_MAX_LINES: { key: 'resolveMaxLines', schema: int(100_000, 1, 10_000_000), doc: 'most lines (identifiers or manifest lines) one resolve request takes (413 beyond)' },
  IDQS_VALUES_LIMIT: { key: 'valuesLimit', schema: int(100, 1), doc: 'attribute values default' },
  IDQS_VALUES_LIMIT_CAP: { key: 'valuesLimitCap', schema: int(10_000, 1), doc: 'attribute values ceiling' },
  IDQS_VIEWER_BASE_URL: { key: 'viewerBaseUrl', schema: { ...url(), default: 'https://viewer.imaging.datacommons.cancer.gov' }, doc: 'base of viewer links' },
  IDQS_VOLVIEW_URL: { key: 'volviewUrl', schema: { ...url(), default: 'https://volview.kitware.app/' }, doc: 'the VolView app that `viewer=volview` links open (`?urls=[s3://<bucket>/<crdc_series_uuid>,…]`)' },
  IDQS_TRINO_URL: { key: 'trinoUrl', schema: url(), doc: 'a Trino coordinator serving this release (`deploy/trino/cluster.sh`): cohort questions the index cannot answer, and caller SQL sent with `engine: "trino"`; unset = DuckDB alone (`--trino`)' },
  IDQS_TRINO_CATALOG: { key: 'trinoCatalog', schema: Type.String({ default: 'idqs', pattern: '^[a-z][a-z0-9_]*$', description: 'a lowercase Trino name' }), doc: 'Trino catalog holding the release\'s tables' },
  IDQS_TRINO_SCHEMA: { key: 'trinoSchema', schema: Type.String({ default: 'main', pattern: '^[a-z][a-z0-9_]*$', description: 'a lowercase Trino name' }), doc: 'Trino schema holding the release\'s tables' },
  IDQS_TRINO_USER: { key: 'trinoUser', schema: Type.String({ default: 'idqs', minLength: 1, pattern: '^[A-Za-z0-9_.-]+$', description: 'a user name (letters, digits, _ . -)' }), doc: 'user IDQS names to Trino (`X-Trino-User`)' },
  IDQS_TRINO_QUERY_MEMORY: { key: 'trinoQueryMemory', schema: Type.String({ default: '200MB', pattern: '^[0-9]+(\\.[0-9]+)?(B|kB|MB|GB|TB)$', description: 'a Trino data size such as 200MB or 1GB' }), doc: 'memory one caller SQL query may use on the Trino cluster (session `query_max_memory`)' },
  IDQS_PUBLIC_URL: { key: 'publicUrl', schema: url(), doc: 'public base URL of the API, used in every absolute URL it returns' },
  IDQS_ALLOWED_HOSTS: {
    key: 'allowedHosts',
    schema: Type.Array(Type.String({ pattern: '^(\\*|[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?$' }), { default: [] }),
    doc: 'host names (comma-separated, `*` for any) a request may name for the absolute URLs of its answer when `IDQS_PUBLIC_URL` is unset; loopback names always may',
    parse: (raw) => raw.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
  },
  IDQS_TRUST_PROXY: {
    key: 'trustProxy',
    schema: Type.Union([Type.Boolean(), Type.Array(Type.String({ pattern: '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$|^(loopback|linklocal|uniquelocal)$' }), { minItems: 1 })], {
      default: false,
      description: 'false, true (any peer), or the proxies\' addresses or CIDRs separated by commas (loopback, linklocal and uniquelocal name those ranges)',
    }),
    doc: 'believe X-Forwarded-Proto/-Host/-For from: `false`, `true` (any peer), or the proxies’ addresses/CIDRs (comma-separated; `loopback` names 127.0.0.1/8 and ::1)',
    parse: (raw) => {
      const s = raw.trim().toLowerCase();
      if (s === 'true' || s === 'false') return s === 'true';
      return s.split(',').map((x) => x.trim()).filter(Boolean);
    },
  },
  IDQS_CLOUD1_ENDPOINT: { key: 'cloud1Endpoint', schema: url(), doc: 'replaces the first store’s endpoint in download commands and payloads' },
  IDQS_CLOUD2_ENDPOINT: { key: 'cloud2Endpoint', schema: url(), doc: 'replaces the second store’s endpoint' },
  IDQS_METADATA_S3_ENDPOINT: { key: 'metadataEndpoint', schema: { ...url(), default: 'https://s3.amazonaws.com' }, doc: '`data fetch --tables clinical`: S3-compatible endpoint of the metadata bucket (a mirror)' },
  IDQS_METADATA_BUCKET: { key: 'metadataBucket', schema: Type.String({ default: 'idc-open-metadata', pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' }), doc: 'bucket holding `bigquery_export/idc_v<N>_clinical/<table>/*.parquet`' },
  IDQS_FREE_SPACE_BYTES: { key: 'freeSpaceBytes', schema: Type.Integer({ minimum: 0 }), doc: '`data fetch --tables full`: free disk space to assume instead of asking the disk, bytes (for tests of the space check)' },
  IDQS_BUILD: { key: 'build', schema: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }), doc: 'build stamp reported as `api_version+build`' },
  IDQS_LOG_LEVEL: { key: 'logLevel', schema: oneOf('info', LOG_LEVELS), doc: 'log level' },
  IDQS_MCP_PROGRESS_MS: { key: 'mcpProgressMs', schema: int(1000, 10, 60_000), doc: 'an agent tool call that sent a progress token gets progress notifications after this long, then at this interval' },
  IDQS_SQL_LOG_MODE: { key: 'sqlLogMode', schema: oneOf('snippet', ['snippet', 'hash']), doc: 'caller SQL in the log: a 200-character snippet or a hash' },
  IDQS_BODY_LIMIT: { key: 'bodyLimit', schema: int(1_048_576, 1024, 2 ** 30), doc: 'largest request body, bytes (413 beyond)' },
  IDQS_REQUEST_TIMEOUT_MS: { key: 'requestTimeoutMs', schema: int(30_000, 100), doc: 'a request (headers and body) must arrive within this (408 after)' },
  IDQS_HEADERS_TIMEOUT_MS: { key: 'headersTimeoutMs', schema: int(10_000, 100), doc: 'its headers must arrive within this; also closes connections that send nothing' },
  IDQS_KEEP_ALIVE_TIMEOUT_MS: { key: 'keepAliveTimeoutMs', schema: int(5000, 100), doc: 'an idle kept-alive connection is closed after this' },
  IDQS_MAX_CONNECTIONS: { key: 'maxConnections', schema: int(1000, 1), doc: 'open connections at most (more are refused)' },
  IDQS_SHUTDOWN_S: { key: 'shutdownS', schema: Type.Number({ default: 10, minimum: 0, maximum: 3600 }), doc: 'on SIGTERM/SIGINT: finish in-flight work within this, then cut it and exit' },
  IDQS_HSTS_MAX_AGE: { key: 'hstsMaxAge', schema: int(31_536_000, 0), doc: '`Strict-Transport-Security` max-age; `0` disables' },
  IDQS_V2_PAGE_SIZE: { key: 'v2PageSize', schema: int(1000, 1), doc: '`/v2` manifest page size default' },
  IDQS_V2_MAX_PAGE_SIZE: { key: 'v2MaxPageSize', schema: int(50_000, 1), doc: '`/v2` page size maximum (larger requests are lowered to it)' },
  IDQS_V2_DEADLINE_MS: { key: 'v2DeadlineMs', schema: int(25_000, 1), doc: 'a `/v2` page slower than this answers 202 with a token that collects it' },
  IDQS_V2_ORPHAN_MS: { key: 'v2OrphanMs', schema: int(60_000, 1), doc: 'a page parked by a 202 and not collected within this is cancelled' },
  IDQS_V2_PARKED: { key: 'v2Parked', schema: int(32, 0, 10_000), doc: 'pages parked at once (503 `busy` beyond)' },
  IDQS_V2_CACHE_MB: { key: 'v2CacheMb', schema: int(512, 0), doc: 'memory for `/v2` manifests being paged; `0` disables' },
  IDQS_TOKEN_SECRET: { key: 'tokenSecret', schema: Type.String({ default: '' }), doc: 'secret in the signing key of `/v2` page tokens (unset: a random one kept in the cache folder)' },
  IDQS_WORKERS: { key: 'workers', schema: int(1, 0, 256), doc: '`idqs serve` worker processes sharing one port (`1` = a single process, the default, see docs/deploy.md; `0` = one per core)' },
};

/** IDQS_* variables read by other parts (the downloader, tests, benchmarks, release sources), not settings of the service. */
export const OTHER_VARIABLES: Record<string, string> = {
  IDQS_API: 'idqs download: the service that resolves cohorts',
  IDQS_DOWNLOAD_RETRY_BASE_MS: 'idqs download: first retry delay (tests)',
  IDQS_DOWNLOAD_LIST_PAGE: 'idqs download: listing page size (tests)',
  IDQS_DOWNLOAD_RESOLVE_CHUNK: 'idqs download: manifest lines read and resolved at once (tests)',
  IDQS_FETCH_RETRY_BASE_MS: 'idqs data fetch: first retry delay of the clinical tables (tests)',
  IDQS_RELEASE_GCS_URL: 'release source base URL',
  IDQS_RELEASE_GITHUB_URL: 'release source base URL',
  IDQS_PYPI_INDEX: 'release source: package index',
  IDQS_FLEET_SIZE: 'idqs serve --workers: the fleet size its primary tells each worker (auto sizing divides by it)',
  IDQS_SKIP_REAL_DATA: 'npm test: skip the real-release tests',
  IDQS_BENCH_DIR: 'bench:data: scratch folder',
};

/** A configuration that cannot start: every problem, one per line, each naming its variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.IDQS_CACHE_DIR) return env.IDQS_CACHE_DIR;
  const xdg = env.XDG_CACHE_HOME || join(homedir() || tmpdir(), '.cache');
  return join(xdg, 'idqs');
}

/** Bytes of a size setting (512MB, 2 GB, 1.5GiB). */
export function sizeBytes(s: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?)b$/i.exec(s.trim());
  if (!m) throw new Error(`not a size: ${s}`);
  const base = m[3] ? 1024 : 1000;
  return Math.round(Number(m[1]) * base ** ' kmgt'.indexOf(m[2]!.toLowerCase() || ' '));
}

let validators: { coerced: ReturnType<Ajv['compile']>; parsed: ReturnType<Ajv['compile']> } | undefined;

/**
 * Two validators: plain settings arrive as strings and are coerced (allErrors:
 * every problem at once); settings read by their own parser (lists, words or
 * numbers) are checked as they are, since coercion inside a union would turn 1 into true.
 */
function compile() {
  const of = (parsed: boolean) => {
    const properties: Record<string, TSchema> = {};
    for (const [name, s] of Object.entries(SETTINGS)) if (Boolean(s.parse) === parsed) properties[name] = Type.Optional(s.schema);
    // Run once per process: our own (TypeBox) schema needs no meta-schema check, and unoptimised code compiles in half the time.
    return new Ajv({ allErrors: true, coerceTypes: !parsed, useDefaults: true, strict: false, validateSchema: false, code: { optimize: false } }).compile(Type.Object(properties));
  };
  return { coerced: of(false), parsed: of(true) };
}

function describe(e: ErrorObject, raw: Record<string, unknown>): string {
  const name = e.instancePath.split('/')[1] ?? '?';
  const value = JSON.stringify(raw[name]);
  const schema = SETTINGS[name]?.schema as { description?: string } | undefined;
  switch (e.keyword) {
    case 'type':
      return `${name}=${value} must be ${e.params.type === 'integer' ? 'an integer (no fraction)' : `a ${e.params.type}`}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
      return `${name}=${value} must be ${e.params.comparison} ${e.params.limit}`;
    case 'anyOf':
      return `${name}=${value} must be ${schema?.description ?? 'one of the accepted forms'}`;
    case 'enum':
      return `${name}=${value} must be one of ${(e.params.allowedValues as string[]).join(', ')}`;
    case 'pattern':
      return `${name}=${value} must be ${schema?.description ?? `of the form ${e.params.pattern}`}`;
    default:
      return `${name}=${value} ${e.message ?? 'is invalid'}`;
  }
}

/** Default ≤ cap pairs: a default above its cap would make every request a client error. */
const CAPS: [string, string][] = [
  ['IDQS_SQL_MAX_ROWS', 'IDQS_SQL_MAX_ROWS_CAP'],
  ['IDQS_CLINICAL_MAX_ROWS', 'IDQS_CLINICAL_MAX_ROWS_CAP'],
  ['IDQS_PAGE_SIZE', 'IDQS_MAX_PAGE_SIZE'],
  ['IDQS_VALUES_LIMIT', 'IDQS_VALUES_LIMIT_CAP'],
  ['IDQS_V2_PAGE_SIZE', 'IDQS_V2_MAX_PAGE_SIZE'],
];

/**
 * IDQS_* variables that are no setting, each with a did-you-mean. Warnings,
 * not errors: programs that start the server (a client's test harness
 * exporting IDQS_BASE) may export variables of their own with the prefix.
 */
export function configWarnings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = [...Object.keys(SETTINGS), ...Object.keys(OTHER_VARIABLES)].filter((n) => n.startsWith('IDQS_'));
  return Object.keys(env)
    .filter((name) => name.startsWith('IDQS_') && !(name in SETTINGS) && !(name in OTHER_VARIABLES) && env[name] !== undefined)
    .sort()
    .map((name) => `${name} is not a setting and is ignored.${suggestionText(suggest(name, known))} The settings are listed in the README (Configuration).`);
}

/** The configuration of `env`, or a ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const raw: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SETTINGS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    raw[name] = s.parse ? s.parse(v) : v;
  }
  const data: Record<string, unknown> = { ...raw };
  validators ??= compile();
  for (const v of [validators.coerced, validators.parsed]) {
    if (v(data)) continue;
    const errors = v.errors ?? [];
    // A union reports each branch and then anyOf: say it once, in the setting's own words.
    const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
    for (const e of errors) if (e.keyword === 'anyOf' || !unions.has(e.instancePath)) problems.push(describe(e, raw));
  }
  const bad = new Set(problems.map((p) => p.split(/[=\s]/)[0]));
  {
    for (const [def, cap] of CAPS) {
      if (!bad.has(def) && !bad.has(cap) && (data[def] as number) > (data[cap] as number)) {
        problems.push(`${def}=${data[def]} is above ${cap}=${data[cap]}: a default must not exceed its cap; lower ${def} or raise ${cap}.`);
      }
    }
    for (const name of ['IDQS_MEMORY_LIMIT', 'IDQS_SQL_MEMORY_LIMIT', 'IDQS_TEMP_DIR_SIZE']) {
      if (!bad.has(name) && data[name] !== 'auto' && sizeBytes(String(data[name])) < 16 * 1024 * 1024) problems.push(`${name}=${JSON.stringify(data[name])} is below 16MB, too little for the engine.`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const cfg = { cacheDir: defaultCacheDir(env) } as Record<string, unknown>;
  for (const [name, s] of Object.entries(SETTINGS)) {
    if (name === 'IDQS_CACHE_DIR') continue;
    cfg[s.key] = data[name] ?? null;
  }
  const fleet = Number(env.IDQS_FLEET_SIZE);
  cfg.fleetSize = Number.isInteger(fleet) && fleet > 0 ? fleet : 1;
  const trim = (u: unknown) => (typeof u === 'string' ? u.replace(/\/+$/, '') : null);
  for (const k of ['viewerBaseUrl', 'publicUrl', 'cloud1Endpoint', 'cloud2Endpoint', 'trinoUrl'] as const) cfg[k] = trim(cfg[k]);
  return cfg as unknown as Config;
}
