// Trino's HTTP protocol: POST /v1/statement, then follow nextUri until it is
// absent; DELETE the current nextUri to cancel. Rows are handed back only once
// the query has finished (or reached our row cap, after which it is cancelled),
// so a query that fails midway (a worker killed) is an error, never a partial
// answer. Written on Node's fetch rather than the trino-client package: that
// one brings axios and does not cancel on Trino when its caller goes away,
// which every question here must do.

export interface TrinoTarget {
  url: string;
  catalog: string;
  schema: string;
  user: string;
}

export interface TypeSignature {
  rawType: string;
  arguments?: { kind: string; value: unknown }[];
}

export interface TrinoColumn {
  name: string;
  type: string;
  typeSignature?: TypeSignature;
}

export interface TrinoResult {
  queryId: string;
  columns: TrinoColumn[];
  rows: unknown[][];
  /** The row cap was reached: the query was cancelled after `rows`. */
  truncated: boolean;
}

export interface TrinoOptions {
  signal?: AbortSignal | undefined;
  /** Session properties (X-Trino-Session). */
  session?: Record<string, string>;
  /** Stop (and cancel the query) once this many rows are read; one more tells `truncated`. */
  maxRows?: number;
}

/** The cluster could not be reached or is not ready (starting, shutting down, no workers). */
export class TrinoUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrinoUnavailable';
  }
}

/** Trino ran the query and failed it: its error name, type and message. */
export class TrinoQueryFailed extends Error {
  constructor(
    readonly errorName: string,
    readonly errorType: string,
    message: string,
    readonly queryId: string | undefined,
  ) {
    super(message);
    this.name = 'TrinoQueryFailed';
  }
}

/** Failures that mean "no cluster to answer", not "this query is wrong". */
const NOT_READY = new Set(['SERVER_STARTING_UP', 'SERVER_SHUTTING_DOWN', 'NO_NODES_AVAILABLE', 'GENERIC_INSUFFICIENT_RESOURCES_NO_NODES']);

interface StatementBody {
  id?: string;
  nextUri?: string;
  columns?: TrinoColumn[];
  data?: unknown[][];
  error?: { errorName?: string; errorType?: string; message?: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

function headersOf(t: TrinoTarget, o: TrinoOptions): Record<string, string> {
  const h: Record<string, string> = { 'X-Trino-User': t.user, 'X-Trino-Source': 'idqs', 'X-Trino-Catalog': t.catalog, 'X-Trino-Schema': t.schema };
  const session = Object.entries(o.session ?? {});
  if (session.length > 0) h['X-Trino-Session'] = session.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join(',');
  return h;
}

/** One request of the protocol; 502/503/504 are retried a few times (the protocol asks clients to). */
async function call(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<StatementBody> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, { ...init, signal: signal ?? null });
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      throw new TrinoUnavailable(`Trino at ${new URL(url).origin} could not be reached (${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message})`);
    }
    if (res.ok) return (await res.json()) as StatementBody;
    const text = (await res.text().catch(() => '')).slice(0, 300);
    if ([502, 503, 504].includes(res.status) && attempt < 3) {
      await sleep(100 * 2 ** attempt);
      continue;
    }
    throw new TrinoUnavailable(`Trino at ${new URL(url).origin} answered HTTP ${res.status}${text ? `: ${text}` : ''}`);
  }
}

/** Cancel a query on Trino; a cancellation that fails is left to Trino's own abandonment timeout. */
function cancel(nextUri: string, t: TrinoTarget): Promise<void> {
  return fetch(nextUri, { method: 'DELETE', headers: { 'X-Trino-User': t.user }, signal: AbortSignal.timeout(5000) }).then(
    (r) => void r.body?.cancel(),
    () => undefined,
  );
}

/** Run one statement on Trino to its end (or to the row cap). */
export async function runTrino(t: TrinoTarget, sql: string, o: TrinoOptions = {}): Promise<TrinoResult> {
  const { signal } = o;
  if (signal?.aborted) throw signal.reason;
  let body = await call(`${t.url}/v1/statement`, { method: 'POST', body: sql, headers: headersOf(t, o) }, signal);
  const rows: unknown[][] = [];
  let columns: TrinoColumn[] = [];
  const max = o.maxRows ?? Number.MAX_SAFE_INTEGER;
  for (;;) {
    if (body.error) {
      const name = body.error.errorName ?? 'UNKNOWN';
      const message = body.error.message ?? 'query failed';
      // No worker to schedule on (all died or none joined yet) is the cluster's state, not the query's fault.
      if (NOT_READY.has(name) || (name === 'GENERIC_INSUFFICIENT_RESOURCES' && /^Insufficient active worker nodes/.test(message))) {
        throw new TrinoUnavailable(`Trino is not ready: ${message}`);
      }
      throw new TrinoQueryFailed(name, body.error.errorType ?? 'UNKNOWN', message, body.id);
    }
    if (body.columns) columns = body.columns;
    if (body.data) rows.push(...body.data);
    const next = body.nextUri;
    if (!next) return { queryId: body.id ?? '', columns, rows, truncated: false };
    if (rows.length > max) {
      await cancel(next, t);
      return { queryId: body.id ?? '', columns, rows: rows.slice(0, max), truncated: true };
    }
    if (signal?.aborted) {
      await cancel(next, t);
      throw signal.reason;
    }
    try {
      body = await call(next, { headers: { 'X-Trino-User': t.user } }, signal);
    } catch (e) {
      // The caller left or the deadline passed while waiting: the query must not go on running on the cluster.
      if (signal?.aborted) await cancel(next, t);
      throw e;
    }
  }
}
