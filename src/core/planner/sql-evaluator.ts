// The evaluator of last resort: every cohort question as SQL over the served
// index on the embedded engine (DuckDB). It answers anything the filter
// compiler accepts, so the planner can always fall back to it; it is also the
// reference the cohort index's answers are tested against.

import type { AppContext } from '../context.ts';
import type { Param } from '../engine/engine.ts';
import type { CompiledFilter } from '../filters/v3.ts';
import { pagedLines } from '../services/line-stream.ts';
import { MANIFEST_ORDER } from '../rules/manifest-order.ts';
import { toNumber } from '../services/numbers.ts';
import { v2CountStats } from '../services/v2/index-count.ts';
import { COUNTS_SELECT, countsFromRow, type Counts } from '../services/version.ts';
import type { CompleteEvaluator, LicenseGroup } from './questions.ts';

/** The counts query over a compiled filter. */
export async function countsBySql(ctx: AppContext, c: Pick<CompiledFilter, 'where' | 'params'>): Promise<Counts> {
  return countsFromRow(await ctx.engine.one(`SELECT ${COUNTS_SELECT} FROM "index" WHERE ${c.where}`, c.params));
}

/** Series and size per license over any row source (a past release's versions too): most series first, then by name, null last. */
export async function licenseGroupsBySql(ctx: AppContext, where: string, params: Param[], from = '"index"'): Promise<LicenseGroup[]> {
  const rows = await ctx.engine.rows(
    `SELECT license_short_name, count(*) AS series, COALESCE(sum(series_size_MB), 0) AS size_mb FROM ${from} WHERE ${where}
     GROUP BY license_short_name ORDER BY series DESC, license_short_name ASC NULLS LAST`,
    params,
  );
  return rows.map((r) => ({ license: r.license_short_name === null ? null : String(r.license_short_name), series: toNumber(r.series), sizeMb: toNumber(r.size_mb) }));
}

/** Series `[offset, offset + size)` of a filter in manifest order. */
export function seriesRowsSql(c: Pick<CompiledFilter, 'where' | 'params'>, offset: number, size: number, select: string): { sql: string; params: Param[] } {
  return { sql: `SELECT ${select} FROM "index" WHERE ${c.where} ORDER BY ${MANIFEST_ORDER} LIMIT ? OFFSET ?`, params: [...c.params, size, offset] };
}

export const sqlEvaluator: CompleteEvaluator = {
  name: 'duckdb',
  counts: countsBySql,
  licenses: (ctx, c) => licenseGroupsBySql(ctx, c.where, c.params),
  seriesRows(ctx, c, offset, size, select) {
    const q = seriesRowsSql(c, offset, size, select);
    return ctx.engine.rows(q.sql, q.params);
  },
  async tableRows(ctx, c, t) {
    const group = t.keys.length > 0 ? ` GROUP BY ${t.keys.join(', ')}` : '';
    return ctx.engine.rows(`SELECT ${t.select} FROM "index" WHERE ${c.where}${group} ORDER BY ${t.orderBy} LIMIT ? OFFSET ?`, [...c.params, t.size, t.offset]);
  },
  async tableTotal(ctx, c, t) {
    const sql =
      t.keys.length > 0
        ? `SELECT count(*) AS n FROM (SELECT 1 FROM "index" WHERE ${c.where} GROUP BY ${t.keys.join(', ')})`
        : `SELECT count(*) AS n FROM "index" WHERE ${c.where}`;
    return toNumber((await ctx.engine.one(sql, c.params))?.n);
  },
  async manifestLines(ctx, m) {
    // The line is built after the sort, for the rows taken only: the sort carries narrow keys, not long lines.
    const lines = `SELECT ${m.line.sql} AS line FROM (SELECT ${m.columns} FROM ${m.from} WHERE ${m.where} ORDER BY ${m.order} LIMIT ?::BIGINT OFFSET ?::BIGINT)`;
    const total = async () => toNumber((await ctx.engine.one(`SELECT count(*) AS n FROM ${m.from} WHERE ${m.where}`, m.params))?.n);
    return { linesAt: pagedLines(lines, [...m.line.params, ...m.params]), total };
  },
  async v2Count(ctx, v) {
    v2CountStats(ctx).sql++;
    return Number((await ctx.engine.one(v.countSql, v.countParams))!.n);
  },
};
