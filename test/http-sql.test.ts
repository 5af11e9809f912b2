import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './fixture.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
});

interface SqlBody {
  columns: string[];
  types: string[];
  rows: Record<string, unknown>[];
  row_count: number;
  truncated: boolean;
  max_rows: number;
}
interface ErrBody {
  error: { code: string; message: string };
}

async function sql(body: unknown, server: TestServer = s): Promise<{ status: number; body: SqlBody & ErrBody; headers: Headers }> {
  const r = await server.post('/v3/sql', body);
  return { status: r.status, body: (await r.json()) as SqlBody & ErrBody, headers: r.headers };
}

async function sqlError(body: unknown, status: number, code: string, message: RegExp | string, server: TestServer = s): Promise<void> {
  const r = await sql(body, server);
  assert.equal(r.status, status, `status for ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
  assert.deepEqual(Object.keys(r.body), ['error']);
  assert.equal(r.body.error.code, code);
  if (typeof message === 'string') assert.ok(r.body.error.message.includes(message), `${r.body.error.message} should contain ${message}`);
  else assert.match(r.body.error.message, message);
}

test('POST /v3/sql runs the documented example and returns columns, types, rows and the cap', async () => {
  const r = await sql({ sql: 'SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC, Modality', max_rows: 20 });
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body), ['columns', 'types', 'rows', 'row_count', 'truncated', 'truncated_reason', 'max_rows', 'engine']);
  const expected = await s.ctx.engine.rows('SELECT Modality, count(*) AS n FROM "index" GROUP BY 1 ORDER BY n DESC, Modality');
  assert.deepEqual(r.body.columns, ['Modality', 'n']);
  assert.deepEqual(r.body.types, ['VARCHAR', 'BIGINT']);
  assert.deepEqual(r.body.rows, expected.slice(0, 20));
  assert.equal(r.body.row_count, Math.min(20, expected.length));
  assert.equal(r.body.truncated, expected.length > 20);
  assert.equal(r.body.max_rows, 20);
  for (const row of r.body.rows) assert.equal(typeof row.n, 'number', 'BIGINT counts are JSON numbers');
  assert.equal(r.headers.get('cache-control'), 'no-store');
});

test('max_rows defaults to the configured default and is lowered to the ceiling', async () => {
  const d = await sql({ sql: 'SELECT 1 AS a' });
  assert.equal(d.status, 200);
  assert.deepEqual(d.body, { columns: ['a'], types: ['INTEGER'], rows: [{ a: 1 }], row_count: 1, truncated: false, truncated_reason: null, max_rows: s.ctx.config.sqlMaxRows, engine: 'duckdb' });
  assert.equal(s.ctx.config.sqlMaxRows, 5000);
  const c = await sql({ sql: 'SELECT 1 AS a', max_rows: s.ctx.config.sqlMaxRowsCap + 1 });
  assert.equal(c.status, 200);
  assert.equal(c.body.max_rows, s.ctx.config.sqlMaxRowsCap);
  assert.equal(s.ctx.config.sqlMaxRowsCap, 10000);
  const one = await sql({ sql: 'SELECT 1 AS a', max_rows: 1 });
  assert.equal(one.body.max_rows, 1);
  assert.equal(one.body.truncated, false);
});

test('a result cut by max_rows is flagged truncated; one that fits exactly is not', async () => {
  const all = await s.ctx.engine.rows('SELECT SeriesInstanceUID FROM "index" WHERE Modality = \'CT\' ORDER BY 1');
  assert.ok(all.length > 5);
  const q = `SELECT SeriesInstanceUID FROM index WHERE Modality = 'CT' ORDER BY 1`;
  const cut = await sql({ sql: q, max_rows: 5 });
  assert.deepEqual(cut.body.rows, all.slice(0, 5));
  assert.equal(cut.body.row_count, 5);
  assert.equal(cut.body.truncated, true);
  const exact = await sql({ sql: q, max_rows: all.length });
  assert.equal(exact.body.row_count, all.length);
  assert.equal(exact.body.truncated, false);
});

test('bad bodies are 422 with a message naming the member: bounds, types, unknown and missing members', async () => {
  await sqlError({ sql: 'SELECT 1', max_rows: 0 }, 422, 'invalid_request', /max_rows must be >= 1/);
  await sqlError({ sql: 'SELECT 1', max_rows: -5 }, 422, 'invalid_request', /max_rows must be >= 1/);
  await sqlError({ sql: 'SELECT 1', max_rows: 2.5 }, 422, 'invalid_request', /max_rows must be integer/);
  await sqlError({ sql: 'SELECT 1', limit: 5 }, 422, 'invalid_request', 'Unknown member "limit" in body; accepted: sql, max_rows, engine.');
  await sqlError({ max_rows: 5 }, 422, 'invalid_request', 'Missing required member "sql"');
  await sqlError({ sql: ['SELECT 1', 'SELECT 2'] }, 422, 'invalid_request', /body\.sql must be string/);
});

test('unsafe or malformed statements are 400 invalid_query with a message that says what to fix', async () => {
  await sqlError({ sql: 'DROP TABLE index' }, 400, 'invalid_query', /read-only SELECT.*starts with "DROP"/);
  await sqlError({ sql: 'SELECT 1; DROP TABLE index' }, 400, 'invalid_query', /single statement is allowed; found 2/);
  await sqlError({ sql: '  -- only a comment' }, 400, 'invalid_query', /Empty query/);
  await sqlError({ sql: "SELECT * FROM read_csv('/etc/passwd')" }, 400, 'invalid_query', /read_csv is refused: it reads files or URLs/);
  await sqlError({ sql: 'WITH x AS (SELECT 1) DELETE FROM index' }, 400, 'invalid_query', /read-only SELECT/);
  await sqlError({ sql: 'SELECT * FROM analysis_results' }, 400, 'invalid_query', /Did you mean "analysis_results_index"/);
  await sqlError({ sql: 'SELECT no_such_column FROM index' }, 400, 'invalid_query', 'no_such_column');
  const after = await s.ctx.engine.one('SELECT count(*) AS n FROM "index"');
  assert.ok(Number(after!.n) > 0, 'index is still there');
});

test('string literals with comment markers, duplicate column names and lists come back intact', async () => {
  const lit = await sql({ sql: "SELECT '--x /* y */' AS s" });
  assert.deepEqual(lit.body.rows, [{ s: '--x /* y */' }]);
  const dup = await sql({ sql: 'SELECT 1 AS a, 2 AS a' });
  assert.equal(dup.body.columns.length, 2);
  assert.deepEqual(dup.body.columns.map((c) => dup.body.rows[0]![c]), [1, 2]);
  const list = await sql({ sql: "SELECT ['a', 'b'] AS l, {'k': 1} AS st" });
  assert.deepEqual(list.body.rows, [{ l: ['a', 'b'], st: { k: 1 } }]);
});

test('list_contains on a STRING[] column of seg_index works through /v3/sql', async () => {
  const top = await s.ctx.engine.one(
    `SELECT v, count(DISTINCT SeriesInstanceUID) AS n FROM (SELECT SeriesInstanceUID, unnest(SegmentedPropertyType_CodeMeanings) AS v FROM seg_index)
     GROUP BY v ORDER BY n DESC, v LIMIT 1`,
  );
  assert.ok(top && typeof top.v === 'string', 'seg_index has segmented property types');
  const value = String(top.v).replaceAll("'", "''");
  const r = await sql({
    sql: `SELECT count(*) AS n FROM seg_index s JOIN index i ON i.SeriesInstanceUID = s.SeriesInstanceUID
          WHERE list_contains(s.SegmentedPropertyType_CodeMeanings, '${value}')`,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.rows, [{ n: top.n }]);
  const lists = await sql({ sql: `SELECT SegmentedPropertyType_CodeMeanings AS m FROM seg_index WHERE list_contains(SegmentedPropertyType_CodeMeanings, '${value}') LIMIT 3` });
  assert.equal(lists.body.types[0], 'VARCHAR[]');
  for (const row of lists.body.rows) {
    assert.ok(Array.isArray(row.m));
    assert.ok((row.m as string[]).includes(String(top.v)));
  }
});

test('a join of a clinical table to index by dicom_patient_id = PatientID counts what independent SQL counts', async () => {
  // The test dataset has clinical tables joined by dicom_patient_id: the test always runs.
  const table = s.ctx.catalog.clinicalTables.find((t) => (s.ctx.catalog.columns.get(`clinical.${t}`) ?? []).some((c) => c.name === 'dicom_patient_id'));
  assert.ok(table, `a clinical table with dicom_patient_id among ${s.ctx.catalog.clinicalTables.join(', ')}`);
  const quoted = `clinical."${table.replaceAll('"', '""')}"`;
  const expected = await s.ctx.engine.one(`SELECT count(DISTINCT i.PatientID) AS n FROM ${quoted} c JOIN "index" i ON c.dicom_patient_id = i.PatientID`);
  assert.ok(Number(expected!.n) > 0, 'the join matches patients');
  const r = await sql({ sql: `SELECT count(DISTINCT i.PatientID) AS n FROM ${quoted} c JOIN index i ON c.dicom_patient_id = i.PatientID` });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.rows, [{ n: expected!.n }]);
});

