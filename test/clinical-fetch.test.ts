// `idqs data fetch --tables all` brings the clinical tables of a release from
// a metadata bucket (here s3rver, laid out like s3://idc-open-metadata/
// bigquery_export/idc_v<N>_clinical/<table>/*.parquet, the Parquet files
// written by this test with DuckDB) beside the core tables (a local release
// server). Checked: the tables are served by /v3/clinical and clinical.<table>
// SQL with exactly the rows written here; a damaged or missing object names
// its table and the others are served; a fetch killed mid-table serves no part
// of that table and, repeated, resumes from the parts it had verified.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startServer, testDataset } from './fixture.ts';
import { makeReleaseLayout, startReleaseServer, TAG, type ReleaseServer } from './release-server.ts';
import { faultProxy, runCli, startCli, startS3, type S3Server } from './s3.ts';
import { lit } from './sql-text.ts';

const BUCKET = 'idc-open-metadata';
const PREFIX = `bigquery_export/idc_v${TAG.split('.')[0]}_clinical`;
let tmp: string;
let rel: ReleaseServer;
let s3: S3Server;
/** The Parquet files as written (the bucket's objects are links to them, except the damaged one). */
let src: string;
/** In the bucket without clinical_index: a collection a table is named after, and one whose patients a table holds. */
let named: string;
let byPatients: string;
const BUCKET_NO_INDEX = 'idc-open-metadata-no-index';


async function sqlRows(sql: string): Promise<Record<string, unknown>[]> {
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    c.closeSync();
    inst.closeSync();
  }
}

/** Rows of a table as this test wrote them, in the order the clinical routes use (dicom_patient_id, then every column). */
const written = (table: string, order: string) => sqlRows(`SELECT * FROM read_parquet(${lit(join(src, table, '*.parquet'))}) ORDER BY ${order}`);

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'idqs-clinical-fetch-'));
  const dataset = (await testDataset()).folder;
  await makeReleaseLayout(dataset, join(tmp, 'srv'));
  rel = await startReleaseServer(join(tmp, 'srv'));
  src = join(tmp, 'objects', 'meta', PREFIX);
  for (const t of ['clin_a', 'clin_b', 'clin_bad']) mkdirSync(join(src, t), { recursive: true });
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  const copy = (select: string, table: string, part: string) => c.run(`COPY (${select}) TO ${lit(join(src, table, part))} (FORMAT parquet)`);
  // clin_a in two parts, as BigQuery exports larger tables.
  await copy(`SELECT * FROM (VALUES ('P1', 61, 'IIA'), ('P2', 47, NULL), ('P3', 70, 'IV')) t(dicom_patient_id, age_at_diagnosis, stage)`, 'clin_a', '000000000000.parquet');
  await copy(`SELECT * FROM (VALUES ('P4', 55, 'IB'), ('P1', 62, 'IIB')) t(dicom_patient_id, age_at_diagnosis, stage)`, 'clin_a', '000000000001.parquet');
  await copy(`SELECT * FROM (VALUES ('Q1', true, 2.5::DOUBLE), ('Q2', false, NULL), ('Q3', true, 10.25::DOUBLE)) t(dicom_patient_id, smoker, pack_years)`, 'clin_b', '000000000000.parquet');
  await copy(`SELECT 'R' || i AS dicom_patient_id, i AS visit FROM range(200) r(i)`, 'clin_bad', '000000000000.parquet');
  // A second bucket without clinical_index: tables named after a collection, holding another collection's patients, and with no patients.
  const idx = lit(join(dataset, 'idc_index.parquet'));
  const picked = (await c.runAndReadAll(
    `SELECT collection_id FROM read_parquet(${idx}) GROUP BY 1 HAVING count(DISTINCT PatientID) >= 3 ORDER BY 1 LIMIT 2`,
  )).getRows().map((r) => String(r[0]));
  [named, byPatients] = picked as [string, string];
  const only = (coll: string) => `SELECT DISTINCT PatientID FROM read_parquet(${idx}) WHERE collection_id = ${lit(coll)} AND PatientID NOT IN (SELECT PatientID FROM read_parquet(${idx}) WHERE collection_id <> ${lit(coll)})`;
  const derive = join(tmp, 'objects', 'meta2', PREFIX);
  for (const t of [`${named}_clinical`, 'visits', 'notes']) mkdirSync(join(derive, t), { recursive: true });
  await c.run(`COPY (SELECT PatientID AS dicom_patient_id, 'IIA' AS stage FROM (${only(named)})) TO ${lit(join(derive, `${named}_clinical`, '000000000000.parquet'))} (FORMAT parquet)`);
  await c.run(`COPY (SELECT PatientID AS dicom_patient_id, 1 AS visit, 2.5 AS weight FROM (${only(byPatients)})) TO ${lit(join(derive, 'visits', '000000000000.parquet'))} (FORMAT parquet)`);
  await c.run(`COPY (SELECT 7 AS note_id, 'free text' AS note) TO ${lit(join(derive, 'notes', '000000000000.parquet'))} (FORMAT parquet)`);
  c.closeSync();
  inst.closeSync();
  // Something beside the tables that is not a table part: ignored.
  writeFileSync(join(tmp, 'objects', 'meta', PREFIX, 'README.txt'), 'not a table\n');
  const store = join(tmp, 's3data');
  s3 = await startS3(join(tmp, 'objects'), { [BUCKET]: 'meta', [BUCKET_NO_INDEX]: 'meta2' }, store);
  // Damage clin_bad in the store: same size, other bytes, the ETag of the original (a corrupted object).
  const obj = join(store, BUCKET, PREFIX, 'clin_bad', '000000000000.parquet._S3rver_object');
  const good = readFileSync(obj);
  rmSync(obj);
  writeFileSync(obj, Buffer.alloc(good.length, 0x41));
  writeFileSync(`${obj}.md5`, createHash('md5').update(good).digest('hex'));
});

