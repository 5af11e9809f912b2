// The evaluator of last resort: every cohort question as SQL over the served
// index on the embedded engine (DuckDB). It answers anything the filter
// compiler accepts, so the planner can always fall back to it; it is also the
// reference the cohort index's answers are tested against. The SQL itself is
// ./question-sql.ts's, shared with the Trino evaluator.

import type { AppContext } from '../context.ts';
import type { Param, Row } from '../engine/engine.ts';
import type { CompiledFilter } from '../filters/v3.ts';
import { pagedLines } from '../services/line-stream.ts';
import { toNumber } from '../services/numbers.ts';
import { v2CountStats } from '../services/v2/index-count.ts';
import { countsFromRow, type Counts } from '../services/version.ts';
import { countsSql, licensesSql, seriesPageSql, tableRowsSql, tableTotalSql } from './question-sql.ts';
import type { CompleteEvaluator, LicenseGroup } from './questions.ts';

/** The counts query over a compiled filter. */
export async function countsBySql(ctx: AppContext, c: Pick<CompiledFilter, 'where' | 'params'>): Promise<Counts> {
  const q = countsSql(c);
  return countsFromRow(await ctx.engine.one(q.sql, q.params));
}

/** License groups from the rows of the licenses question. */
export function licenseGroupsOf(rows: Row[]): LicenseGroup[] {
  return rows.map((r) => ({ license: r.license_short_name === null ? null : String(r.license_short_name), series: toNumber(r.series), sizeMb: toNumber(r.size_mb) }));
}

/** Series and size per license over any row source (a past release's versions too): most series first, then by name, null last. */
export async function licenseGroupsBySql(ctx: AppContext, where: string, params: Param[], from = '"index"'): Promise<LicenseGroup[]> {
  const q = licensesSql(where, params, from);
  return licenseGroupsOf(await ctx.engine.rows(q.sql, q.params));
}

/** Series `[offset, offset + size)` of a filter in manifest order. */
export function seriesRowsSql(c: Pick<CompiledFilter, 'where' | 'params'>, offset: number, size: number, select: string): { sql: string; params: Param[] } {
  return seriesPageSql(c, offset, size, select);
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
    const q = tableRowsSql(c, t);
    return ctx.engine.rows(q.sql, q.params);
  },
  async tableTotal(ctx, c, t) {
    const q = tableTotalSql(c, t);
    return toNumber((await ctx.engine.one(q.sql, q.params))?.n);
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