test('a runaway query is 504 query_timeout at the configured timeout; when every SQL slot is busy the answer is 503', async () => {
  const t = await startServer({ sqlTimeoutMs: 1000, sqlConnections: 1, sqlQueue: 0 });
  try {
    const started = Date.now();
    const slow = sql({ sql: 'SELECT count(*) FROM index a, index b, index c' }, t);
    await new Promise((r) => setTimeout(r, 300));
    const refused = await sql({ sql: 'SELECT 1' }, t);
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'busy');
    assert.match(refused.body.error.message, /0 may wait \(IDQS_SQL_QUEUE\)\. Retry in a few seconds/);
    assert.equal(refused.headers.get('retry-after'), '2', 'a busy answer says when to retry');
    const r = await slow;
    const elapsed = Date.now() - started;
    assert.equal(r.status, 504);
    assert.equal(r.body.error.code, 'query_timeout');
    assert.match(r.body.error.message, /1s statement timeout \(IDQS_SQL_TIMEOUT_MS\)/);
    assert.equal(r.headers.get('retry-after'), null);
    assert.ok(elapsed < 5000, `cancelled within a few seconds (${elapsed} ms)`);
    const next = await sql({ sql: 'SELECT 42 AS x' }, t);
    assert.equal(next.status, 200);
    assert.deepEqual(next.body.rows, [{ x: 42 }]);
  } finally {
    await t.close();
  }
});

