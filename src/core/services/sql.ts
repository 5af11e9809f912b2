// Caller SQL: one read-only SELECT/WITH statement, run in a worker process on
// its own budget with a row cap, a byte budget and a statement timeout. This
// service checks the row cap (the caller lowers it to its own ceiling first);
// the engine does the guarding. Two shapes of the same result: an object (agent
// tools, the CLI) and the JSON text of the HTTP body, whose rows the worker
// already wrote and which is never parsed and written again.

import type { AppContext } from '../context.ts';
import type { CallerSqlResult } from '../engine/engine.ts';
import type { JsonValue } from '../engine/json.ts';
import { IdqsError, field, invalidQuery, invalidRequest, msg } from '../errors.ts';
import { bigQueryHint, missingTableHint } from './missing-tables.ts';
import { cachedCallerSql, type CacheOutcome } from './sql-cache.ts';
import { trinoCallerSql } from './sql-trino.ts';

/** The engines caller SQL may name: the embedded one (the default) and the Trino cluster. */
export const SQL_ENGINES = ['duckdb', 'trino'] as const;
export type SqlEngine = (typeof SQL_ENGINES)[number];

export interface SqlResult {
  columns: string[];
  types: string[];
  rows: Record<string, JsonValue>[];
  row_count: number;
  /** True when rows were cut, by the row cap or the byte budget. */
  truncated: boolean;
  /** What cut them: max_rows, max_bytes (IDQS_SQL_MAX_BYTES), or null when the result is whole. */
  truncated_reason: 'max_rows' | 'max_bytes' | null;
  max_rows: number;
  /** The engine that ran it. */
  engine: SqlEngine;
}

async function callerResult(ctx: AppContext, sql: string, maxRows: number, engine: SqlEngine): Promise<{ result: CallerSqlResult; cache: CacheOutcome }> {
  const cap = ctx.config.sqlMaxRowsCap;
  if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > cap) {
    throw invalidRequest(msg`${field('max_rows')} must be an integer from 1 to ${cap}; got ${JSON.stringify(maxRows)}.`);
  }
  if (!SQL_ENGINES.includes(engine)) throw invalidRequest(msg`${field('engine')} must be "duckdb" or "trino"; got ${JSON.stringify(engine)}.`);
  // Trino's answers are not kept: the cluster is shared, and its data is checked, not owned, by this server.
  if (engine === 'trino') return { result: await trinoCallerSql(ctx, sql, maxRows), cache: 'bypass' };
  try {
    return await cachedCallerSql(ctx, sql, maxRows, () => ctx.engine.callerSql(sql, maxRows));
  } catch (e) {
    // A table of the release that this build lacks: say so and how to get it.
    const hint = e instanceof IdqsError && e.code === 'invalid_query' ? (bigQueryHint(ctx, sql) ?? missingTableHint(ctx, e.message)) : null;
    if (hint) throw invalidQuery([...(e as IdqsError).parts, `\n${hint}`]);
    throw e;
  }
}

/**
 * Run caller SQL; `max_rows` in the result is the cap that was applied. A cap
 * below 1 is a caller mistake, not something to round up silently; one above
 * the configured ceiling is refused (callers lower it first).
 */
export async function runSql(ctx: AppContext, sql: string, maxRows: number, engine: SqlEngine = 'duckdb'): Promise<SqlResult> {
  const { result: r } = await callerResult(ctx, sql, maxRows, engine);
  return {
    columns: r.columns,
    types: r.types,
    rows: r.rows,
    row_count: r.row_count,
    truncated: r.truncated,
    truncated_reason: r.truncated_reason,
    max_rows: r.max_rows,
    engine,
  };
}

/** The same result as the JSON text of a response body, in the key order of SqlResult, and whether it came from the cache. */
export async function runSqlJson(ctx: AppContext, sql: string, maxRows: number, engine: SqlEngine = 'duckdb'): Promise<{ body: string; cache: CacheOutcome }> {
  const { result: r, cache } = await callerResult(ctx, sql, maxRows, engine);
  const body =
    `{"columns":${JSON.stringify(r.columns)},"types":${JSON.stringify(r.types)},"rows":[${r.rowsJson}],` +
    `"row_count":${r.row_count},"truncated":${r.truncated},"truncated_reason":${JSON.stringify(r.truncated_reason)},"max_rows":${r.max_rows},"engine":${JSON.stringify(engine)}}`;
  return { body, cache };
}
