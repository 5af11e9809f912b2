// The SQL of each cohort question, written once and shared by every SQL
// engine: the embedded DuckDB (./sql-evaluator.ts) runs it as it is, Trino
// (./trino-evaluator.ts) after ./dialect.ts has translated what differs. The
// only piece spelled per engine here is a page's LIMIT/OFFSET (their order
// differs), asked of the dialect.

import type { Param } from '../engine/engine.ts';
import type { CompiledFilter } from '../filters/v3.ts';
import { MANIFEST_ORDER } from '../rules/manifest-order.ts';
import { COUNTS_SELECT } from '../services/version.ts';
import type { TablePageAsk } from './questions.ts';

export interface SqlText {
  sql: string;
  params: Param[];
}

/** What a question's SQL asks of the engine it is written for. */
export interface PageDialect {
  /** The clause that takes `size` rows after `offset`, and its values in the order of its placeholders. */
  page(size: number, offset: number): SqlText;
}

export const DUCKDB_PAGE: PageDialect = { page: (size, offset) => ({ sql: 'LIMIT ? OFFSET ?', params: [size, offset] }) };

type Where = Pick<CompiledFilter, 'where' | 'params'>;

export function countsSql(c: Where): SqlText {
  return { sql: `SELECT ${COUNTS_SELECT} FROM "index" WHERE ${c.where}`, params: c.params };
}

/** Series and size per license: most series first, then by name, null last. */
export function licensesSql(where: string, params: Param[], from = '"index"'): SqlText {
  return {
    sql: `SELECT license_short_name, count(*) AS series, COALESCE(sum(series_size_MB), 0) AS size_mb FROM ${from} WHERE ${where}
     GROUP BY license_short_name ORDER BY series DESC, license_short_name ASC NULLS LAST`,
    params,
  };
}

/** Series `[offset, offset + size)` of a filter in manifest order. */
export function seriesPageSql(c: Where, offset: number, size: number, select: string, d: PageDialect = DUCKDB_PAGE): SqlText {
  const p = d.page(size, offset);
  return { sql: `SELECT ${select} FROM "index" WHERE ${c.where} ORDER BY ${MANIFEST_ORDER} ${p.sql}`, params: [...c.params, ...p.params] };
}

export function tableRowsSql(c: Where, t: TablePageAsk, d: PageDialect = DUCKDB_PAGE): SqlText {
  const group = t.keys.length > 0 ? ` GROUP BY ${t.keys.join(', ')}` : '';
  const p = d.page(t.size, t.offset);
  return { sql: `SELECT ${t.select} FROM "index" WHERE ${c.where}${group} ORDER BY ${t.orderBy} ${p.sql}`, params: [...c.params, ...p.params] };
}

export function tableTotalSql(c: Where, t: TablePageAsk): SqlText {
  const sql =
    t.keys.length > 0
      ? `SELECT count(*) AS n FROM (SELECT 1 AS one FROM "index" WHERE ${c.where} GROUP BY ${t.keys.join(', ')}) AS g`
      : `SELECT count(*) AS n FROM "index" WHERE ${c.where}`;
  return { sql, params: c.params };
}
