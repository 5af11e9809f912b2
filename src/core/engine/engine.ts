// The embedded engine and the budgets of every kind of work on it. Curated
// queries (SQL we write, values bound as parameters) run on one read-only,
// hardened DuckDB instance through a pool of connections with a bounded
// queue, a queue deadline and a run deadline. Streamed exports (manifest.txt,
// /v2 pages) and facet counts take a slot of their own budgets as well.
// Caller SQL runs in worker processes with their own memory cap
// (./sql-workers.ts). The signal of the current work (./work.ts) reaches
// every query: a client that leaves stops what it started, a deadline
// interrupts the engine, and an engine that does not stop is not waited for.

import { EventEmitter } from 'node:events';
import { DuckDBInstance, type DuckDBConnection, type DuckDBDataChunk, type DuckDBValue } from '@duckdb/node-api';
import { IdqsError, cancelled, msg, queryTimeout, setting, unavailable } from '../errors.ts';
import { Pool, slots, type BudgetStats, type Lease } from './budget.ts';
import { checkCallerSqlText } from './guard.ts';
import { hardenedConfig } from './hardened-config.ts';
import { jsonConverter, type JsonValue } from './json.ts';
import { CallerSqlResult, SqlWorkers, engineClosed, type SqlWorkersOptions } from './sql-workers.ts';
import { SERVER_FAULT } from './sql-sandbox.ts';
import { DeadlineReached, currentWork, deadline } from './work.ts';

export type Row = Record<string, JsonValue>;
export type Param = string | number | bigint | boolean | null;
export { CallerSqlResult };

export interface EngineBudget {
  memoryLimit: string;
  threads: number;
  tempDirSize: string;
  connections: number;
  queue: number;
  queueTimeoutMs: number;
  queryTimeoutMs: number;
}

export interface SlotBudget {
  slots: number;
  queue: number;
  queueTimeoutMs: number;
  /** Run deadline of the queries made for this work. */
  timeoutMs?: number;
  /** Longest a slot may legitimately be held (streamed responses hold theirs while writing). */
  maxHoldMs?: number;
}

export interface EngineOptions {
  path: string;
  curated: EngineBudget;
  exports: SlotBudget & { timeoutMs: number };
  facets: SlotBudget;
  caller: Omit<SqlWorkersOptions, 'path'> & { maxBytes: number };
}

export interface QueryResult {
  columns: string[];
  rows: Row[];
}

/** How a query is limited: by default the current work's signal and the curated run deadline. */
export interface RunOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The setting that sets `timeoutMs`, named in the 504. */
  timeoutSetting?: string;
}



