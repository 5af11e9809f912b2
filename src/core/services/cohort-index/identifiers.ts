// Identifier attributes (PatientID, StudyInstanceUID, SeriesInstanceUID) held
// compactly: their distinct values sorted by bytes in one buffer, each with a
// target (the entity id the facet table gives it, or a row position). A term
// filter on them is a binary search per value instead of a scan of the engine.
// JavaScript strings for a million UIDs would cost about 100 MB; this costs
// the bytes plus 8 per value.

import type { AppContext } from '../../context.ts';
import { qi } from '../../registry/tables.ts';

export interface SortedStrings {
  bytes: Buffer;
  /** Start of value i in `bytes`; offsets[n] is the end. */
  offsets: Uint32Array;
  /** What value i stands for (an entity id, or a row position). */
  targets: Int32Array;
}

/** Index of `value` among the sorted strings, or -1. */
export function findString(s: SortedStrings, value: string): number {
  const key = Buffer.from(value, 'utf8');
  let lo = 0;
  let hi = s.targets.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = Buffer.compare(s.bytes.subarray(s.offsets[mid]!, s.offsets[mid + 1]!), key);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The value at index i. */
export function stringAt(s: SortedStrings, i: number): string {
  return s.bytes.toString('utf8', s.offsets[i]!, s.offsets[i + 1]!);
}

/**
 * Distinct values of a column, sorted, with a target each. `target` is the SQL
 * of the target per value (a rank, or the row's position source); the engine
 * sorts, and the order is checked to be byte order, since the lookups
 * binary-search by bytes (null when it is not: that attribute is then left to SQL).
 */
/** The index's build queries read whole columns: longer than a request's deadline on a busy host. */
export const BUILD_QUERY_MS = 600_000;

export async function loadSortedStrings(ctx: AppContext, sql: string, targetOf: (raw: number) => number): Promise<SortedStrings | null> {
  // Streamed chunk by chunk into one growing buffer: neither the whole result nor a Buffer per value is held while loading.
  let bytes = Buffer.allocUnsafe(1 << 20);
  let offsets = new Uint32Array(1 << 16);
  let targets = new Int32Array(1 << 16);
  let i = 0;
  let at = 0;
  let sorted = true;
  await ctx.engine.produce(
    sql,
    [],
    (chunk) => {
      const v = chunk.getColumnVector(0);
      const t = chunk.getColumnVector(1);
      for (let j = 0; j < chunk.rowCount; j++, i++) {
        const s = String(v.getItem(j));
        const need = at + Buffer.byteLength(s, 'utf8');
        if (need > bytes.length) {
          const grown = Buffer.allocUnsafe(Math.max(need, bytes.length * 2));
          bytes.copy(grown, 0, 0, at);
          bytes = grown;
        }
        if (i + 2 > offsets.length) {
          const o = new Uint32Array(offsets.length * 2);
          o.set(offsets);
          offsets = o;
          const g = new Int32Array(targets.length * 2);
          g.set(targets);
          targets = g;
        }
        at += bytes.write(s, at, 'utf8');
        offsets[i + 1] = at;
        targets[i] = targetOf(Number(t.getItem(j)));
        if (i > 0 && Buffer.compare(bytes.subarray(offsets[i - 1]!, offsets[i]!), bytes.subarray(offsets[i]!, at)) >= 0) sorted = false;
      }
      return sorted;
    },
    { timeoutMs: BUILD_QUERY_MS },
  );
  if (!sorted) return null;
  return { bytes: Buffer.from(bytes.subarray(0, at)), offsets: offsets.slice(0, i + 1), targets: targets.slice(0, i) };
}

/** A dictionary of an entity column, in the order the facet table ranks it (1-based ids). */
export function entityDictionary(ctx: AppContext, col: string): Promise<SortedStrings | null> {
  return loadSortedStrings(
    ctx,
    `SELECT v, (row_number() OVER (ORDER BY v))::INTEGER AS id FROM (SELECT DISTINCT ${qi(col)}::VARCHAR AS v FROM "index" WHERE ${qi(col)} IS NOT NULL) ORDER BY v`,
    (id) => id,
  );
}

/** Each row's value of a column unique per row, sorted, targeting the row's position. */
export function rowDictionary(ctx: AppContext, col: string, positionOf: Int32Array): Promise<SortedStrings | null> {
  return loadSortedStrings(ctx, `SELECT ${qi(col)}::VARCHAR AS v, rowid::INTEGER AS rid FROM "index" WHERE ${qi(col)} IS NOT NULL ORDER BY v`, (rid) => positionOf[rid]!);
}
