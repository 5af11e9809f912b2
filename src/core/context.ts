// The application context: configuration, the engine, what the opened
// database holds (tables, clinical tables, dataset metadata) and the server's
// own version. Built once at start-up; adapters receive it and call services.

import { readFileSync } from 'node:fs';
import { sizeBytes, type Config } from '../config.ts';
import { callerSizing } from './engine/caller-sizing.ts';
import { Engine, type EngineOptions } from './engine/engine.ts';
import { detached, forCaller } from './engine/work.ts';
import { TABLES } from './registry/tables.ts';
import { checkDbFileName, type DatasetMetadata } from './data/build.ts';
import { tokenSecret } from './services/v2/token-secret.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; name: string };

export interface ColumnInfo {
  name: string;
  type: string;
}

export interface Catalog {
  /** Registry tables present in the database, in registry order, then unexpected ones by name. */
  tables: string[];
  columns: Map<string, ColumnInfo[]>;
  clinicalTables: string[];
  v2Tables: string[];
  /** The release's own descriptions (its _schema.json files), by "table.column" ("table." for the table). */
  docs: Map<string, string>;
}

export interface DatasetInfo extends DatasetMetadata {
  identity: string;
}

export interface AppContext {
  config: Config;
  engine: Engine;
  dataset: DatasetInfo;
  catalog: Catalog;
  apiVersion: string;
  /** api_version plus +build when the deployment stamped one. */
  serverVersion: string;
  /** Weak validator shared by every response that depends only on the data release. */
  etag: string;
  /** Results that never change for a given database, computed once. */
  memo: Map<string, Promise<unknown>>;
  /** Signs /v2 page tokens: IDQS_TOKEN_SECRET, or the random one kept in the cache folder. */
  tokenSecret: string;
  /** When one process serves several releases: all of them, newest (the default) first (see ./releases.ts). */
  served?: AppContext[];
}

/** Key under which the served view of several releases (./releases.ts) answers the current request's release. */
export const RELEASE_OF_VIEW = Symbol('the release context behind the served view');

/**
 * The release context itself, for what is kept per release by identity
 * (caches in WeakMaps): the served view of several releases is one object for all.
 */
export function releaseContext(ctx: AppContext): AppContext {
  return (ctx as unknown as Record<symbol, AppContext | undefined>)[RELEASE_OF_VIEW] ?? ctx;
}

export const API_VERSION = pkg.version;

async function loadCatalog(engine: Engine): Promise<Catalog> {
  const rows = await engine.rows(
    `SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns
     WHERE table_schema IN ('main', 'clinical', 'v2') ORDER BY table_schema, table_name, ordinal_position`,
  );
  const columns = new Map<string, ColumnInfo[]>();
  const inSchema: Record<string, Set<string>> = { main: new Set(), clinical: new Set(), v2: new Set() };
  for (const r of rows) {
    const schema = String(r.table_schema);
    const table = String(r.table_name);
    inSchema[schema]!.add(table);
    const key = schema === 'main' ? table : `${schema}.${table}`;
    if (!columns.has(key)) columns.set(key, []);
    columns.get(key)!.push({ name: String(r.column_name), type: String(r.data_type) });
  }
  const registry = TABLES.map((t) => t.name).filter((n) => inSchema.main!.has(n));
  const extra = [...inSchema.main!].filter((n) => !registry.includes(n)).sort();
  const docs = new Map<string, string>();
  // Databases built before the docs table existed have none.
  const hasDocs = await engine.rows(`SELECT 1 FROM information_schema.tables WHERE table_schema = 'idqs_meta' AND table_name = 'docs'`);
  if (hasDocs.length > 0) {
    for (const r of await engine.rows(`SELECT table_name, column_name, description FROM idqs_meta.docs`)) docs.set(`${r.table_name}.${r.column_name}`, String(r.description));
  }
  return {
    tables: [...registry, ...extra],
    columns,
    clinicalTables: [...inSchema.clinical!].sort(),
    v2Tables: [...inSchema.v2!].sort(),
    docs,
  };
}