function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}`;
}

/** Settles when the signal aborts (never resolves). */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export interface DatabaseFault {
  at: string;
  message: string;
}

/**
 * Budgets shared by the engines of several releases served by one process:
 * admission to curated queries and caller SQL across every engine, and the
 * export and facet slots themselves (see `Engine.shareBudgets`).
 */
interface SharedAdmission {
  curated: Pool<number>;
  sql: Pool<number>;
}

export class Engine {
  readonly curated: Pool<DuckDBConnection>;
  /** Streamed exports in flight (held while writing), and facet counts. */
  exports: Pool<number>;
  facets: Pool<number>;
  /** Set when this engine shares its budgets with other releases' engines. */
  private admission: SharedAdmission | null = null;
  /**
   * Exports whose queries run at once: one. An export's query sorts and
   * formats its whole cohort; several at once would take every engine thread
   * and gigabytes from the short curated queries. Exports are streamed, so
   * waiting here costs their clients a little latency, not a failure.
   */
  producing: Pool<number>;
  readonly sql: SqlWorkers;
  /** Operator events ({level, msg, ...}): database read errors, worker crashes. */
  readonly events = new EventEmitter();
  private fault: DatabaseFault | null = null;
  private closed = false;
  /** Aborted by close(): a curated query whose interrupt came before it started (and so was lost) is answered then, not at its deadline. */
  private readonly closing = new AbortController();

  private constructor(
    private readonly instance: DuckDBInstance,
    connections: DuckDBConnection[],
    readonly options: EngineOptions,
  ) {
    const c = options.curated;
    this.curated = new Pool(connections, {
      what: 'queries',
      queue: c.queue,
      queueTimeoutMs: c.queueTimeoutMs,
      settings: { slots: 'IDQS_CONNECTIONS', queue: 'IDQS_QUEUE', queueTimeout: 'IDQS_QUEUE_TIMEOUT_MS' },
      // Queries are interrupted at their deadline; exports' run longer.
      maxHoldMs: Math.max(c.queryTimeoutMs, options.exports.timeoutMs) + 5000,
      retire: (conn: DuckDBConnection) => conn.closeSync(),
    });
    const e = options.exports;
    this.exports = slots(e.slots, {
      what: 'streamed exports (manifest.txt, /v2 pages)',
      queue: e.queue,
      queueTimeoutMs: e.queueTimeoutMs,
      settings: { slots: 'IDQS_EXPORTS', queue: 'IDQS_EXPORT_QUEUE', queueTimeout: 'IDQS_QUEUE_TIMEOUT_MS' },
      maxHoldMs: e.maxHoldMs ?? Infinity,
    });
    this.producing = slots(1, {
      what: 'export queries',
      // Every waiter holds an export slot, so the export budget bounds this queue.
      queue: e.slots + e.queue,
      queueTimeoutMs: e.timeoutMs,
      settings: { slots: 'IDQS_EXPORTS', queue: 'IDQS_EXPORT_QUEUE', queueTimeout: 'IDQS_EXPORT_TIMEOUT_MS' },
      maxHoldMs: e.timeoutMs + 5000,
    });
    const f = options.facets;
    this.facets = slots(f.slots, {
      what: 'facet counts',
      queue: f.queue,
      queueTimeoutMs: f.queueTimeoutMs,
      settings: { slots: 'IDQS_FACET_SLOTS', queue: 'IDQS_FACET_QUEUE', queueTimeout: 'IDQS_QUEUE_TIMEOUT_MS' },
      maxHoldMs: c.queryTimeoutMs + 5000,
    });
    this.sql = new SqlWorkers({ ...options.caller, path: options.path });
    this.sql.events.on('operator', (ev: Record<string, unknown>) => {
      if (typeof ev.cause === 'string' && SERVER_FAULT.test(ev.cause)) this.noteFault(ev.cause);
      this.events.emit('operator', ev);
    });
  }

  static async open(options: EngineOptions): Promise<Engine> {
    const instance = await DuckDBInstance.create(options.path, hardenedConfig(options.curated));
    const conns: DuckDBConnection[] = [];
    for (let i = 0; i < options.curated.connections; i++) conns.push(await instance.connect());
    return new Engine(instance, conns, options);
  }

  /**
   * Make this engine (another release's) draw on `first`'s budgets: one admission
   * of IDQS_CONNECTIONS curated queries and IDQS_SQL_CONNECTIONS caller queries
   * across both engines, and the same export, export-query and facet slots.
   */
  shareBudgets(first: Engine): void {
    if (!first.admission) {
      const c = first.options.curated;
      const q = first.options.caller;
      first.admission = {
        curated: slots(c.connections, {
          what: 'queries',
          queue: c.queue,
          queueTimeoutMs: c.queueTimeoutMs,
          settings: { slots: 'IDQS_CONNECTIONS', queue: 'IDQS_QUEUE', queueTimeout: 'IDQS_QUEUE_TIMEOUT_MS' },
          maxHoldMs: Math.max(c.queryTimeoutMs, first.options.exports.timeoutMs) + 5000,
        }),
        sql: slots(q.workers, {
          what: 'SQL queries',
          queue: q.queue,
          queueTimeoutMs: q.queueTimeoutMs,
          settings: { slots: 'IDQS_SQL_CONNECTIONS', queue: 'IDQS_SQL_QUEUE', queueTimeout: 'IDQS_QUEUE_TIMEOUT_MS' },
          maxHoldMs: q.timeoutMs + 5000,
        }),
      };
    }
    this.admission = first.admission;
    this.exports = first.exports;
    this.facets = first.facets;
    this.producing = first.producing;
  }

  /** The last database read error seen, if any (the file is damaged or unreadable). */
  get databaseFault(): DatabaseFault | null {
    return this.fault;
  }

  private noteFault(message: string): void {
    this.fault = { at: new Date().toISOString(), message };
  }

  /**
   * Run `fn` on a curated connection: admitted by the pool, interrupted at the
   * deadline or when the caller leaves. The answer does not wait for an engine
   * that ignores the interrupt; the connection goes back only once it is free.
   */
  private async onConnection<T>(opts: RunOptions, fn: (c: DuckDBConnection, signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.closed) throw engineClosed();
    const work = currentWork();
    const parent = opts.signal ?? work?.signal;
    // Several releases: one admission across their engines, then a connection of this one (free by then).
    const admitted = this.admission ? await this.admission.curated.acquire(parent) : null;
    let lease: Lease<DuckDBConnection>;
    try {
      lease = await this.curated.acquire(parent);
    } catch (e) {
      admitted?.release();
      throw e;
    }
    const release = () => (lease.release(), admitted?.release());
    const ms = opts.timeoutMs ?? work?.timeout?.ms ?? this.options.curated.queryTimeoutMs;
    const d = deadline(ms, opts.timeoutSetting ?? work?.timeout?.setting ?? 'IDQS_QUERY_TIMEOUT_MS', parent);
    const conn = lease.item;
    const interrupt = () => conn.interrupt();
    d.signal.addEventListener('abort', interrupt, { once: true });
    const run = fn(conn, d.signal);
    void run.then(release, release);
    const closing = this.closing.signal;
    let onClose = () => {};
    const closed = new Promise<never>((_, reject) => {
      onClose = () => {
        reject(closing.reason);
        // close() interrupted this connection, but an interrupt that comes before the query starts is lost: repeat it until the query ends.
        const again = setInterval(() => {
          try {
            conn.interrupt();
          } catch {
            clearInterval(again);
          }
        }, 50);
        again.unref();
        void run.then(() => clearInterval(again), () => clearInterval(again));
      };
      if (closing.aborted) onClose();
      else closing.addEventListener('abort', onClose, { once: true });
    });
    closed.catch(() => undefined);
    try {
      return await Promise.race([run, aborted(d.signal), closed]);
    } catch (e) {
      throw this.failure(e, d.signal, ms);
    } finally {
      d.clear();
      d.signal.removeEventListener('abort', interrupt);
      closing.removeEventListener('abort', onClose);
    }
  }

  /** What a failed curated query becomes: a timeout, a cancellation, a database fault (503), or itself. */
  private failure(e: unknown, signal: AbortSignal, ms: number): unknown {
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      if (reason instanceof DeadlineReached) {
        this.curated.count('timed_out');
        return queryTimeout(
          msg`The query behind this request exceeded its ${formatSeconds(ms)}s deadline (${setting(reason.setting)}) and was stopped. Narrow the filter and retry.`,
        );
      }
      this.curated.count('cancelled');
      return cancelled('The client went away; its query was stopped.');
    }
    if (e instanceof IdqsError) return e;
    const text = e instanceof Error ? e.message : String(e);
    if (SERVER_FAULT.test(text)) {
      this.noteFault(text);
      this.events.emit('operator', { level: 'error', msg: 'database read error: the database file is damaged or unreadable', cause: text });
      return unavailable('The database could not be read; the operator has been told. Retry later.');
    }
    return e;
  }

  /** Run SQL we wrote; values are bound, never spliced into the text. */
  async query(sql: string, params: Param[] = [], opts: RunOptions = {}): Promise<QueryResult> {
    return this.onConnection(opts, async (c) => {
      const reader = await c.runAndReadAll(sql, params as DuckDBValue[]);
      return { columns: reader.columnNames(), rows: reader.convertRowObjects(jsonConverter) as Row[] };
    });
  }

  async rows(sql: string, params: Param[] = [], opts: RunOptions = {}): Promise<Row[]> {
    return (await this.query(sql, params, opts)).rows;
  }

  async one(sql: string, params: Param[] = [], opts: RunOptions = {}): Promise<Row | undefined> {
    return (await this.query(sql, params, opts)).rows[0];
  }

  /**
   * Stream a curated query's chunks to `onChunk` as fast as the engine makes
   * them, until the end or until `onChunk` returns false (the caller has
   * enough for now); the connection is held only meanwhile. An interrupted
   * stream is an error, never a short result.
   */
  async produce(sql: string, params: Param[], onChunk: (chunk: DuckDBDataChunk) => boolean, opts: RunOptions = {}): Promise<'end' | 'paused'> {
    return this.onConnection(opts, async (c, signal) => {
      const result = await c.stream(sql, params as DuckDBValue[]);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (signal.aborted) throw signal.reason;
        if (!chunk || chunk.rowCount === 0) return 'end';
        if (!onChunk(chunk)) return 'paused';
      }
    });
  }

  /** `produce` for an export: its query waits for the export-query slot (see `producing`). */
  async produceExport(sql: string, params: Param[], onChunk: (chunk: DuckDBDataChunk) => boolean, opts: RunOptions = {}): Promise<'end' | 'paused'> {
    const lease = await this.producing.acquire(opts.signal ?? currentWork()?.signal);
    try {
      return await this.produce(sql, params, onChunk, opts);
    } finally {
      lease.release();
    }
  }

  /** The rows of a curated query, converted chunk by chunk. */
  async chunks(sql: string, params: Param[] = [], opts: RunOptions = {}): Promise<JsonValue[][]> {
    const rows: JsonValue[][] = [];
    await this.produce(sql, params, (chunk) => (rows.push(...(chunk.convertRows(jsonConverter) as JsonValue[][])), true), opts);
    return rows;
  }

  /**
   * Run a curated query to the end and keep its result as the engine's own
   * data chunks (compact, off the JS heap); rows are converted when read.
   */
  async materialize(sql: string, params: Param[] = [], opts: RunOptions = {}): Promise<{ columns: string[]; chunks: DuckDBDataChunk[] }> {
    let columns: string[] = [];
    const chunks: DuckDBDataChunk[] = [];
    await this.onConnection(opts, async (c, signal) => {
      const result = await c.stream(sql, params as DuckDBValue[]);
      columns = result.columnNames();
      for (;;) {
        const chunk = await result.fetchChunk();
        if (signal.aborted) throw signal.reason;
        if (!chunk || chunk.rowCount === 0) break;
        chunks.push(chunk);
      }
    });
    return { columns, chunks };
  }

  /**
   * Run untrusted caller SQL in a worker process: exactly one read-only
   * SELECT/WITH statement, at most `maxRows` rows and `maxBytes` of JSON rows
   * (truncated_reason says which cut), stopped at the SQL deadline. Engine
   * errors are returned verbatim, without server paths.
   */
  async callerSql(sql: string, maxRows: number, opts: { signal?: AbortSignal; maxBytes?: number } = {}): Promise<CallerSqlResult> {
    checkCallerSqlText(sql);
    if (this.closed) throw engineClosed();
    const signal = opts.signal ?? currentWork()?.signal;
    const admitted = this.admission ? await this.admission.sql.acquire(signal) : null;
    try {
      return await this.sql.run(sql, maxRows, opts.maxBytes ?? this.options.caller.maxBytes, signal);
    } finally {
      admitted?.release();
    }
  }

  stats(): { curated: BudgetStats; exports: BudgetStats; facets: BudgetStats; sql: ReturnType<SqlWorkers['stats']> } {
    // Several releases: the shared admissions are the budgets (each engine's own pool never queues behind them).
    const a = this.admission;
    return {
      curated: a ? a.curated.stats() : this.curated.stats(),
      exports: this.exports.stats(),
      facets: this.facets.stats(),
      sql: a ? { ...this.sql.stats(), ...a.sql.stats() } : this.sql.stats(),
    };
  }

  /**
   * Refuse new work, stop the caller-SQL workers and close idle connections; a
   * connection still running a query is interrupted and closed when its user
   * lets go of it, never under it.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort(engineClosed());
    this.sql.close();
    this.exports.close();
    this.facets.close();
    this.producing.close();
    this.admission?.curated.close();
    this.admission?.sql.close();
    const idle = new Set(this.curated.close());
    for (const c of this.curated.all()) {
      if (idle.has(c)) c.closeSync();
      else c.interrupt();
    }
    this.instance.closeSync();
  }
}
