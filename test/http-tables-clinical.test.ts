import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Config } from '../src/config.ts';
import { createContext, type AppContext } from '../src/core/context.ts';
import { buildApp } from '../src/http/app.ts';
import { startServer, testConfig, testDataset, type TestServer } from './fixture.ts';
import { V3_EXAMPLE_CHECKS } from './example-checks.ts';

type Obj = Record<string, unknown>;
interface ErrorBody {
  error: { code: string; message: string };
}

// Besides the generated clinical tables, the clinical routes are exercised
// over copies of the test database: one with clinical tables of our own
// (plus an unexpected main table), one with none.
const CLIN = 'idqs_test_clin';
const UNDOCUMENTED = 'idqs_test_undocumented';
const ABSENT = 'idqs_test_absent';
const EXTRA = 'zz_test_extra';

interface Served {
  url: string;
  ctx: AppContext;
  get: (path: string, headers?: Record<string, string>) => Promise<Response>;
  close: () => Promise<void>;
}

const tmpDirs: string[] = [];

async function derivedDb(setup: string[]): Promise<string> {
  const ds = await testDataset();
  const dir = mkdtempSync(join(tmpdir(), 'idqs-clinical-test-'));
  tmpDirs.push(dir);
  const db = join(dir, 'derived.duckdb');
  copyFileSync(ds.db, db);
  const inst = await DuckDBInstance.create(db);
  const c = await inst.connect();
  try {
    for (const sql of setup) await c.run(sql);
    await c.run('CHECKPOINT');
  } finally {
    c.closeSync();
    inst.closeSync();
  }
  return db;
}

async function serve(db: string, overrides: Partial<Config> = {}): Promise<Served> {
  const ctx = await createContext(testConfig(overrides), db);
  const app = await buildApp(ctx);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    ctx,
    get: (path, headers) => fetch(url + path, { headers }),
    close: async () => {
      await app.close();
      ctx.engine.close();
    },
  };
}

async function json<T = unknown>(srv: { get: (p: string) => Promise<Response> }, path: string, status = 200): Promise<T> {
  const r = await srv.get(path);
  const text = await r.text();
  assert.equal(r.status, status, `${path}: ${text}`);
  return JSON.parse(text) as T;
}

let s: TestServer;
let withClin: Served;
let noClin: Served;
const CLIN_DEFAULT_ROWS = 7;

before(async () => {
  s = await startServer();
  const withDb = await derivedDb([
    'CREATE SCHEMA IF NOT EXISTS clinical',
    // Two rows for some patients so the order must look past dicom_patient_id.
    `CREATE TABLE clinical.${CLIN} AS
       SELECT PatientID AS dicom_patient_id, (hash(PatientID) % 50 + 40)::BIGINT AS age, ['1', '2', '3'][(hash(PatientID) % 3 + 1)::INT] AS stage,
              NULL::VARCHAR AS notes
       FROM (SELECT DISTINCT PatientID FROM "index" WHERE collection_id = 'nlst')
       UNION ALL
       SELECT PatientID, 99, '9', 'follow-up' FROM (SELECT DISTINCT PatientID FROM "index" WHERE collection_id = 'nlst' ORDER BY 1 LIMIT 3)`,
    `CREATE TABLE clinical.${UNDOCUMENTED} AS SELECT 'p' || i::VARCHAR AS case_id, i AS value FROM range(4) t(i)`,
    `INSERT INTO clinical_index VALUES
       ('nlst', 'public.clinical.${CLIN}', '${CLIN}', 'dicom_patient_id', 'Patient identifier', []),
       ('nlst', 'public.clinical.${CLIN}', '${CLIN}', 'age', 'Age at enrollment (years)', []),
       ('nlst', 'public.clinical.${CLIN}', '${CLIN}', 'stage', 'Clinical stage',
          [{'option_code': '1', 'option_description': 'Stage I'}, {'option_code': '2', 'option_description': 'Stage II'},
           {'option_code': '3', 'option_description': 'Stage III'}, {'option_code': '9', 'option_description': 'Unknown'}]),
       ('nlst', 'public.clinical.${ABSENT}', '${ABSENT}', 'x', 'Not loaded', [])`,
    `CREATE TABLE main.${EXTRA} (a VARCHAR, b BIGINT[], c STRUCT(x INTEGER), d DOUBLE, e BOOLEAN, f INTEGER)`,
  ]);
  withClin = await serve(withDb, { clinicalMaxRows: CLIN_DEFAULT_ROWS });
  noClin = await serve(await derivedDb(['DROP SCHEMA IF EXISTS clinical CASCADE']));
});