/** The engine's budgets, from the configuration. */
export function engineOptions(c: Config, path: string): EngineOptions {
  const sizing = callerSizing(c);
  return {
    path,
    curated: {
      memoryLimit: c.memoryLimit,
      threads: c.threads,
      tempDirSize: c.tempDirSize,
      connections: c.connections,
      queue: c.queue,
      queueTimeoutMs: c.queueTimeoutMs,
      queryTimeoutMs: c.queryTimeoutMs,
    },
    exports: {
      slots: c.exports,
      queue: c.exportQueue,
      queueTimeoutMs: c.queueTimeoutMs,
      timeoutMs: c.exportTimeoutMs,
      // A streamed response holds its slot while it writes, at most this long.
      maxHoldMs: c.streamMaxS * 1000 + c.exportTimeoutMs + 5000,
    },
    facets: { slots: c.facetSlots, queue: c.facetQueue, queueTimeoutMs: c.queueTimeoutMs },
    caller: {
      workers: sizing.workers,
      memoryBytes: sizing.memoryBytes,
      memoryLimit: sizing.memoryText,
      threads: c.sqlThreads,
      tempDirSize: `${Math.max(16, Math.floor(sizeBytes(c.tempDirSize) / sizing.workers / 1e6))}MB`,
      queue: c.sqlQueue,
      queueTimeoutMs: c.queueTimeoutMs,
      timeoutMs: c.sqlTimeoutMs,
      maxBytes: c.sqlMaxBytes,
      idleMs: c.sqlIdleS * 1000,
    },
  };
}

export async function createContext(config: Config, dbPath: string): Promise<AppContext> {
  checkDbFileName(dbPath);
  const engine = await Engine.open(engineOptions(config, dbPath));
  try {
    const meta = await engine.rows(`SELECT key, value FROM idqs_meta.dataset`);
    const get = (k: string) => meta.find((r) => r.key === k)?.value as string | undefined;
    const metadata = JSON.parse(get('metadata') ?? 'null') as DatasetMetadata | null;
    const identity = get('identity');
    if (!metadata || !identity) throw new Error(`${dbPath} has no dataset metadata; build it with "idqs data build"`);
    const catalog = await loadCatalog(engine);
    if (!catalog.tables.includes('index')) throw new Error(`${dbPath} has no table "index"`);
    // Endpoint overrides (a mirror, or a local S3-compatible server in tests) replace the dataset's own.
    for (const [key, endpoint] of [['cloud1', config.cloud1Endpoint], ['cloud2', config.cloud2Endpoint]] as const) {
      if (endpoint) metadata.stores = { ...metadata.stores, [key]: { ...metadata.stores[key], endpoint } };
    }
    const serverVersion = config.build && !API_VERSION.includes('+') ? `${API_VERSION}+${config.build}` : API_VERSION;
    return {
      config,
      engine,
      dataset: { ...metadata, identity },
      catalog,
      apiVersion: API_VERSION,
      serverVersion,
      etag: `W/"idqs-${identity.slice(0, 16)}-${serverVersion}"`,
      memo: new Map(),
      tokenSecret: tokenSecret(config.tokenSecret, config.cacheDir),
    };
  } catch (e) {
    engine.close();
    throw e;
  }
}

/**
 * Compute once per process (data is immutable for an opened database). The
 * computation is shared, so it runs detached from the request that starts it:
 * that client leaving does not fail the others waiting for it.
 */
export function memo<T>(ctx: AppContext, key: string, fn: () => Promise<T>): Promise<T> {
  let p = ctx.memo.get(key) as Promise<T> | undefined;
  if (!p) {
    p = detached(fn);
    ctx.memo.set(key, p);
    p.catch(() => ctx.memo.delete(key));
  }
  // A caller that leaves stops waiting; the shared computation goes on for the others.
  return forCaller(p);
}
