// Trino as an evaluator: it answers the questions whose SQL (./question-sql.ts)
// the dialect translates, when a cluster is configured and serves this release
// (../engine/trino/cluster.ts). Anything else says null and DuckDB answers:
// SQL the dialect leaves alone, SQL Trino refuses (a column its table lacks),
// a cluster that is down or fails the query (a worker lost) — the answer is
// then DuckDB's, the same, only not from the cluster. A client that leaves or
// a deadline that passes cancels the query on Trino and fails the request as
// it would on DuckDB.

import type { AppContext } from '../context.ts';
import type { Row } from '../engine/engine.ts';
import { cancelled, msg, queryTimeout, setting } from '../errors.ts';
import { runTrino, TrinoQueryFailed, TrinoUnavailable } from '../engine/trino/client.ts';
import { clusterLost, clusterState, trinoTarget } from '../engine/trino/cluster.ts';
import { fromTrino } from '../engine/trino/values.ts';
import { DeadlineReached, deadline, currentWork } from '../engine/work.ts';
import { toNumber } from '../services/numbers.ts';
import { countsFromRow } from '../services/version.ts';
import { TRINO_PAGE, toTrino } from './dialect.ts';
import { countsSql, licensesSql, seriesPageSql, tableRowsSql, tableTotalSql, type SqlText } from './question-sql.ts';
import type { PartialEvaluator } from './questions.ts';
import { licenseGroupsOf } from './sql-evaluator.ts';

/** Questions' SQL Trino refused as wrong for it (not for the data): not sent again. Keyed by the SQL text, values aside. */
const refused = new Set<string>();

/** Output column names of a question's SQL as DuckDB names them (Trino lowercases every name), by SQL text. */
const namesOf = new Map<string, Promise<string[]>>();

function columnNames(ctx: AppContext, q: SqlText): Promise<string[]> {
  let p = namesOf.get(q.sql);
  if (!p) {
    p = ctx.engine.query(`SELECT * FROM (${q.sql}) AS q LIMIT 0`, q.params).then((r) => r.columns);
    p.catch(() => namesOf.delete(q.sql));
    if (namesOf.size > 500) namesOf.clear();
    namesOf.set(q.sql, p);
  }
  return p;
}

/** Errors of a query Trino could not plan: the SQL is not for it (so DuckDB answers, and it is not sent again). */
const NOT_FOR_TRINO = /^(COLUMN_NOT_FOUND|TYPE_MISMATCH|FUNCTION_NOT_FOUND|SYNTAX_ERROR|MISSING_COLUMN_NAME|NOT_SUPPORTED|AMBIGUOUS_NAME|INVALID_FUNCTION_ARGUMENT|FUNCTION_IMPLEMENTATION_MISSING|TABLE_NOT_FOUND|MISSING_TABLE|EXPRESSION_NOT_AGGREGATE|INVALID_LITERAL)$/;

/**
 * The rows of a question on Trino, named as DuckDB names them; null when Trino is not the engine
 * for it now. `duck` is the question's DuckDB SQL (for the names), `trino` the same question with Trino's page.
 */
async function rowsOnTrino(ctx: AppContext, duck: SqlText, trino: SqlText = duck): Promise<Row[] | null> {
  const t = trinoTarget(ctx);
  const state = await clusterState(ctx);
  if (!t || state?.state !== 'serving') return null;
  const sql = toTrino(trino, state.types, state.derived);
  if (sql === null || refused.has(trino.sql)) return null;
  const names = await columnNames(ctx, duck);
  const work = currentWork();
  const ms = work?.timeout?.ms ?? ctx.config.queryTimeoutMs;
  const d = deadline(ms, work?.timeout?.setting ?? 'IDQS_QUERY_TIMEOUT_MS', work?.signal);
  try {
    const r = await runTrino(t, sql, { signal: d.signal });
    return r.rows.map((row) => Object.fromEntries(names.map((n, i) => [n, fromTrino(row[i], r.columns[i]?.typeSignature)])));
  } catch (e) {
    if (d.signal.aborted) {
      if (d.signal.reason instanceof DeadlineReached) {
        throw queryTimeout(msg`The query behind this request exceeded its ${Math.round(ms / 100) / 10}s deadline (${setting(d.signal.reason.setting)}) on Trino and was cancelled there. Narrow the filter and retry.`);
      }
      throw cancelled('The client went away; its query was cancelled on Trino.');
    }
    if (e instanceof TrinoQueryFailed && e.errorType === 'USER_ERROR' && NOT_FOR_TRINO.test(e.errorName)) {
      refused.add(trino.sql);
      return null;
    }
    // The cluster is down, or failed the query (a worker lost, out of memory): DuckDB answers, the same answer.
    const why = e instanceof Error ? e.message : String(e);
    if (e instanceof TrinoUnavailable) clusterLost(ctx, why);
    ctx.engine.events.emit('operator', { level: 'warn', msg: `Trino failed a cohort question; DuckDB answers it: ${why}`, trino: t.url });
    return null;
  } finally {
    d.clear();
  }
}

export const trinoEvaluator: PartialEvaluator = {
  name: 'trino',
  async counts(ctx, c) {
    const rows = await rowsOnTrino(ctx, countsSql(c));
    return rows && countsFromRow(rows[0]);
  },
  async licenses(ctx, c) {
    const rows = await rowsOnTrino(ctx, licensesSql(c.where, c.params));
    return rows && licenseGroupsOf(rows);
  },
  seriesRows: (ctx, c, offset, size, select) => rowsOnTrino(ctx, seriesPageSql(c, offset, size, select), seriesPageSql(c, offset, size, select, TRINO_PAGE)),
  tableRows: (ctx, c, t) => rowsOnTrino(ctx, tableRowsSql(c, t), tableRowsSql(c, t, TRINO_PAGE)),
  async tableTotal(ctx, c, t) {
    const rows = await rowsOnTrino(ctx, tableTotalSql(c, t));
    return rows && toNumber(rows[0]?.n);
  },
  // Manifests stream from the embedded engine, and /v2 counts read its v2 tables: not Trino's.
  manifestLines: async () => null,
  v2Count: async () => null,
};
