// Trino as the third engine, on a real cluster (one coordinator, one worker,
// started once for the file by deploy/trino/cluster.sh over the test dataset's
// Parquet): the cohort questions answered by Trino equal DuckDB's answers and
// SQL written here; caller SQL on either engine; and the faults: a cluster
// stopped, a worker killed mid-query, a query over its limits, a client that leaves.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { startServer, testDataset, type TestServer } from './fixture.ts';
import { filterArb, referenceCounts, sampleOf, unionArb, type Filter } from './cohort-index-support.ts';
import { startTrinoCluster, type TrinoCluster } from './trino-cluster.ts';
import { plannerStats } from '../src/core/planner/plan.ts';

/** This file's ports (the coordinator's, the worker's next to it). */
const PORT = 18350;

let cluster: TrinoCluster;
let duck: TestServer;
let trino: TestServer;

before(async () => {
  const { folder } = await testDataset();
  cluster = await startTrinoCluster(folder, PORT, 1);
  // The cohort index off on both: every question goes past it, to Trino on one server, to DuckDB on the other.
  duck = await startServer({ cohortIndex: 'off' });
  trino = await startServer({ cohortIndex: 'off', trinoUrl: cluster.url });
});
after(async () => {
  await trino?.close();
  await duck?.close();
  await cluster?.stop();
});

/** Answers given by Trino so far, by question. */
function trinoAnswers(): Record<string, number> {
  return Object.fromEntries(plannerStats().filter((s) => s.evaluator === 'trino').map((s) => [s.question, s.answers]));
}

/** A body with each server's own address written out (download commands name it). */
async function bodyOf(s: TestServer, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const r = await s.post(path, body);
  const text = (await r.text()).replaceAll(s.url, 'http://server');
  const parsed = JSON.parse(text) as Record<string, unknown>;
  delete parsed.request_id;
  return { status: r.status, body: parsed };
}

test('cohort questions answered by Trino equal DuckDB\'s answers and SQL written here', async () => {
  const sample = await sampleOf(duck.ctx);
  const filters: Filter[] = [{ terms: {}, ranges: {} }, ...fc.sample(fc.oneof(filterArb(sample, 3), unionArb(sample)), { numRuns: 7, seed: 37 })];
  const reference = await referenceCounts(duck.ctx, filters, 1);
  const before = trinoAnswers();
  let asked = 0;
  const same = async (path: string, body: unknown) => {
    const [a, b] = await Promise.all([bodyOf(duck, path, body), bodyOf(trino, path, body)]);
    assert.equal(a.status, 200, `${path} ${JSON.stringify(body)} on DuckDB: ${JSON.stringify(a.body)}`);
    assert.deepEqual(b, a, `${path} ${JSON.stringify(body)}`);
    asked++;
    return b.body as Record<string, unknown>;
  };
  // The questions of a filter at once (as the explorer asks them): the cluster and the test take less time.
  for (const [i, f] of filters.entries()) {
    const [counts] = await Promise.all([
      same('/v3/cohort/counts', f),
      same('/v3/licenses', { filters: f }),
      same('/v3/cohort/manifest', { filters: f, page: 2, page_size: 7 }),
      same('/v3/cohort/table', { filters: f, level: 'collections' }),
      same('/v3/cohort/table', { filters: f, level: 'patients', sort: 'studies', order: 'desc', page_size: 6 }),
      same('/v3/cohort/table', { filters: f, level: 'studies', sort: 'StudyDate', order: 'asc', page: 2, page_size: 5 }),
      same('/v3/cohort/table', { filters: f, level: 'series', sort: 'series_size_MB', order: 'desc', page_size: 8 }),
    ]);
    const want = reference[i]!;
    assert.deepEqual(
      [counts.patients, counts.studies, counts.series, counts.instances],
      [want.patients, want.studies, want.series, want.instances],
      `counts of ${JSON.stringify(f)} against SQL written in the test`,
    );
    assert.ok(Math.abs(Number(counts.size_MB) - want.size_MB) < 0.01);
  }
  assert.ok(asked >= 50, `${asked} questions`);
  const now = trinoAnswers();
  for (const q of ['counts', 'licenses', 'seriesRows', 'tableRows', 'tableTotal']) {
    assert.ok((now[q] ?? 0) - (before[q] ?? 0) >= filters.length, `Trino answered ${q} (${(now[q] ?? 0) - (before[q] ?? 0)} times), not DuckDB in its place`);
  }
});