test('the OpenAPI document declares the example, the default and the ceiling, and the example runs', async () => {
  const doc = (await (await s.get('/v3/openapi.json')).json()) as {
    paths: Record<string, Record<string, { description: string; requestBody: { content: Record<string, { example: unknown; schema: { properties: Record<string, { description: string }> } }> }; responses: Record<string, unknown> }>>;
  };
  const op = doc.paths['/v3/sql']!.post!;
  const media = op.requestBody.content['application/json']!;
  assert.deepEqual(media.example, { sql: 'SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC', max_rows: 20 });
  assert.match(media.schema.properties.max_rows!.description, /Default 5000/);
  assert.match(media.schema.properties.max_rows!.description, /10000/);
  for (const code of ['200', '400', '422', '503', '504']) assert.ok(op.responses[code], `declares ${code}`);
  const r = await sql(media.example);
  assert.equal(r.status, 200);
  assert.equal(r.body.max_rows, 20);
  const expected = await s.ctx.engine.rows('SELECT Modality, count(*) AS n FROM "index" GROUP BY 1 ORDER BY n DESC');
  assert.deepEqual(
    r.body.rows.map((row) => row.n),
    expected.slice(0, 20).map((row) => row.n),
    'the example answers the counts of independent SQL',
  );
  assert.equal(r.body.truncated, expected.length > 20);
});
