// Rows of `index` read for manifest and table pages, kept per index by row id
// and SELECT list within IDQS_ROW_CACHE_MB: a release never changes while it is
// served, so a page asked again (an explorer paging back, a client retrying,
// a benchmark) is made from memory without a query. Callers get copies, so
// what they change never reaches the kept rows.

import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import type { Row } from '../../engine/engine.ts';
import type { JsonValue } from '../../engine/json.ts';
import type { CohortIndex } from './build.ts';

const caches = new WeakMap<CohortIndex, LRUCache<string, Row>>();

/** Bytes a row holds, roughly: its strings (two bytes a character), a slot per value, the object. */
function rowBytes(r: Row): number {
  let n = 64;
  for (const k in r) {
    const v: JsonValue = r[k]!;
    n += 16 + (typeof v === 'string' ? 2 * v.length : 0);
  }
  return n;
}

export function rowCacheOf(ctx: AppContext, ix: CohortIndex): LRUCache<string, Row> | null {
  const bytes = ctx.config.rowCacheMb * 1024 * 1024;
  if (bytes <= 0) return null;
  let c = caches.get(ix);
  if (!c) {
    c = new LRUCache<string, Row>({ maxSize: bytes, sizeCalculation: rowBytes });
    caches.set(ix, c);
  }
  return c;
}

/** The key of a row id under a SELECT list (the list is the same text for every page of one kind). */
export const rowKey = (select: string, id: number): string => `${id}\u0000${select}`;

/** A copy of a kept row: its own object, and its own lists or structs should a SELECT list have them. */
export function copyRow(r: Row): Row {
  const out = { ...r };
  for (const k in out) if (typeof out[k] === 'object' && out[k] !== null) out[k] = structuredClone(out[k]);
  return out;
}