test('/v3/version lists the engines in the order they are asked', async () => {
  const v = (await (await trino.get('/v3/version')).json()) as { engines: string[] };
  assert.deepEqual(v.engines, ['trino', 'duckdb']);
  const d = (await (await duck.get('/v3/version')).json()) as { engines: string[] };
  assert.deepEqual(d.engines, ['duckdb']);
});

/** Statements both engines read alike (names aliased in lower case: Trino lower-cases every name). */
const COMMON_SQL = [
  'SELECT Modality AS modality, count(*) AS n FROM "index" GROUP BY Modality ORDER BY n DESC, modality',
  'SELECT collection_id AS c, count(DISTINCT PatientID) AS patients, sum(instanceCount) AS instances FROM "index" GROUP BY collection_id ORDER BY c',
  "SELECT count(*) AS n FROM \"index\" WHERE Modality = 'CT' AND instanceCount > 10",
  'SELECT license_short_name AS l, round(sum(series_size_MB), 3) AS mb FROM "index" GROUP BY 1 ORDER BY 1 NULLS LAST',
  'WITH s AS (SELECT StudyInstanceUID AS st, count(*) AS k FROM "index" GROUP BY 1) SELECT k, count(*) AS studies FROM s GROUP BY k ORDER BY k',
  'SELECT i.collection_id AS c, count(*) AS n FROM "index" i JOIN collections_index ci ON i.collection_id = ci.collection_id GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5',
  'SELECT SeriesInstanceUID AS uid, Modality AS m FROM "index" ORDER BY SeriesInstanceUID OFFSET 20 LIMIT 10',
];

async function sqlOf(s: TestServer, body: unknown): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const r = await s.post('/v3/sql', body);
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> };
}

test('caller SQL in the common subset: the same rows on DuckDB and on Trino, and as SQL run here', async () => {
  for (const sql of COMMON_SQL) {
    const d = await sqlOf(trino, { sql, max_rows: 500 });
    const t = await sqlOf(trino, { sql, max_rows: 500, engine: 'trino' });
    assert.equal(t.status, 200, `${sql}: ${JSON.stringify(t.body)}`);
    assert.equal(d.body.engine, 'duckdb');
    assert.equal(t.body.engine, 'trino');
    assert.deepEqual(t.body.columns, d.body.columns, sql);
    assert.deepEqual(t.body.rows, d.body.rows, sql);
    assert.deepEqual(t.body.rows, await duck.ctx.engine.rows(sql), `${sql} against the database`);
    assert.equal(t.body.truncated, false);
  }
  // The row cap: one row more is read, then the query is cancelled.
  const cut = await sqlOf(trino, { sql: 'SELECT SeriesInstanceUID AS uid FROM "index" ORDER BY 1', max_rows: 7, engine: 'trino' });
  assert.deepEqual(cut.body.rows, (await duck.ctx.engine.rows('SELECT SeriesInstanceUID AS uid FROM "index" ORDER BY 1 LIMIT 7')));
  assert.equal(cut.body.truncated, true);
  assert.equal(cut.body.truncated_reason, 'max_rows');
});