after(async () => {
  await rel?.close();
  await s3?.close();
  rmSync(tmp, { recursive: true, force: true });
});

interface FetchOut {
  db: string;
  fetch: { folder: string; not_fetched: string[]; clinical: { tables: string[]; failed: { table: string; reason: string }[] } };
  build: { clinical: number; clinical_failed: { table: string; reason: string }[] };
}

const env = (cache: string, endpoint: string) => ({
  IDQS_CACHE_DIR: cache,
  IDQS_RELEASE_GCS_URL: `${rel.url}/gcs`,
  IDQS_METADATA_S3_ENDPOINT: endpoint,
  IDQS_METADATA_BUCKET: BUCKET,
  IDQS_FETCH_RETRY_BASE_MS: '10',
});
const fetchArgs = ['data', 'fetch', '--release', TAG, '--tables', 'all'];
/** The other spelling: the core tables and the clinical ones. */
const coreClinical = ['data', 'fetch', '--release', TAG, '--tables', 'core,clinical'];

test('fetch --tables all: the clinical tables are served by /v3/clinical and SQL with the rows written; a damaged object names its table', async () => {
  const cache = join(tmp, 'cache-1');
  const r = await runCli(fetchArgs, { env: env(cache, s3.url) });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as FetchOut;
  assert.deepEqual(out.fetch.clinical.tables, ['clin_a', 'clin_b', 'clin_bad']);
  assert.deepEqual(out.fetch.clinical.failed.map((f) => f.table), ['clin_bad']);
  assert.match(out.fetch.clinical.failed[0]!.reason, /MD5 differs from the ETag/);
  assert.ok(out.fetch.not_fetched.includes('clinical.clin_bad'));
  assert.deepEqual(out.build.clinical_failed.map((f) => f.table), ['clin_bad']);
  assert.equal(out.build.clinical, 2);
  // Progress lines (no terminal) and the warning naming the table.
  assert.match(r.stderr, /fetching 3 clinical tables \(4 objects\) from s3:\/\/idc-open-metadata\/bigquery_export\/idc_v24_clinical\//);
  assert.match(r.stderr, /fetch: clinical\/clin_a\/000000000001\.parquet /);
  assert.match(r.stderr, /warning: clinical table clin_bad not fetched: .*MD5 differs/);
  assert.ok(!existsSync(join(out.fetch.folder, 'clinical', 'clin_bad')), 'nothing of the damaged table is in the served folder');

  const srv = await startServer({}, out.db);
  try {
    const list = (await (await srv.get('/v3/clinical/tables')).json()) as { tables: { table_name: string; row_count: number }[] };
    const listed = new Map(list.tables.map((t) => [t.table_name, t.row_count]));
    assert.equal(listed.get('clin_a'), (await written('clin_a', 'ALL')).length);
    assert.equal(listed.get('clin_b'), (await written('clin_b', 'ALL')).length);
    assert.ok(!listed.has('clin_bad'));
    const cases: [string, string][] = [
      ['clin_a', 'dicom_patient_id, age_at_diagnosis, stage'],
      ['clin_b', 'dicom_patient_id, smoker, pack_years'],
    ];
    for (const [table, order] of cases) {
      const want = await written(table, order);
      const rows = (await (await srv.get(`/v3/clinical/tables/${table}/rows?max_rows=100`)).json()) as { rows: Record<string, unknown>[]; truncated: boolean };
      assert.equal(rows.truncated, false);
      assert.deepEqual(rows.rows, want, `${table} rows`);
      const q = await srv.post('/v3/sql', { sql: `SELECT * FROM clinical.${table} ORDER BY ${order}` });
      assert.equal(q.status, 200);
      assert.deepEqual(((await q.json()) as { rows: unknown[] }).rows, want, `clinical.${table} by SQL`);
    }
    const bad = await srv.post('/v3/sql', { sql: 'SELECT * FROM clinical.clin_bad' });
    assert.equal(bad.status, 400);
  } finally {
    await srv.close();
  }
  // Again: the tables fetched are kept as they are, the damaged one is tried again and still named.
  const again = await runCli(fetchArgs, { env: env(cache, s3.url) });
  assert.equal(again.code, 0, again.stderr);
  const out2 = JSON.parse(again.stdout) as FetchOut;
  assert.match(again.stderr, /fetch: clinical\/clin_a\/000000000000\.parquet unchanged, kept/);
  assert.match(again.stderr, /fetch: clinical\/clin_b\/000000000000\.parquet unchanged, kept/);
  assert.deepEqual(out2.fetch.clinical.failed.map((f) => f.table), ['clin_bad']);
  assert.deepEqual(out2.build.clinical_failed.map((f) => f.table), ['clin_bad']);
});

test('a fetch killed mid-table serves none of it; repeated, it resumes from the verified parts, and a missing object names its table', async () => {
  const cache = join(tmp, 'cache-2');
  const part1 = `/${BUCKET}/${PREFIX}/clin_a/000000000001.parquet`;
  const missing = `/${BUCKET}/${PREFIX}/clin_b/000000000000.parquet`;
  // First run: the second part of clin_a hangs after a few bytes; the process is killed there.
  const hang = await faultProxy(s3.url, (req) => (req.url === part1 ? { hangAfter: 40 } : null));
  const run = startCli(coreClinical, { env: env(cache, hang.url) });
  // A run that ends before reaching the hanging part fails the test (instead of waiting forever).
  const early = await Promise.race([hang.hung.then(() => null), run.done]);
  assert.equal(early, null, `the fetch ended before the hanging part: ${early?.stderr}`);
  run.child.kill('SIGKILL');
  await run.done;
  await hang.close();
  const folder = join(cache, 'releases', `${TAG}-gcs`);
  assert.ok(!existsSync(join(folder, 'clinical', 'clin_a')), 'half a table is never in the served folder');
  const staged = join(folder, '.clinical-partial', 'clin_a');
  assert.equal(statSync(join(staged, '000000000000.parquet')).size, statSync(join(src, 'clin_a', '000000000000.parquet')).size);

  // Repeated through a store that has lost clin_b's object (404).
  const proxy = await faultProxy(s3.url, (req) => (req.url === missing ? { status: 404 } : null));
  try {
    const r = await runCli(coreClinical, { env: env(cache, proxy.url) });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as FetchOut;
    assert.ok(existsSync(join(folder, 'clinical_index.parquet')) && !existsSync(join(folder, 'seg_index.parquet')), 'core,clinical: the dictionary comes too, other tables do not');
    assert.ok(!proxy.requests.includes(`GET /${BUCKET}/${PREFIX}/clin_a/000000000000.parquet`), 'the verified part is not downloaded again');
    assert.ok(proxy.requests.includes(`GET ${part1}`));
    assert.match(r.stderr, /fetch: clinical\/clin_a\/000000000000\.parquet unchanged, kept/);
    assert.deepEqual(out.fetch.clinical.failed.map((f) => f.table), ['clin_b', 'clin_bad']);
    assert.match(out.fetch.clinical.failed[0]!.reason, /404/);
    assert.ok(out.fetch.not_fetched.includes('clinical.clin_b'));
    assert.deepEqual(out.build.clinical_failed.map((f) => f.table).sort(), ['clin_b', 'clin_bad']);
    assert.deepEqual(readdirSync(join(folder, 'clinical')), ['clin_a']);
    assert.deepEqual(readdirSync(join(folder, 'clinical', 'clin_a')).sort(), ['000000000000.parquet', '000000000001.parquet']);
    assert.ok(!existsSync(staged), 'the finished table leaves no staged parts');
    const want = await written('clin_a', 'dicom_patient_id, age_at_diagnosis, stage');
    const got = await sqlRows(`SELECT * FROM read_parquet(${lit(join(folder, 'clinical', 'clin_a', '*.parquet'))}) ORDER BY dicom_patient_id, age_at_diagnosis, stage`);
    assert.deepEqual(got, want);
    const srv = await startServer({}, out.db);
    try {
      const rows = (await (await srv.get('/v3/clinical/tables/clin_a/rows?max_rows=100')).json()) as { rows: unknown[] };
      assert.deepEqual(rows.rows, want);
      assert.equal((await srv.get('/v3/clinical/tables/clin_b/rows')).status, 404);
    } finally {
      await srv.close();
    }
  } finally {
    await proxy.close();
  }
});

test('without clinical_index in the release files or the bucket, it is made from the tables fetched: each table, column and collection, served by /v3/clinical and SQL', async () => {
  const cache = join(tmp, 'cache-3');
  // The release files lack clinical_index (a 404, as for releases older than it).
  const hidden = [`/gcs/${TAG}/release_artifacts/clinical_index.parquet`, `/gcs/${TAG}/release_artifacts/clinical_index.parquet.sha256`];
  for (const h of hidden) rel.hidden.add(h);
  try {
    const r = await runCli(coreClinical, { env: { ...env(cache, s3.url), IDQS_METADATA_BUCKET: BUCKET_NO_INDEX } });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as FetchOut;
    assert.deepEqual(out.fetch.clinical.tables, ['notes', `${named}_clinical`, 'visits'].sort());
    assert.ok(!out.fetch.not_fetched.includes('clinical_index'), out.fetch.not_fetched.join(', '));
    assert.match(r.stderr, /warning: clinical_index is in neither the release files nor s3:\/\/idc-open-metadata-no-index\/bigquery_export\/idc_v24_clinical\/: made from the columns of the 3 clinical tables fetched/);
    const key = (x: unknown[]) => JSON.stringify(x);
    const srv = await startServer({}, out.db);
    try {
      const q = await srv.post('/v3/sql', { sql: 'SELECT short_table_name, "column", collection_id, table_name, column_label, len("values") AS n FROM clinical_index' });
      assert.equal(q.status, 200);
      // What was written: each table's columns and the collection it belongs to.
      const got = ((await q.json()) as { rows: Record<string, unknown>[] }).rows;
      assert.deepEqual(got.map((g) => key([g.short_table_name, g.column, g.collection_id])).sort(), [
        key([`${named}_clinical`, 'dicom_patient_id', named]), key([`${named}_clinical`, 'stage', named]),
        key(['notes', 'note', null]), key(['notes', 'note_id', null]),
        key(['visits', 'dicom_patient_id', byPatients]), key(['visits', 'visit', byPatients]), key(['visits', 'weight', byPatients]),
      ].sort());
      for (const g of got) {
        assert.equal(g.table_name, `bigquery-public-data.idc_v24_clinical.${g.short_table_name}`);
        assert.deepEqual([g.column_label, Number(g.n)], [null, 0]);
      }
      const list = (await (await srv.get('/v3/clinical/tables')).json()) as { tables: { table_name: string; collection_id: string | null; column_count: number; row_count: number }[] };
      const byName = new Map(list.tables.map((t) => [t.table_name, t]));
      assert.deepEqual([byName.get(`${named}_clinical`)?.collection_id, byName.get('visits')?.collection_id, byName.get('notes')?.collection_id], [named, byPatients, null]);
      assert.equal(byName.get('visits')?.column_count, 3);
      const derive = join(tmp, 'objects', 'meta2', PREFIX);
      assert.equal(byName.get('visits')?.row_count, (await sqlRows(`SELECT * FROM read_parquet(${lit(join(derive, 'visits', '*.parquet'))})`)).length);
      const schema = (await (await srv.get('/v3/clinical/tables/visits')).json()) as { columns: { name: string }[] };
      assert.deepEqual(schema.columns.map((c) => c.name), ['dicom_patient_id', 'visit', 'weight']);
      const rows = (await (await srv.get(`/v3/clinical/tables/${named}_clinical/rows?max_rows=1000`)).json()) as { rows: unknown[] };
      assert.deepEqual(rows.rows, await sqlRows(`SELECT * FROM read_parquet(${lit(join(derive, `${named}_clinical`, '*.parquet'))}) ORDER BY ALL`));
    } finally {
      await srv.close();
    }
  } finally {
    for (const h of hidden) rel.hidden.delete(h);
  }
});

test('a metadata endpoint that cannot be reached: the release is fetched and built, the warning names the endpoint and the settings for a mirror', async () => {
  const cache = join(tmp, 'cache-4');
  const r = await runCli(coreClinical, { env: env(cache, 'http://127.0.0.1:9') });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as FetchOut;
  assert.deepEqual(out.fetch.clinical.failed.map((f) => f.table), ['*']);
  assert.match(r.stderr, /warning: clinical tables not fetched: cannot list s3:\/\/idc-open-metadata\/bigquery_export\/idc_v24_clinical\/ at http:\/\/127\.0\.0\.1:9: .*ECONNREFUSED.*\(a mirror: IDQS_METADATA_S3_ENDPOINT, IDQS_METADATA_BUCKET\)/);
  const srv = await startServer({}, out.db);
  try {
    assert.equal((await srv.get('/v3/stats')).status, 200);
    assert.equal((await srv.get('/v3/clinical/tables')).status, 404);
  } finally {
    await srv.close();
  }
});

test('a release fetched as the wheel gets its clinical tables into its own folder (--source pypi --tables clinical): served with a clinical_index made from them; repeated, nothing is downloaded again', async () => {
  const cache = join(tmp, 'cache-5');
  const args = ['data', 'fetch', '--release', TAG, '--source', 'pypi', '--tables', 'clinical'];
  const pypiEnv = { ...env(cache, s3.url), IDQS_PYPI_INDEX: `${rel.url}/pypi/simple` };
  const r = await runCli(args, { env: pypiEnv });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as FetchOut;
  assert.equal(out.fetch.folder, join(cache, 'releases', `${TAG}-pypi`));
  assert.deepEqual(out.fetch.clinical.tables, ['clin_a', 'clin_b', 'clin_bad']);
  assert.deepEqual(out.fetch.clinical.failed.map((f) => f.table), ['clin_bad']);
  assert.ok(!out.fetch.not_fetched.includes('clinical_index') && out.fetch.not_fetched.includes('clinical.clin_bad'), out.fetch.not_fetched.join(', '));
  assert.doesNotMatch(r.stderr, /need --source gcs or github/);
  const srv = await startServer({}, out.db);
  try {
    const list = (await (await srv.get('/v3/clinical/tables')).json()) as { tables: { table_name: string; row_count: number }[] };
    assert.deepEqual(list.tables.map((t) => [t.table_name, t.row_count]), [['clin_a', (await written('clin_a', 'ALL')).length], ['clin_b', (await written('clin_b', 'ALL')).length]]);
    const want = await written('clin_b', 'dicom_patient_id, smoker, pack_years');
    const rows = (await (await srv.get('/v3/clinical/tables/clin_b/rows?max_rows=100')).json()) as { rows: unknown[] };
    assert.deepEqual(rows.rows, want);
    const dict = await srv.post('/v3/sql', { sql: 'SELECT short_table_name, "column" FROM clinical_index ORDER BY 1, 2' });
    assert.deepEqual(((await dict.json()) as { rows: { short_table_name: string; column: string }[] }).rows.map((x) => `${x.short_table_name}.${x.column}`), [
      'clin_a.age_at_diagnosis', 'clin_a.dicom_patient_id', 'clin_a.stage', 'clin_b.dicom_patient_id', 'clin_b.pack_years', 'clin_b.smoker',
    ]);
  } finally {
    await srv.close();
  }
  // Again: the wheel is not downloaded again, the tables fetched are kept.
  const before = rel.requests.length;
  const again = await runCli(args, { env: pypiEnv });
  assert.equal(again.code, 0, again.stderr);
  assert.ok(!rel.requests.slice(before).some((q) => q.path.includes('/files/')), 'the wheel is not downloaded again');
  assert.match(again.stderr, /fetch: clinical\/clin_a\/000000000000\.parquet unchanged, kept/);
});
