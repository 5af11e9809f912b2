// Caller SQL results kept per release by statement: a release's data never
// changes while it is served, so the same statement with the same row cap has
// the same answer, and an agent or a notebook asking it again costs a lookup
// instead of a worker's run. Bounded by bytes (IDQS_SQL_CACHE_MB); a statement
// whose answer can change between runs (random numbers, the clock, sampling,
// sequences) is never kept, nor is a failure.

import { LRUCache } from 'lru-cache';
import { releaseContext, type AppContext } from '../context.ts';
import type { CallerSqlResult } from '../engine/engine.ts';

/** What became of a statement's answer: taken from the cache, run and kept, or run and not kept. */
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

/** Functions and clauses whose answer can differ from one run to the next (names as DuckDB spells them, case-insensitive). */
const VOLATILE =
  /\b(random|uuid|gen_random_uuid|uuidv4|uuidv7|setseed|now|today|current_(?:timestamp|date|time|localtime|localtimestamp)|get_current_(?:time|timestamp)|transaction_timestamp|nextval|currval|tablesample|using\s+sample|reservoir|bernoulli)\b/i;

export const isDeterministic = (sql: string): boolean => !VOLATILE.test(sql);

const caches = new WeakMap<AppContext, LRUCache<string, CallerSqlResult>>();

function cacheOf(ctx: AppContext): LRUCache<string, CallerSqlResult> | null {
  const bytes = ctx.config.sqlCacheMb * 1024 * 1024;
  if (bytes <= 0) return null;
  const release = releaseContext(ctx);
  let c = caches.get(release);
  if (!c) {
    // A kept result costs its rows' JSON text (two bytes a character) and a little more.
    c = new LRUCache<string, CallerSqlResult>({ maxSize: bytes, sizeCalculation: (r) => 2 * r.rowsJson.length + 1024, maxEntrySize: Math.max(1024, bytes / 8) });
    caches.set(release, c);
  }
  return c;
}

/** The answer of `sql` with `maxRows`, from the release's cache or from `run` (kept when it may be). */
export async function cachedCallerSql(ctx: AppContext, sql: string, maxRows: number, run: () => Promise<CallerSqlResult>): Promise<{ result: CallerSqlResult; cache: CacheOutcome }> {
  const cache = isDeterministic(sql) ? cacheOf(ctx) : null;
  const key = `${maxRows}\u0000${sql}`;
  const kept = cache?.get(key);
  if (kept) return { result: kept, cache: 'hit' };
  const result = await run();
  if (!cache) return { result, cache: 'bypass' };
  cache.set(key, result);
  return { result, cache: 'miss' };
}
