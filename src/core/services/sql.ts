// Caller SQL: one read-only SELECT/WITH statement, run by the engine on its
// own budget with a row cap and a statement timeout. This service only
// resolves the effective row cap; the engine does the guarding.

import type { AppContext } from '../context.ts';
import type { CallerSqlResult } from '../engine/engine.ts';
import { IdqsError, invalidQuery, invalidRequest } from '../errors.ts';
import { missingTableHint } from './missing-tables.ts';

export type SqlResult = CallerSqlResult;

/**
 * The row cap actually applied: the configured default when none is given,
 * at most the configured ceiling. A cap below 1 is a caller mistake, not
 * something to round up silently.
 */
export function effectiveMaxRows(ctx: AppContext, requested?: number | null): number {
  const { sqlMaxRows, sqlMaxRowsCap } = ctx.config;
  if (requested === undefined || requested === null) return Math.min(sqlMaxRows, sqlMaxRowsCap);
  if (!Number.isInteger(requested) || requested < 1) {
    throw invalidRequest(`max_rows must be an integer >= 1 (got ${JSON.stringify(requested)}); values above ${sqlMaxRowsCap} are lowered to ${sqlMaxRowsCap}.`);
  }
  return Math.min(requested, sqlMaxRowsCap);
}

/** Run caller SQL; `max_rows` in the result is the cap that was applied. */
export async function runSql(ctx: AppContext, sql: string, maxRows?: number | null): Promise<SqlResult> {
  try {
    return await ctx.engine.callerSql(sql, effectiveMaxRows(ctx, maxRows));
  } catch (e) {
    // A table of the release that this build lacks: say so and how to get it.
    const hint = e instanceof IdqsError && e.code === 'invalid_query' ? missingTableHint(ctx, e.message) : null;
    if (hint) throw invalidQuery(`${e instanceof Error ? e.message : String(e)}\n${hint}`);
    throw e;
  }
}
