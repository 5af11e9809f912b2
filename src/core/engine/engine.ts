// The embedded engine: one DuckDB file opened read-only and hardened, with two
// separate budgets. Curated queries (SQL we write, values bound as parameters)
// run on their own instance and connection pool; caller SQL runs on a second
// instance with its own threads, memory cap and a bounded number of
// connections, so a hostile query cannot starve counts or manifests.

import { DuckDBInstance, StatementType, type DuckDBConnection, type DuckDBDataChunk, type DuckDBValue } from '@duckdb/node-api';
import { IdqsError, busy, invalidQuery, msg, queryTimeout, setting } from '../errors.ts';
import { ConnectionPool } from './pool.ts';
import { checkCallerSqlText, READ_ONLY_MESSAGE } from './guard.ts';
import { jsonConverter, type JsonValue } from './json.ts';

export type Row = Record<string, JsonValue>;
export type Param = string | number | boolean | null;

export interface BudgetOptions {
  memoryLimit: string;
  threads: number;
  tempDirSize: string;
  connections: number;
}

export interface EngineOptions {
  path: string;
  curated: BudgetOptions;
  caller: BudgetOptions & { maxQueue: number };
  sqlTimeoutMs: number;
}

export interface QueryResult {
  columns: string[];
  rows: Row[];
}

export interface CallerSqlResult extends QueryResult {
  types: string[];
  row_count: number;
  truncated: boolean;
  max_rows: number;
}

/** Options applied when the database is opened; lock_configuration freezes them. */
// Spill files go to DuckDB's default <database>.tmp folder: setting
// temp_directory is refused once external access is disabled.
export function hardenedConfig(b: BudgetOptions): Record<string, string> {
  return {
    access_mode: 'READ_ONLY',
    enable_external_access: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
    allow_unsigned_extensions: 'false',
    memory_limit: b.memoryLimit,
    threads: String(b.threads),
    max_temp_directory_size: b.tempDirSize,
    lock_configuration: 'true',
  };
}

function engineMessage(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  // The Node binding prefixes parser errors; the rest is DuckDB's own text.
  return msg.replace(/^Failed to extract statements: /, '').trimEnd();
}

function isInterrupt(e: unknown): boolean {
  return e instanceof Error && /INTERRUPT|Interrupted/i.test(e.message);
}

