// The caller-SQL guard at engine level (no HTTP): every way of writing,
// reading files or URLs, changing settings or smuggling a second statement is
// refused with a clear message and leaves no trace; legitimate SELECTs work,
// keep their text intact, and a runaway query is cancelled at the timeout.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext, type AppContext } from '../src/core/context.ts';
import { IdqsError } from '../src/core/errors.ts';
import { testConfig, testDataset } from './fixture.ts';

let ctx: AppContext;
let dbFile: string;
let scratch: string;
let baseline: Snapshot;

interface Snapshot {
  indexRows: number;
  tables: string;
  databases: string;
  threads: unknown;
  externalAccess: unknown;
  scratchFiles: string[];
  dbHash: string;
}

function fileHash(p: string): string {
  return createHash('sha256').update(readFileSync(p)).digest('hex');
}

/** What a hostile statement could have changed, seen from both engine budgets and the file system. */
async function snapshot(): Promise<Snapshot> {
  const count = await ctx.engine.one('SELECT count(*) AS n FROM "index"');
  const tables = await ctx.engine.callerSql(
    `SELECT string_agg(database_name || '.' || schema_name || '.' || table_name, ',' ORDER BY ALL) AS t FROM duckdb_tables()`,
    10,
  );
  const dbs = await ctx.engine.callerSql(`SELECT string_agg(DISTINCT database_name, ',' ORDER BY database_name) AS d FROM duckdb_schemas()`, 10);
  const settings = await ctx.engine.callerSql(
    `SELECT current_setting('threads') AS threads, current_setting('enable_external_access') AS ext`,
    10,
  );
  return {
    indexRows: Number(count!.n),
    tables: String(tables.rows[0]!.t),
    databases: String(dbs.rows[0]!.d),
    threads: settings.rows[0]!.threads,
    externalAccess: settings.rows[0]!.ext,
    scratchFiles: readdirSync(scratch),
    dbHash: fileHash(dbFile),
  };
}

before(async () => {
  const ds = await testDataset();
  dbFile = ds.db;
  ctx = await createContext(testConfig({ sqlTimeoutMs: 1000 }), ds.db);
  scratch = mkdtempSync(join(tmpdir(), 'idqs-guard-'));
  baseline = await snapshot();
  assert.ok(baseline.indexRows > 1000, 'the test database has series');
  assert.equal(baseline.externalAccess, false);
  assert.equal(baseline.threads, ctx.config.sqlThreads);
});

