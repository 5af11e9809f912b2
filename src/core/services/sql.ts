// Caller SQL: one read-only SELECT/WITH statement, run by the engine on its
// own budget with a row cap and a statement timeout. This service checks the
// row cap (the caller lowers it to its own ceiling first); the engine does
// the guarding.

import type { AppContext } from '../context.ts';
import type { CallerSqlResult } from '../engine/engine.ts';
import { IdqsError, field, invalidQuery, invalidRequest, msg } from '../errors.ts';
import { missingTableHint } from './missing-tables.ts';

export type SqlResult = CallerSqlResult;

/**
 * Run caller SQL; `max_rows` in the result is the cap that was applied. A cap
 * below 1 is a caller mistake, not something to round up silently; one above
 * the configured ceiling is refused (callers lower it first).
 */
export async function runSql(ctx: AppContext, sql: string, maxRows: number): Promise<SqlResult> {
  const cap = ctx.config.sqlMaxRowsCap;
  if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > cap) {
    throw invalidRequest(msg`${field('max_rows')} must be an integer from 1 to ${cap}; got ${JSON.stringify(maxRows)}.`);
  }
  try {
    return await ctx.engine.callerSql(sql, maxRows);
  } catch (e) {
    // A table of the release that this build lacks: say so and how to get it.
    const hint = e instanceof IdqsError && e.code === 'invalid_query' ? missingTableHint(ctx, e.message) : null;
    if (hint) throw invalidQuery([...(e as IdqsError).parts, `\n${hint}`]);
    throw e;
  }
}