test('caller SQL on Trino is read-only: our guard, the system catalog refused, and Trino\'s own access control', async () => {
  const write = await sqlOf(trino, { sql: 'CREATE TABLE x AS SELECT 1 AS a', engine: 'trino' });
  assert.equal(write.status, 400);
  assert.match(String((write.body.error as { message: string }).message), /read-only SELECT/);
  const sys = await sqlOf(trino, { sql: 'SELECT query FROM system.runtime.queries', engine: 'trino' });
  assert.equal(sys.status, 400);
  assert.match(String((sys.body.error as { message: string }).message), /release's tables only/);
  // Past our guard, Trino itself refuses: the access control cluster.sh installs allows reads only.
  const direct = await fetch(`${cluster.url}/v1/statement`, { method: 'POST', body: 'CREATE TABLE idqs.main.x AS SELECT 1 AS a', headers: { 'X-Trino-User': 'idqs' } });
  let body = (await direct.json()) as { nextUri?: string; error?: { errorName: string } };
  while (!body.error && body.nextUri) body = (await (await fetch(body.nextUri, { headers: { 'X-Trino-User': 'idqs' } })).json()) as typeof body;
  assert.equal(body.error?.errorName, 'PERMISSION_DENIED');
});

test('engine "trino" without a cluster is a 503 naming the setting; an unknown engine a 422', async () => {
  const r = await sqlOf(duck, { sql: 'SELECT 1 AS a', engine: 'trino' });
  assert.equal(r.status, 503);
  assert.equal(r.headers.get('retry-after'), null, 'retrying does not help: the operator must configure a cluster');
  assert.match(String((r.body.error as { message: string }).message), /IDQS_TRINO_URL/);
  const bad = await sqlOf(duck, { sql: 'SELECT 1 AS a', engine: 'spark' });
  assert.equal(bad.status, 422);
  assert.match(JSON.stringify(bad.body), /engine/);
});

/** Queries of the cluster whose text holds `marker`, with their state (asked of Trino itself). */
async function queriesWith(marker: string): Promise<{ state: string; error: string | null }[]> {
  // The coordinator's REST list, not system.runtime.queries: a SQL query needs a worker, and one test kills it.
  const r = await fetch(`${cluster.url}/v1/query`, { headers: { 'X-Trino-User': 'idqs' } });
  assert.equal(r.status, 200, `GET /v1/query: ${r.status}`);
  const list = (await r.json()) as { query: string; state: string; errorCode?: { name: string } }[];
  return list.filter((q) => q.query.includes(marker)).map((q) => ({ state: q.state, error: q.errorCode?.name ?? null }));
}

/** A query that runs for minutes on the test data (a triple cross join), marked to be found. */
const slow = (marker: string) => `SELECT count(*) AS n FROM "index" a CROSS JOIN "index" b CROSS JOIN "index" c WHERE a.instanceCount + b.instanceCount + c.instanceCount = -1 /* ${marker} */`;

async function settled(marker: string): Promise<{ state: string; error: string | null }[]> {
  const until = Date.now() + 20_000;
  let q = await queriesWith(marker);
  while (q.some((x) => x.state !== 'FINISHED' && x.state !== 'FAILED') && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 300));
    q = await queriesWith(marker);
  }
  return q;
}