after(() => {
  ctx?.engine.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function refused(sql: string, message: RegExp): Promise<void> {
  await assert.rejects(
    () => ctx.engine.callerSql(sql, 10),
    (e: unknown) => {
      assert.ok(e instanceof IdqsError, `expected an IdqsError for ${JSON.stringify(sql)}, got ${String(e)}`);
      assert.equal(e.code, 'invalid_query', `code for ${JSON.stringify(sql)}`);
      assert.match(e.message, message, `message for ${JSON.stringify(sql)}`);
      return true;
    },
  );
  assert.deepEqual(await snapshot(), baseline, `nothing changed after ${JSON.stringify(sql)}`);
}

const startsWith = (kw: string) => new RegExp(`read-only SELECT.*starts with "${kw}"`);

test('reading files, globbing and object-store URLs are refused before anything runs', async () => {
  const disabled = /is refused: it reads files or URLs/;
  await refused(`SELECT * FROM read_csv('/etc/passwd')`, disabled);
  await refused(`SELECT * FROM read_text('/etc/passwd')`, disabled);
  await refused(`SELECT * FROM glob('/etc/*')`, disabled);
  await refused(`SELECT * FROM read_parquet('s3://example-bucket/x.parquet')`, disabled);
});

test('statements that write, attach, load, export or change settings are refused by type', async () => {
  const cases: [string, string][] = [
    [`COPY index TO '${scratch}/x.csv'`, 'COPY'],
    [`ATTACH '${scratch}/x.db'`, 'ATTACH'],
    ['INSTALL httpfs', 'INSTALL'],
    ['LOAD httpfs', 'LOAD'],
    ['SET threads=8', 'SET'],
    ['SET GLOBAL enable_external_access=true', 'SET'],
    ['PRAGMA database_list', 'PRAGMA'],
    ['RESET threads', 'RESET'],
    ['CREATE TABLE t AS SELECT 1', 'CREATE'],
    ['INSERT INTO index SELECT * FROM index', 'INSERT'],
    ['DROP TABLE index', 'DROP'],
    ['DELETE FROM index', 'DELETE'],
    ["UPDATE index SET Modality='X'", 'UPDATE'],
    ['CALL pragma_version()', 'CALL'],
    [`EXPORT DATABASE '${scratch}/x'`, 'EXPORT'],
    ['/* hidden */ DROP TABLE index', 'DROP'],
    ['-- c\nDROP TABLE index', 'DROP'],
  ];
  for (const [sql, kw] of cases) await refused(sql, startsWith(kw));
});

test('a data-modifying statement behind WITH is refused by its statement type', async () => {
  await refused('WITH x AS (SELECT 1) DELETE FROM index', /Only a single read-only SELECT \(or WITH \.\.\. SELECT\) statement is allowed/);
});

test('a second statement is refused, whatever it is', async () => {
  await refused('SELECT 1; SELECT 2', /single statement is allowed; found 2/);
  await refused('SELECT 1; DROP TABLE index', /single statement is allowed; found 2/);
});

test('empty and comment-only SQL are refused as empty', async () => {
  await refused('', /Empty query/);
  await refused('   \n\t', /Empty query/);
  await refused('-- nothing here\n/* nor here */', /Empty query/);
});

test('comments before a SELECT are fine, and string literals containing comment markers are returned intact', async () => {
  const r = await ctx.engine.callerSql('-- a line comment\n/* a block\n comment */ SELECT 1 AS a', 10);
  assert.deepEqual(r.rows, [{ a: 1 }]);
  const s = await ctx.engine.callerSql(`SELECT '--x /* y */' AS s`, 10);
  assert.deepEqual(s.rows, [{ s: '--x /* y */' }]);
  assert.deepEqual(s.columns, ['s']);
  assert.deepEqual(s.types, ['VARCHAR']);
});

test('engine errors are passed through verbatim with their suggestions', async () => {
  await assert.rejects(
    () => ctx.engine.callerSql('SELECT * FROM analysis_results', 10),
    (e: IdqsError) => e.code === 'invalid_query' && /Did you mean "analysis_results_index"/.test(e.message),
  );
  await assert.rejects(
    () => ctx.engine.callerSql('SELECT no_such_column FROM index', 10),
    (e: IdqsError) => e.code === 'invalid_query' && e.message.includes('no_such_column') && /Binder Error/.test(e.message),
  );
});

test('the row cap cuts the result and flags it; a result that fits exactly is not truncated', async () => {
  const cut = await ctx.engine.callerSql('SELECT range AS i FROM range(10) ORDER BY i', 3);
  assert.deepEqual(cut.rows, [{ i: 0 }, { i: 1 }, { i: 2 }]);
  assert.equal(cut.row_count, 3);
  assert.equal(cut.truncated, true);
  assert.equal(cut.max_rows, 3);
  const exact = await ctx.engine.callerSql('SELECT range AS i FROM range(10)', 10);
  assert.equal(exact.row_count, 10);
  assert.equal(exact.truncated, false);
  // More than one engine chunk (2048 rows) with a cap in the middle of the second one.
  const big = await ctx.engine.callerSql('SELECT SeriesInstanceUID FROM "index" ORDER BY 1', 2500);
  assert.equal(big.row_count, Math.min(2500, baseline.indexRows));
  assert.equal(big.truncated, baseline.indexRows > 2500);
});

test('duplicate output column names keep both values', async () => {
  const r = await ctx.engine.callerSql('SELECT 1 AS a, 2 AS a', 10);
  assert.equal(r.columns.length, 2);
  assert.equal(new Set(r.columns).size, 2, 'names are made distinct');
  assert.equal(r.columns[0], 'a');
  assert.deepEqual(Object.values(r.rows[0]!), [1, 2]);
  assert.deepEqual(r.columns.map((c) => r.rows[0]![c]), [1, 2]);
});

test('BIGINT counts come back as JSON numbers (strings only beyond 2^53)', async () => {
  const r = await ctx.engine.callerSql('SELECT count(*) AS n, 9007199254740993::BIGINT AS big FROM "index"', 10);
  assert.deepEqual(r.types, ['BIGINT', 'BIGINT']);
  assert.equal(typeof r.rows[0]!.n, 'number');
  assert.equal(r.rows[0]!.n, baseline.indexRows);
  assert.equal(r.rows[0]!.big, '9007199254740993');
  assert.equal(JSON.stringify(r.rows[0]), `{"n":${baseline.indexRows},"big":"9007199254740993"}`);
});

test('a pathological cross join is cancelled at the timeout and the engine keeps working', async () => {
  const started = Date.now();
  await assert.rejects(
    () => ctx.engine.callerSql('SELECT count(*) FROM index a, index b, index c', 10),
    (e: unknown) => {
      assert.ok(e instanceof IdqsError);
      assert.equal(e.code, 'query_timeout');
      assert.match(e.message, /1s statement timeout/);
      return true;
    },
  );
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 900, `cancelled only at the timeout (${elapsed} ms)`);
  assert.ok(elapsed < 5000, `cancelled within a few seconds (${elapsed} ms)`);
  const next = await ctx.engine.callerSql('SELECT count(*) AS n FROM "index"', 10);
  assert.deepEqual(next.rows, [{ n: baseline.indexRows }]);
  assert.deepEqual(await snapshot(), baseline);
});

test('closing the engine while queries run interrupts them instead of closing connections under them', async () => {
  const other = await createContext(testConfig({ sqlTimeoutMs: 30_000 }), dbFile);
  const hostile = other.engine.callerSql('SELECT count(*) FROM index a, index b, index c', 10);
  const curated = other.engine.materialize('SELECT count(*) AS n FROM "index" a, "index" b, "index" c');
  await new Promise((r) => setTimeout(r, 200));
  const started = Date.now();
  other.engine.close();
  const results = await Promise.allSettled([hostile, curated]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.ok(Date.now() - started < 5000, 'the running queries stop promptly');
  await assert.rejects(() => other.engine.rows('SELECT 1'), /engine is closed/);
  // This process (and the other engine on the same file) carries on.
  const next = await ctx.engine.callerSql('SELECT count(*) AS n FROM "index"', 10);
  assert.deepEqual(next.rows, [{ n: baseline.indexRows }]);
});

test('closing the engine at any moment of the start of a query (worker starting, connection being taken) answers it at once, not at its deadline', async () => {
  // The close lands before, during and after each query reaches the engine or its worker:
  // an interrupt sent before a query starts is lost, so the answer must not depend on it.
  for (const delay of [0, 1, 5, 20, 60, 150, 300]) {
    const other = await createContext(testConfig({ sqlTimeoutMs: 30_000, queryTimeoutMs: 30_000 }), dbFile);
    const hostile = other.engine.callerSql('SELECT count(*) FROM index a, index b, index c', 10);
    const curated = other.engine.materialize('SELECT count(*) AS n FROM "index" a, "index" b, "index" c');
    await new Promise((r) => setTimeout(r, delay));
    const started = Date.now();
    other.engine.close();
    const results = await Promise.allSettled([hostile, curated]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected'], `closed after ${delay} ms`);
    assert.ok(Date.now() - started < 5000, `closed after ${delay} ms: answered after ${Date.now() - started} ms`);
  }
});
