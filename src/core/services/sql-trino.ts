// Caller SQL on the Trino cluster (`engine: "trino"`): the same text checks
// as on DuckDB (one SELECT/WITH statement) plus one of its own (only the
// release's catalog: the system catalog would show other callers' queries),
// Trino's access control refusing anything but reads, and the limits sent as
// session properties (run time, memory), the row cap by reading one row more
// and cancelling. Trino's errors become IdqsErrors: its reason for killing a
// query is in the message; an unreachable cluster is a 503 with Retry-After.

import type { AppContext } from '../context.ts';
import { CallerSqlResult } from '../engine/caller-result.ts';
import { checkCallerSqlText } from '../engine/guard.ts';
import type { JsonValue } from '../engine/json.ts';
import { runTrino, TrinoQueryFailed, TrinoUnavailable } from '../engine/trino/client.ts';
import { clusterLost, clusterState, trinoTarget } from '../engine/trino/cluster.ts';
import { fromTrino } from '../engine/trino/values.ts';
import { DeadlineReached, currentWork, deadline } from '../engine/work.ts';
import { IdqsError, cancelled, invalidQuery, msg, queryTimeout, resourceExhausted, setting } from '../errors.ts';

const RETRY_S = 5;

const unavailableTrino = (text: string, retryAfterSeconds = RETRY_S) =>
  new IdqsError('unavailable', msg`Trino (${setting('IDQS_TRINO_URL')}) cannot answer now: ${text}. Retry later, or send the query with engine "duckdb".`, { retryAfterSeconds });

/** Catalogs other than the release's: refused before Trino sees them. */
const OTHER_CATALOG = /(?:^|[^A-Za-z0-9_."])"?(system|jmx|tpch|memory)"?\s*\./i;

/** Names as DuckDB's results name repeated columns: a, a:1, a:2. */
function uniqueNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((n) => {
    const k = seen.get(n);
    seen.set(n, (k ?? -1) + 1);
    return k === undefined ? n : `${n}:${k + 1}`;
  });
}

function failure(e: unknown, ctx: AppContext, ms: number): unknown {
  if (e instanceof TrinoUnavailable) {
    clusterLost(ctx, e.message);
    return unavailableTrino(e.message);
  }
  if (!(e instanceof TrinoQueryFailed)) return e;
  const why = `${e.errorName}: ${e.message}`;
  if (e.errorName === 'EXCEEDED_TIME_LIMIT' || e.errorName === 'EXCEEDED_CPU_LIMIT') {
    return queryTimeout(msg`Trino killed the query: ${why} (the limit is ${ms / 1000}s, ${setting('IDQS_SQL_TIMEOUT_MS')}). Narrow or aggregate the query and retry.`);
  }
  if (e.errorName.startsWith('EXCEEDED_') && e.errorName.includes('MEMORY')) {
    return resourceExhausted(msg`Trino killed the query: ${why} (the limit is ${ctx.config.trinoQueryMemory}, ${setting('IDQS_TRINO_QUERY_MEMORY')}). Aggregate, filter or select fewer columns and retry.`);
  }
  // Its own reading of the statement (a wrong name, a type, access denied): the caller's to fix.
  if (e.errorType === 'USER_ERROR') return invalidQuery(`Trino: ${e.message}`);
  // A worker lost, the cluster out of resources: no answer, never part of one.
  return unavailableTrino(why);
}

/** Run caller SQL on Trino; the result has the shape DuckDB's has. */
export async function trinoCallerSql(ctx: AppContext, sql: string, maxRows: number): Promise<CallerSqlResult> {
  const t = trinoTarget(ctx);
  if (!t) {
    // 503 without Retry-After: this server cannot run it until its operator configures a cluster.
    throw new IdqsError('unavailable', msg`engine "trino" needs a Trino cluster, and none is configured: set ${setting('IDQS_TRINO_URL')} (idqs serve --trino URL), or send engine "duckdb".`);
  }
  checkCallerSqlText(sql);
  const other = OTHER_CATALOG.exec(sql);
  if (other) throw invalidQuery(`Caller SQL on Trino reads the release's tables only (catalog ${t.catalog}); ${other[1]}.… is refused.`);
  const state = await clusterState(ctx);
  if (state?.state === 'unavailable') throw unavailableTrino(state.reason, state.retryAfterS);
  if (state?.state === 'other-data') throw unavailableTrino(`it does not serve this release (${state.reason})`, 60);
  const ms = ctx.config.sqlTimeoutMs;
  const work = currentWork();
  // Trino enforces the run time itself; ours, a little later, also covers a cluster that stops answering.
  const d = deadline(ms + 2000, 'IDQS_SQL_TIMEOUT_MS', work?.signal);
  try {
    const r = await runTrino(t, sql.replace(/;\s*$/, ''), {
      signal: d.signal,
      maxRows,
      session: { query_max_execution_time: `${ms}ms`, query_max_run_time: `${ms + 1000}ms`, query_max_memory: ctx.config.trinoQueryMemory },
    });
    const names = uniqueNames(r.columns.map((c) => c.name));
    const rows: string[] = [];
    let bytes = 0;
    let cut: 'max_rows' | 'max_bytes' | null = r.truncated ? 'max_rows' : null;
    for (const row of r.rows) {
      const obj: Record<string, JsonValue> = {};
      names.forEach((n, i) => (obj[n] = fromTrino(row[i], r.columns[i]?.typeSignature)));
      const text = JSON.stringify(obj);
      if (bytes + text.length > ctx.config.sqlMaxBytes) {
        cut = 'max_bytes';
        break;
      }
      bytes += text.length + 1;
      rows.push(text);
    }
    return new CallerSqlResult(names, r.columns.map((c) => c.type), rows.join(','), rows.length, cut !== null, cut, maxRows);
  } catch (e) {
    if (d.signal.aborted) {
      if (d.signal.reason instanceof DeadlineReached) throw queryTimeout(msg`The query exceeded its ${ms / 1000}s deadline (${setting('IDQS_SQL_TIMEOUT_MS')}) and was cancelled on Trino.`);
      throw cancelled('The client went away; its query was cancelled on Trino.');
    }
    throw failure(e, ctx, ms);
  } finally {
    d.clear();
  }
}