after(async () => {
  await s?.close();
  await withClin?.close();
  await noClin?.close();
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------- tables

test('GET /v3/tables lists the main-schema tables in catalog order with live column counts', async () => {
  const body = await json<{ tables: { name: string; description: string; column_count: number }[] }>(s, '/v3/tables');
  assert.deepEqual(Object.keys(body), ['tables']);
  const names = body.tables.map((t) => t.name);
  assert.deepEqual(names, s.ctx.catalog.tables);
  assert.equal(names[0], 'index');
  assert.ok(names.includes('clinical_index'));
  assert.ok(names.includes('seg_index'));
  const counts = new Map(
    (
      await s.ctx.engine.rows(`SELECT table_name AS t, count(*) AS n FROM information_schema.columns WHERE table_schema = 'main' GROUP BY 1`)
    ).map((r) => [String(r.t), Number(r.n)]),
  );
  assert.equal(body.tables.length, counts.size);
  for (const t of body.tables) {
    assert.equal(t.column_count, counts.get(t.name), t.name);
    assert.ok(t.description.length > 0, `${t.name} has a description`);
  }
  // Exactly the main schema: nothing of clinical, v2 or idqs_meta.
  assert.deepEqual(new Set(names), new Set(counts.keys()));
  assert.ok(!names.includes('dataset') && !names.includes('bibliography'));
});

test('GET /v3/tables excludes clinical tables and lists unexpected main tables last, without a description', async () => {
  const body = await json<{ tables: { name: string; description: string; column_count: number }[] }>(withClin, '/v3/tables');
  const names = body.tables.map((t) => t.name);
  assert.ok(!names.includes(CLIN));
  assert.ok(!names.includes(UNDOCUMENTED));
  for (const t of withClin.ctx.catalog.clinicalTables) assert.ok(!names.includes(t), t);
  assert.ok(names.includes('clinical_index'));
  const extra = body.tables.at(-1)!;
  assert.equal(extra.name, EXTRA);
  assert.equal(extra.description, '');
  assert.equal(extra.column_count, 6);
});

test('GET /v3/tables/seg_index reports STRING[] for the list column, with the engine type', async () => {
  const body = await json<{ name: string; description: string; columns: { name: string; type: string; engine_type: string; description: string }[] }>(
    s,
    '/v3/tables/seg_index',
  );
  assert.equal(body.name, 'seg_index');
  assert.ok(body.description.length > 0);
  const live = await s.ctx.engine.rows(
    `SELECT column_name AS n, data_type AS t FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'seg_index' ORDER BY ordinal_position`,
  );
  assert.deepEqual(
    body.columns.map((c) => [c.name, c.engine_type]),
    live.map((r) => [r.n, r.t]),
  );
  const spt = body.columns.find((c) => c.name === 'SegmentedPropertyType_CodeMeanings')!;
  assert.equal(spt.type, 'STRING[]');
  assert.equal(spt.engine_type, 'VARCHAR[]');
  assert.match(spt.description, /list_contains/);
  assert.equal(body.columns.find((c) => c.name === 'total_segments')!.type, 'INTEGER');
  for (const c of body.columns) assert.deepEqual(Object.keys(c), ['name', 'type', 'engine_type', 'description']);
});

test('GET /v3/tables/index types follow the registry (STRING, INTEGER, FLOAT)', async () => {
  const body = await json<{ columns: { name: string; type: string; engine_type: string }[] }>(s, '/v3/tables/index');
  const by = new Map(body.columns.map((c) => [c.name, c]));
  assert.equal(by.get('Modality')!.type, 'STRING');
  assert.equal(by.get('instanceCount')!.type, 'INTEGER');
  assert.equal(by.get('instanceCount')!.engine_type, 'BIGINT');
  assert.equal(by.get('series_size_MB')!.type, 'FLOAT');
  assert.equal(body.columns.length, s.ctx.catalog.columns.get('index')!.length);
});

test('extra live columns get a type mapped from the engine type (structs with their fields) and an empty description', async () => {
  const body = await json<{ columns: { name: string; type: string; engine_type: string; description: string }[] }>(withClin, `/v3/tables/${EXTRA}`);
  assert.deepEqual(
    body.columns.map((c) => [c.name, c.type, c.engine_type, c.description]),
    [
      ['a', 'STRING', 'VARCHAR', ''],
      ['b', 'INTEGER[]', 'BIGINT[]', ''],
      ['c', 'STRUCT(x INTEGER)', 'STRUCT(x INTEGER)', ''],
      ['d', 'FLOAT', 'DOUBLE', ''],
      ['e', 'BOOLEAN', 'BOOLEAN', ''],
      ['f', 'INTEGER', 'INTEGER', ''],
    ],
  );
});

test('an unknown table is a 404 naming it, suggesting close names and listing the available tables', async () => {
  const body = await json<ErrorBody>(s, '/v3/tables/Index', 404);
  assert.equal(body.error.code, 'not_found');
  assert.match(body.error.message, /'Index'/);
  assert.match(body.error.message, /Did you mean 'index'/);
  for (const t of s.ctx.catalog.tables) assert.ok(body.error.message.includes(t), `lists ${t}`);

  const clin = await json<ErrorBody>(withClin, `/v3/tables/${CLIN}`, 404);
  assert.match(clin.error.message, new RegExp(`/v3/clinical/tables/${CLIN}`));
  assert.match(clin.error.message, new RegExp(`clinical\\.${CLIN}`));
  const qualified = await json<ErrorBody>(withClin, `/v3/tables/clinical.${CLIN}`, 404);
  assert.match(qualified.error.message, new RegExp(`/v3/clinical/tables/${CLIN}`));
});

// ---------------------------------------------------------------- clinical

test('GET /v3/clinical/tables lists the tables present, joined with clinical_index, ordered by collection and name', async () => {
  const body = await json<{ tables: Obj[]; warnings?: string[] }>(withClin, '/v3/clinical/tables');
  assert.equal(body.warnings, undefined);
  const present = withClin.ctx.catalog.clinicalTables;
  for (const t of body.tables) {
    assert.ok(present.includes(String(t.table_name)), `${t.table_name} is present`);
    assert.equal(t.sql_path, `clinical.${t.table_name}`);
    assert.deepEqual(Object.keys(t), ['table_name', 'sql_path', 'collection_id', 'column_count', 'description', 'row_count']);
  }
  for (const name of present) assert.ok(body.tables.some((t) => t.table_name === name), `${name} is listed`);
  assert.ok(!body.tables.some((t) => t.table_name === ABSENT), 'a dictionary entry without a table is not listed');

  const key = (t: Obj) => [t.collection_id === null ? '\uffff' : String(t.collection_id), String(t.table_name)];
  for (let i = 1; i < body.tables.length; i++) {
    const [ac, at] = key(body.tables[i - 1]!);
    const [bc, bt] = key(body.tables[i]!);
    assert.ok(ac! < bc! || (ac === bc && at! < bt!), `order at ${i}`);
  }

  const clin = body.tables.find((t) => t.table_name === CLIN)!;
  assert.equal(clin.collection_id, 'nlst');
  assert.equal(clin.column_count, 4);
  const n = Number((await withClin.ctx.engine.one(`SELECT count(*) AS n FROM clinical.${CLIN}`))!.n);
  assert.equal(clin.row_count, n);
  assert.match(String(clin.description), /dicom_patient_id = index\.PatientID/);

  const und = body.tables.find((t) => t.table_name === UNDOCUMENTED)!;
  assert.equal(und.collection_id, null);
  assert.equal(und.row_count, 4);
  assert.equal(und.column_count, 2);
  assert.equal(body.tables.at(-1)!.collection_id, null, 'undocumented tables come last');
});

test('GET /v3/clinical/tables?collection_id= filters; an unknown collection gives [] and a warning with suggestions', async () => {
  const nlst = await json<{ tables: Obj[]; warnings?: string[] }>(withClin, '/v3/clinical/tables?collection_id=nlst');
  assert.ok(nlst.tables.length > 0);
  assert.ok(nlst.tables.every((t) => t.collection_id === 'nlst'));
  assert.ok(nlst.tables.some((t) => t.table_name === CLIN));
  assert.equal(nlst.warnings, undefined);

  const typo = await json<{ tables: Obj[]; warnings?: string[] }>(withClin, '/v3/clinical/tables?collection_id=nlts');
  assert.deepEqual(typo.tables, []);
  assert.equal(typo.warnings?.length, 1);
  assert.match(typo.warnings![0]!, /'nlts'/);
  assert.match(typo.warnings![0]!, /'nlst'/);

  const all = await json<{ tables: Obj[] }>(withClin, '/v3/clinical/tables');
  const empty = await json<{ tables: Obj[] }>(withClin, '/v3/clinical/tables?collection_id=');
  assert.deepEqual(empty.tables, all.tables);

  const known = (await withClin.ctx.engine.rows(`SELECT collection_id FROM collections_index ORDER BY 1`)).map((r) => String(r.collection_id));
  const withTables = new Set(all.tables.map((t) => t.collection_id));
  const bare = known.find((c) => !withTables.has(c))!;
  const none = await json<{ tables: Obj[]; warnings?: string[] }>(withClin, `/v3/clinical/tables?collection_id=${bare}`);
  assert.deepEqual(none.tables, []);
  assert.match(none.warnings![0]!, /has no clinical tables/);

  const bad = await json<ErrorBody>(withClin, '/v3/clinical/tables?collection=nlst', 422);
  assert.match(bad.error.message, /collection_id/);
});

test('GET /v3/clinical/tables/{table} gives engine types, labels and coded values from clinical_index', async () => {
  const body = await json<{ name: string; description: string; columns: { name: string; type: string; label: string; values: Obj[] }[] }>(
    withClin,
    `/v3/clinical/tables/${CLIN}`,
  );
  assert.equal(body.name, `clinical.${CLIN}`);
  assert.match(body.description, /nlst/);
  assert.match(body.description, /dicom_patient_id = index\.PatientID/);
  // The public service's {name, type, description} (description = the label), with our members kept.
  for (const c of body.columns) assert.equal((c as unknown as { description: string }).description, c.label);
  assert.deepEqual(
    body.columns.map((c) => [c.name, c.type, c.label]),
    [
      ['dicom_patient_id', 'VARCHAR', 'Patient identifier'],
      ['age', 'BIGINT', 'Age at enrollment (years)'],
      ['stage', 'VARCHAR', 'Clinical stage'],
      ['notes', 'VARCHAR', ''],
    ],
  );
  const stage = body.columns.find((c) => c.name === 'stage')!;
  assert.deepEqual(stage.values, [
    { code: '1', description: 'Stage I' },
    { code: '2', description: 'Stage II' },
    { code: '3', description: 'Stage III' },
    { code: '9', description: 'Unknown' },
  ]);
  assert.deepEqual(body.columns.find((c) => c.name === 'notes')!.values, []);

  const qualified = await json<{ name: string }>(withClin, `/v3/clinical/tables/clinical.${CLIN}`);
  assert.equal(qualified.name, `clinical.${CLIN}`);

  const und = await json<{ columns: { name: string; label: string }[] }>(withClin, `/v3/clinical/tables/${UNDOCUMENTED}`);
  assert.deepEqual(
    und.columns.map((c) => [c.name, c.label]),
    [
      ['case_id', ''],
      ['value', ''],
    ],
  );
});

test('an unknown clinical table is a 404 with suggestions; a main table name points to /v3/tables', async () => {
  const typo = await json<ErrorBody>(withClin, '/v3/clinical/tables/idqs_test_cln', 404);
  assert.equal(typo.error.code, 'not_found');
  assert.match(typo.error.message, /'idqs_test_cln'/);
  assert.match(typo.error.message, new RegExp(`Did you mean '${CLIN}'`));
  assert.match(typo.error.message, /GET \/v3\/clinical\/tables/);

  const main = await json<ErrorBody>(withClin, '/v3/clinical/tables/index/rows', 404);
  assert.match(main.error.message, /GET \/v3\/tables\/index/);

  const absent = await json<ErrorBody>(withClin, `/v3/clinical/tables/${ABSENT}`, 404);
  assert.match(absent.error.message, new RegExp(`'${ABSENT}'`));
});

test('clinical rows: the default cap comes from config, max_rows is respected and truncated is exact', async () => {
  const n = Number((await withClin.ctx.engine.one(`SELECT count(*) AS n FROM clinical.${CLIN}`))!.n);
  assert.ok(n > CLIN_DEFAULT_ROWS + 2);
  const expected = await withClin.ctx.engine.rows(`SELECT * FROM clinical.${CLIN} ORDER BY dicom_patient_id, age, stage, notes`);

  const def = await json<{ columns: string[]; types: string[]; rows: Obj[]; row_count: number; truncated: boolean; max_rows: number }>(
    withClin,
    `/v3/clinical/tables/${CLIN}/rows`,
  );
  assert.deepEqual(Object.keys(def), ['columns', 'types', 'rows', 'row_count', 'truncated', 'max_rows']);
  assert.deepEqual(def.columns, ['dicom_patient_id', 'age', 'stage', 'notes']);
  assert.deepEqual(def.types, ['VARCHAR', 'BIGINT', 'VARCHAR', 'VARCHAR']);
  assert.equal(def.max_rows, CLIN_DEFAULT_ROWS);
  assert.equal(def.row_count, CLIN_DEFAULT_ROWS);
  assert.equal(def.truncated, true);
  assert.deepEqual(def.rows, expected.slice(0, CLIN_DEFAULT_ROWS));

  const five = await json<{ rows: Obj[]; row_count: number; truncated: boolean; max_rows: number }>(withClin, `/v3/clinical/tables/${CLIN}/rows?max_rows=5`);
  assert.equal(five.rows.length, 5);
  assert.equal(five.row_count, 5);
  assert.equal(five.truncated, true);
  assert.equal(five.max_rows, 5);
  assert.deepEqual(five.rows, expected.slice(0, 5));

  const exact = await json<{ rows: Obj[]; truncated: boolean }>(withClin, `/v3/clinical/tables/${CLIN}/rows?max_rows=${n}`);
  assert.equal(exact.rows.length, n);
  assert.equal(exact.truncated, false);
  assert.deepEqual(exact.rows, expected);
  const oneLess = await json<{ rows: Obj[]; truncated: boolean }>(withClin, `/v3/clinical/tables/${CLIN}/rows?max_rows=${n - 1}`);
  assert.equal(oneLess.rows.length, n - 1);
  assert.equal(oneLess.truncated, true);

  const qualified = await json<{ rows: Obj[] }>(withClin, `/v3/clinical/tables/clinical.${CLIN}/rows?max_rows=2`);
  assert.deepEqual(qualified.rows, expected.slice(0, 2));
});

test('clinical max_rows below 1 or not an integer is a 422 naming max_rows; above the cap it is lowered to it, with a warning', async () => {
  const cap = withClin.ctx.config.clinicalMaxRowsCap;
  for (const q of ['max_rows=0', 'max_rows=two', 'max_row=5']) {
    const body = await json<ErrorBody>(withClin, `/v3/clinical/tables/${CLIN}/rows?${q}`, 422);
    assert.equal(body.error.code, 'invalid_request');
    assert.match(body.error.message, /max_rows?/, q);
  }
  const expected = await withClin.ctx.engine.rows(`SELECT * FROM clinical.${CLIN} ORDER BY dicom_patient_id, age, stage, notes LIMIT ${cap}`);
  const above = await json<{ rows: Obj[]; max_rows: number; warnings: string[] }>(withClin, `/v3/clinical/tables/${CLIN}/rows?max_rows=${cap + 1}`);
  assert.equal(above.max_rows, cap);
  assert.deepEqual(above.rows, expected);
  assert.deepEqual(above.warnings, [`max_rows ${cap + 1} is above the cap of ${cap}; lowered to ${cap}.`]);
});

test('a build without clinical tables answers 404 on every clinical route, saying so', async () => {
  assert.deepEqual(noClin.ctx.catalog.clinicalTables, []);
  for (const path of ['/v3/clinical/tables', '/v3/clinical/tables?collection_id=nlst', '/v3/clinical/tables/anything', '/v3/clinical/tables/anything/rows']) {
    const body = await json<ErrorBody>(noClin, path, 404);
    assert.equal(body.error.code, 'not_found');
    assert.match(body.error.message, /no clinical tables/, path);
  }
  // The main catalog keeps working, and the default server agrees with its own catalog.
  const tables = await json<{ tables: Obj[] }>(noClin, '/v3/tables');
  assert.ok(tables.tables.some((t) => t.name === 'clinical_index'));
  const r = await s.get('/v3/clinical/tables');
  assert.equal(r.status, s.ctx.catalog.clinicalTables.length > 0 ? 200 : 404);
  await r.arrayBuffer();
});

test('table and clinical routes send an ETag and answer 304', async () => {
  for (const [srv, path] of [
    [s, '/v3/tables'],
    [s, '/v3/tables/index'],
    [withClin, `/v3/clinical/tables/${CLIN}/rows?max_rows=3`],
  ] as const) {
    const r = await srv.get(path);
    assert.equal(r.status, 200);
    const etag = r.headers.get('etag');
    assert.ok(etag);
    await r.arrayBuffer();
    const again = await srv.get(path, { 'if-none-match': etag });
    assert.equal(again.status, 304, path);
    await again.arrayBuffer();
  }
});

test('declared OpenAPI examples of the table and clinical routes answer what independent SQL says', async () => {
  for (const srv of [s, withClin]) {
    const doc = await json<{ paths: Record<string, { get?: { parameters?: { name: string; in: string; example?: unknown }[] } }> }>(srv, '/v3/openapi.json');
    // Both servers have clinical tables (the generated ones, and ours added to them): every example applies.
    assert.ok(srv.ctx.catalog.clinicalTables.length > 0);
    const paths = ['/v3/tables/{table}', '/v3/clinical/tables', '/v3/clinical/tables/{table}', '/v3/clinical/tables/{table}/rows'];
    for (const path of paths) {
      let url = path;
      const query: string[] = [];
      for (const p of doc.paths[path]!.get!.parameters ?? []) {
        assert.ok(p.example !== undefined, `${path} ${p.name} declares an example`);
        if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
        else query.push(`${p.name}=${encodeURIComponent(String(p.example))}`);
      }
      const target = url + (query.length ? `?${query.join('&')}` : '');
      const r = await srv.get(target);
      const text = await r.text();
      assert.equal(r.status, 200, `${url}: ${text}`);
      await V3_EXAMPLE_CHECKS[`get ${path}`]!(srv.ctx.engine, { url: new URL(target, srv.url), body: undefined, json: JSON.parse(text), text });
    }
  }
});
