// Entry of a caller-SQL worker process. The server starts a few of these
// (src/core/engine/sql-workers.ts) so that caller SQL runs outside its own
// process: a query that exhausts memory or never yields to an interrupt costs
// only its worker, which the server kills and replaces. One DuckDB instance
// over the served file, read-only and hardened, with a private spill folder;
// one query at a time. Rows are serialised to JSON text as they come, under
// the row cap and the byte budget, so neither process ever holds more.

import { DuckDBInstance, StatementType, type DuckDBConnection } from '@duckdb/node-api';
import { IdqsError, invalidQuery, type ErrorKind, type Part } from '../errors.ts';
import { SERVER_FAULT, checkSyntaxTree, redactPaths } from './sql-sandbox.ts';
import { jsonConverter } from './json.ts';
import { READ_ONLY_MESSAGE } from './guard.ts';
import { hardenedConfig } from './hardened-config.ts';
import { dieWithParent } from './parent-watch.ts';
import { rmSync } from 'node:fs';

export interface WorkerSetup {
  path: string;
  memoryLimit: string;
  threads: number;
  tempDir: string;
  tempDirSize: string;
  /** Absolute paths no message may show. */
  secrets: string[];
  /** The server's pid: a worker whose parent is another process was orphaned before it started. */
  parentPid: number;
  /** Whether the kernel kills this worker when the server dies (setpriv --pdeathsig); else a thread watches. */
  kernelWatch: boolean;
}

export type ToWorker = { t: 'run'; id: number; sql: string; maxRows: number; maxBytes: number } | { t: 'cancel'; id: number };

export interface WorkerResult {
  t: 'result';
  id: number;
  columns: string[];
  types: string[];
  /** The rows as JSON objects separated by commas (the inside of the rows array). */
  rows: string;
  row_count: number;
  truncated: boolean;
  truncated_reason: 'max_rows' | 'max_bytes' | null;
}

export type FromWorker = { t: 'ready' } | WorkerResult | { t: 'error'; id: number; kind: ErrorKind; parts: Part[]; cause?: string };


function send(m: FromWorker): void {
  process.send?.(m);
}

/** Stop now, whatever the engine is doing: a normal exit would wait for a running query. */
function die(setup: WorkerSetup): never {
  rmSync(setup.tempDir, { recursive: true, force: true });
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}

async function main(): Promise<void> {
  const setup = JSON.parse(process.argv[2] ?? '{}') as WorkerSetup;
  // The kernel's watch covers a server dying from now on; one that died before it was set is seen here.
  if (setup.kernelWatch) {
    if (process.ppid !== setup.parentPid) die(setup);
  } else dieWithParent(setup.parentPid);
  // The server is gone or let go of us: nothing to answer to.
  process.on('disconnect', () => die(setup));
  // Paths first: once external access is disabled they can no longer be set.
  const instance = await DuckDBInstance.create(setup.path, {
    temp_directory: setup.tempDir,
    secret_directory: `${setup.tempDir}/secrets`,
    extension_directory: `${setup.tempDir}/extensions`,
    home_directory: setup.tempDir,
    ...hardenedConfig(setup),
    // Locked below, once the connection's own setting is made.
    lock_configuration: 'false',
  });
  const conn = await instance.connect();
  // The engine runs ahead of a streamed result by this much, counted without string contents: at
  // the default (about 1 MB) a result of big strings ran hundreds of MB ahead of the byte budget.
  await conn.run("SET streaming_buffer_size = '32KB'");
  await conn.run('SET lock_configuration = true');
  let running: number | null = null;
  let cancelled = false;

  process.on('message', (m: ToWorker) => {
    if (m.t === 'cancel') {
      if (running === m.id) {
        cancelled = true;
        conn.interrupt();
      }
      return;
    }
    running = m.id;
    cancelled = false;
    run(conn, setup, m, () => cancelled).then(
      (r) => send(r),
      (e: unknown) => send(errorMessage(m.id, e, setup, cancelled)),
    ).finally(() => (running = null));
  });
  send({ t: 'ready' });
}

function errorMessage(id: number, e: unknown, setup: WorkerSetup, cancelled: boolean): FromWorker {
  // Even a message quoting the caller's own text names no server path.
  if (e instanceof IdqsError) return { t: 'error', id, kind: e.code, parts: e.parts.map((p) => (typeof p === 'string' ? redactPaths(p, setup.secrets) : p)) };
  const text = redactPaths((e instanceof Error ? e.message : String(e)).replace(/^Failed to extract statements: /, '').trimEnd(), setup.secrets);
  if (cancelled) return { t: 'error', id, kind: 'cancelled', parts: ['The query was interrupted.'] };
  // The engine's advice that follows (SET memory_limit, SET threads, …) is for its operator: callers cannot run SET.
  if (/^Out of Memory Error/.test(text)) return { t: 'error', id, kind: 'resource_exhausted', parts: [text.split(/\n\s*\n/)[0]!.trimEnd()] };
  if (SERVER_FAULT.test(text)) return { t: 'error', id, kind: 'unavailable', parts: ['The database could not be read.'], cause: text };
  return { t: 'error', id, kind: 'invalid_query', parts: [text] };
}

async function run(conn: DuckDBConnection, setup: WorkerSetup, m: Extract<ToWorker, { t: 'run' }>, interrupted: () => boolean): Promise<WorkerResult> {
  // The sandbox reads the statement's syntax tree before anything runs.
  const serialized = await conn.runAndReadAll('SELECT json_serialize_sql(?::VARCHAR) AS j', [m.sql]);
  const tree = JSON.parse(String(serialized.getRows()[0]?.[0] ?? '{}')) as { error?: boolean; error_type?: string };
  // A tree that cannot be written is a parser error or not a SELECT: both are refused below, in the engine's words.
  const checked = !tree.error;
  if (checked) checkSyntaxTree(tree);

  const extracted = await conn.extractStatements(m.sql);
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
    if (!checked) throw invalidQuery(`${READ_ONLY_MESSAGE} This SELECT could not be checked by the sandbox; write it as a plain SELECT or WITH ... SELECT.`);
    const result = await prepared.stream();
    // Duplicate output names (a.x, b.x) get suffixes so no value is lost in row objects.
    const columns = result.deduplicatedColumnNames();
    const types = result.columnTypes().map(String);
    const rows: string[] = [];
    // The rows array, its brackets and separators.
    let bytes = 2;
    let reason: WorkerResult['truncated_reason'] = null;
    outer: for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      // Row by row, not the whole chunk at once: a chunk of 2,048 big rows would be built in full
      // (hundreds of MB) before the byte budget could cut it.
      for (let r = 0; r < chunk.rowCount; r++) {
        if (rows.length === m.maxRows) {
          reason = 'max_rows';
          break outer;
        }
        const values = chunk.convertRowValues(r, jsonConverter);
        const row: Record<string, unknown> = {};
        columns.forEach((name, i) => (row[name] = values[i] ?? null));
        const text = JSON.stringify(row);
        const size = Buffer.byteLength(text) + (rows.length > 0 ? 1 : 0);
        if (bytes + size > m.maxBytes) {
          reason = 'max_bytes';
          break outer;
        }
        bytes += size;
        rows.push(text);
      }
    }
    // An interrupted stream just ends: without this check a cut result would pass for a whole one.
    if (interrupted()) throw new Error('INTERRUPT Error: Interrupted!');
    return { t: 'result', id: m.id, columns, types, rows: rows.join(','), row_count: rows.length, truncated: reason !== null, truncated_reason: reason };
  } finally {
    prepared.destroySync();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`caller-SQL worker could not start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(3);
});