test('a client that leaves: its query is cancelled on Trino, none left running', async () => {
  const marker = `leave-${process.pid}-${Date.now()}`;
  const ac = new AbortController();
  const asked = fetch(`${trino.url}/v3/sql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: slow(marker), engine: 'trino' }), signal: ac.signal });
  // Wait until Trino runs it, then leave.
  const until = Date.now() + 30_000;
  while ((await queriesWith(marker)).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  ac.abort();
  await asked.catch(() => undefined);
  const q = await settled(marker);
  assert.equal(q.length, 1, 'the query reached Trino');
  assert.equal(q[0]!.state, 'FAILED', 'it is not running any more');
  assert.equal(q[0]!.error, 'USER_CANCELED');
});

test('a query over its limits is killed by Trino and answers with its reason', async () => {
  const tight = await startServer({ cohortIndex: 'off', trinoUrl: cluster.url, sqlTimeoutMs: 1500, trinoQueryMemory: '1MB' });
  try {
    const marker = `limit-${process.pid}-${Date.now()}`;
    const r = await sqlOf(tight, { sql: slow(marker), engine: 'trino' });
    assert.ok(r.status === 504 || r.status === 503, `${r.status} ${JSON.stringify(r.body)}`);
    assert.match(String((r.body.error as { message: string }).message), /Trino/);
    const mem = await sqlOf(tight, { sql: 'SELECT array_agg(a.SeriesInstanceUID || b.SeriesInstanceUID) AS l FROM "index" a CROSS JOIN "index" b', engine: 'trino' });
    assert.ok(mem.status === 503 || mem.status === 504, `${mem.status} ${JSON.stringify(mem.body)}`);
    assert.match(String((mem.body.error as { message: string }).message), /Trino killed the query: EXCEEDED_\w*(MEMORY|TIME)/);
    const q = await settled(marker);
    assert.ok(q.every((x) => x.state === 'FAILED'), JSON.stringify(q));
  } finally {
    await tight.close();
  }
});

/** The pid of a node of the cluster (cluster.sh keeps the launcher's pid file in its state folder). */
function nodePid(name: string): number {
  const home = process.env.IDQS_TRINO_HOME ?? join(homedir(), '.cache', 'idqs-trino');
  return Number(readFileSync(join(home, `cluster-${PORT}`, name, 'launcher.pid'), 'utf8').trim());
}

// Next to last: it leaves the cluster without a worker.
test('a worker killed mid-query: a 503 naming Trino, never a partial answer; nothing left running; cohort questions still answer as DuckDB does or say Trino is down', async () => {
  const marker = `kill-${process.pid}-${Date.now()}`;
  const asked = sqlOf(trino, { sql: slow(marker), engine: 'trino' });
  const until = Date.now() + 30_000;
  while (!(await queriesWith(marker)).some((q) => q.state === 'RUNNING') && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  process.kill(nodePid('worker1'), 'SIGKILL');
  const r = await asked;
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.equal(r.body.rows, undefined, 'no rows at all, not some of them');
  assert.match(String((r.body.error as { message: string }).message), /Trino \(IDQS_TRINO_URL\) cannot answer now/);
  assert.ok(Number(r.headers.get('retry-after')) > 0, 'Retry-After');
  const q = await settled(marker);
  assert.ok(q.length === 1 && q[0]!.state === 'FAILED', JSON.stringify(q));
  for (const f of [{}, { terms: { Modality: ['MR'] } }]) {
    const [a, b] = await Promise.all([bodyOf(duck, '/v3/cohort/counts', f), bodyOf(trino, '/v3/cohort/counts', f)]);
    if (b.status === 200) assert.deepEqual(b, a);
    else {
      assert.equal(b.status, 503, JSON.stringify(b.body));
      assert.match(JSON.stringify(b.body), /Trino/);
    }
  }
});

// Last: it stops the cluster.
test('cluster stopped: caller SQL on Trino answers 503 with Retry-After naming Trino; the rest answers from DuckDB', async () => {
  await cluster.stop();
  const r = await sqlOf(trino, { sql: 'SELECT 1 AS a', engine: 'trino' });
  assert.equal(r.status, 503);
  assert.ok(Number(r.headers.get('retry-after')) > 0, 'Retry-After');
  assert.match(String((r.body.error as { message: string }).message), /Trino \(IDQS_TRINO_URL\) cannot answer now/);
  for (const f of [{}, { terms: { Modality: ['CT'] } }]) {
    const [a, b] = await Promise.all([bodyOf(duck, '/v3/cohort/counts', f), bodyOf(trino, '/v3/cohort/counts', f)]);
    assert.equal(b.status, 200);
    assert.deepEqual(b, a);
  }
  const d = await sqlOf(trino, { sql: 'SELECT count(*) AS n FROM "index"' });
  assert.equal(d.status, 200);
  assert.deepEqual(d.body.rows, await duck.ctx.engine.rows('SELECT count(*) AS n FROM "index"'));
});
