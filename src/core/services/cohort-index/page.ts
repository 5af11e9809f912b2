// A page of a selection in manifest order, and the rows' details fetched from
// the engine by row id (never by running the filter again), or from the rows
// kept by an earlier page (row-cache.ts).

import type { AppContext } from '../../context.ts';
import type { Row } from '../../engine/engine.ts';
import type { CohortIndex } from './build.ts';
import type { Selection } from './evaluate.ts';
import { copyRow, rowCacheOf, rowKey } from './row-cache.ts';

/** Size of a selection. */
export function sizeOf(ix: CohortIndex, sel: Selection | 'all'): number {
  return sel === 'all' ? ix.rows : sel.n;
}

/** Positions of the selection's rows [offset, offset + count) in manifest order. */
export function pagePositions(ix: CohortIndex, sel: Selection | 'all', offset: number, count: number): Uint32Array {
  const n = sizeOf(ix, sel);
  const end = Math.min(n, offset + count);
  if (offset >= end) return new Uint32Array(0);
  const order = ix.manifestOrder;
  if (sel === 'all') return order ? order.slice(offset, end) : Uint32Array.from({ length: end - offset }, (_, i) => offset + i);
  // Table order is manifest order (the build writes rows so): the selection is already sorted.
  if (order === null) return sel.rows.slice(offset, end);
  const ranks = new Uint32Array(sel.n);
  for (let i = 0; i < sel.n; i++) ranks[i] = ix.manifestRank![sel.rows[i]!]!;
  ranks.sort();
  return Uint32Array.from(ranks.subarray(offset, end), (r) => order[r]!);
}

/**
 * The rows at these positions, in the same order, with the given SELECT list:
 * kept rows from the row cache, the others read from the engine by row id
 * (bounding the row ids lets it read only the row groups that hold them).
 */
export async function rowsAt(ctx: AppContext, ix: CohortIndex, positions: Uint32Array, select: string): Promise<Row[]> {
  if (positions.length === 0) return [];
  const ids = Array.from(positions, (p) => ix.rowidOf[p]!);
  const cache = rowCacheOf(ctx, ix);
  const out: (Row | undefined)[] = ids.map((id) => cache?.get(rowKey(select, id)));
  const missing = ids.filter((_, i) => out[i] === undefined);
  if (missing.length > 0) {
    const read = await readRows(ctx, missing, select);
    ids.forEach((id, i) => {
      if (out[i] !== undefined) return;
      const r = read.get(id);
      if (!r) throw new Error(`cohort index: row ${id} of "index" was not found`);
      cache?.set(rowKey(select, id), r);
      out[i] = r;
    });
  }
  return out.map((r) => copyRow(r!));
}

/** Rows of `index` by row id, read in one query. */
async function readRows(ctx: AppContext, ids: number[], select: string): Promise<Map<number, Row>> {
  let lo = ids[0]!;
  let hi = ids[0]!;
  for (const id of ids) {
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  // A dense page (the usual case: manifest order is table order) reads its span and keeps its rows;
  // a sparse one lists its ids. They are integers of our own, written inline.
  const dense = hi - lo + 1 <= 4 * ids.length;
  const rows = await ctx.engine.rows(
    `SELECT rowid AS "__rowid", ${select} FROM "index" WHERE rowid BETWEEN ${lo} AND ${hi}${dense ? '' : ` AND rowid IN (${ids.join(', ')})`}`,
  );
  const byId = new Map<number, Row>();
  for (const r of rows) {
    const { __rowid, ...rest } = r;
    byId.set(Number(__rowid), rest);
  }
  return byId;
}