/** What a busy answer tells clients to wait before retrying. */
const BUSY_RETRY_SECONDS = 2;

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}`;
}

export class Engine {
  private constructor(
    private readonly curatedInstance: DuckDBInstance,
    private readonly curated: ConnectionPool,
    private readonly callerInstance: DuckDBInstance,
    private readonly caller: ConnectionPool,
    readonly options: EngineOptions,
  ) {}

  static async open(options: EngineOptions): Promise<Engine> {
    const ci = await DuckDBInstance.create(options.path, hardenedConfig(options.curated));
    const ui = await DuckDBInstance.create(options.path, hardenedConfig(options.caller));
    const cp = await ConnectionPool.create(ci, options.curated.connections);
    const up = await ConnectionPool.create(ui, options.caller.connections, options.caller.maxQueue);
    return new Engine(ci, cp, ui, up, options);
  }

  /** Run SQL we wrote; values are bound, never spliced into the text. */
  async query(sql: string, params: Param[] = []): Promise<QueryResult> {
    return this.curated.use(async (c) => {
      const reader = await c.runAndReadAll(sql, params as DuckDBValue[]);
      return { columns: reader.columnNames(), rows: reader.convertRowObjects(jsonConverter) as Row[] };
    });
  }

  async rows(sql: string, params: Param[] = []): Promise<Row[]> {
    return (await this.query(sql, params)).rows;
  }

  async one(sql: string, params: Param[] = []): Promise<Row | undefined> {
    return (await this.query(sql, params)).rows[0];
  }

  /**
   * Stream the rows of a curated query chunk by chunk (about 2048 rows each)
   * without materializing the result. The connection is held until the
   * iteration ends or is abandoned.
   */
  async *stream(sql: string, params: Param[] = []): AsyncGenerator<JsonValue[][]> {
    const c = await this.curated.acquire();
    try {
      const result = await c.stream(sql, params as DuckDBValue[]);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        yield chunk.convertRows(jsonConverter) as JsonValue[][];
      }
    } finally {
      this.curated.release(c);
    }
  }

  /**
   * Run a curated query to the end and keep its result as the engine's own
   * data chunks (compact, off the JS heap); rows are converted when read.
   */
  async materialize(sql: string, params: Param[] = []): Promise<{ columns: string[]; chunks: DuckDBDataChunk[] }> {
    return this.curated.use(async (c) => {
      const result = await c.stream(sql, params as DuckDBValue[]);
      const columns = result.columnNames();
      const chunks: DuckDBDataChunk[] = [];
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        chunks.push(chunk);
      }
      return { columns, chunks };
    });
  }

  /**
   * Run untrusted caller SQL: exactly one read-only SELECT/WITH statement,
   * at most `maxRows` rows (one more is read to set `truncated`), cancelled
   * after the configured timeout. Engine errors are returned verbatim.
   */
  async callerSql(sql: string, maxRows: number, timeoutMs = this.options.sqlTimeoutMs): Promise<CallerSqlResult> {
    checkCallerSqlText(sql);
    const started = Date.now();
    const timeoutError = () =>
      queryTimeout(
        msg`Query exceeded the ${formatSeconds(timeoutMs)}s statement timeout (${setting('IDQS_SQL_TIMEOUT_MS')}) and was cancelled. Narrow the query (filters, LIMIT, aggregation) and retry.`,
      );
    const conn = await this.caller.acquire(timeoutMs, {
      onFull: () => busy(msg`Too many SQL queries are running right now (at most ${setting('IDQS_SQL_QUEUE')} may wait); retry in a few seconds.`, BUSY_RETRY_SECONDS),
      onTimeout: timeoutError,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      conn.interrupt();
    }, Math.max(1, timeoutMs - (Date.now() - started)));
    try {
      return await this.runGuarded(conn, sql, maxRows);
    } catch (e) {
      if (timedOut || isInterrupt(e)) throw timeoutError();
      if (e instanceof IdqsError) throw e;
      throw invalidQuery(engineMessage(e));
    } finally {
      clearTimeout(timer);
      this.caller.release(conn);
    }
  }

  private async runGuarded(conn: DuckDBConnection, sql: string, maxRows: number): Promise<CallerSqlResult> {
    const extracted = await conn.extractStatements(sql);
    if (extracted.count !== 1) {
      throw invalidQuery(
        extracted.count === 0
          ? 'Empty query: send one SELECT or WITH statement.'
          : `Only a single statement is allowed; found ${extracted.count}. Remove the extra ';' and what follows it.`,
      );
    }
    const prepared = await extracted.prepare(0);
    try {
      if (prepared.statementType !== StatementType.SELECT) {
        const kind = StatementType[prepared.statementType] ?? String(prepared.statementType);
        throw invalidQuery(`${READ_ONLY_MESSAGE} This statement is of type ${kind}.`);
      }
      if (prepared.parameterCount > 0) throw invalidQuery('Parameters ($1, ?) are not supported; write the values into the SQL.');
      const result = await prepared.stream();
      // Duplicate output names (a.x, b.x) get suffixes so no value is lost in row objects.
      const columns = result.deduplicatedColumnNames();
      const types = result.columnTypes().map(String);
      const rows: Row[] = [];
      let truncated = false;
      outer: for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        for (const values of chunk.convertRows(jsonConverter)) {
          if (rows.length === maxRows) {
            truncated = true;
            break outer;
          }
          const row: Row = {};
          columns.forEach((name, i) => (row[name] = values[i] ?? null));
          rows.push(row);
        }
      }
      return { columns, types, rows, row_count: rows.length, truncated, max_rows: maxRows };
    } finally {
      prepared.destroySync();
    }
  }

  stats() {
    return {
      curated: { size: this.curated.size, busy: this.curated.busy, queued: this.curated.queued },
      caller: { size: this.caller.size, busy: this.caller.busy, queued: this.caller.queued },
    };
  }

  close(): void {
    this.curated.close();
    this.caller.close();
    this.curatedInstance.closeSync();
    this.callerInstance.closeSync();
  }
}
