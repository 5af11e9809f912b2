// The full metadata through caller SQL: the test dataset's generated export
// (bigquery_export/idc_v<N>/<table>/*.parquet) is loaded by the build, so
// /v3/sql, the MCP tool and the schema routes see dicom_all and the other
// tables. Every answer is compared with DuckDB reading the Parquet parts
// directly in the test; on the real release, which has no export fetched, the
// same SQL says which command fetches the table.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, testDataset, type TestServer } from './fixture.ts';
import { pinnedRelease, PIN } from './real-releases.ts';

let s: TestServer;
let raw: DuckDBConnection;
let exportDir: string;
let folder: string;
before(async () => {
  const d = await testDataset();
  folder = d.folder;
  const root = join(folder, 'bigquery_export');
  exportDir = join(root, readdirSync(root).filter((n) => /^idc_v\d+$/.test(n))[0]!);
  s = await startServer();
  raw = await (await DuckDBInstance.create(':memory:')).connect();
});
after(async () => {
  await s?.close();
  raw?.closeSync();
});

const parts = (t: string) => `read_parquet('${join(exportDir, t, '*.parquet')}', union_by_name = true)`;
const rows = async (sql: string) => (await raw.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];

async function sql(q: string): Promise<{ status: number; rows: Record<string, unknown>[]; message: string }> {
  const r = await s.post('/v3/sql', { sql: q, max_rows: 10_000 });
  const b = (await r.json()) as { rows?: Record<string, unknown>[]; error?: { message: string } };
  return { status: r.status, rows: b.rows ?? [], message: b.error?.message ?? '' };
}

test('the tables of the export are tables of the release: listed with their descriptions, their columns described, every row there', async () => {
  const folders = readdirSync(exportDir).filter((t) => existsSync(join(exportDir, t)) && readdirSync(join(exportDir, t)).some((f) => f.endsWith('.parquet')));
  assert.ok(folders.includes('dicom_all') && folders.length >= 3, folders.join(', '));
  const listed = ((await (await s.get('/v3/tables')).json()) as { tables: { name: string; description: string; column_count: number }[] }).tables;
  for (const t of folders) {
    const entry = listed.find((x) => x.name === t);
    assert.ok(entry, `${t} is listed`);
    assert.ok(entry.description.length > 20, `${t} has a description`);
    const [n] = await rows(`SELECT count(*)::INTEGER AS n FROM ${parts(t)}`);
    const got = await sql(`SELECT count(*)::INTEGER AS n FROM ${t}`);
    assert.equal(got.status, 200, got.message);
    assert.equal(got.rows[0]!.n, n!.n, `${t}: every row`);
    const cols = await rows(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${parts(t)})`);
    assert.equal(entry.column_count, cols.length, `${t}: every column`);
  }
  const schema = (await (await s.get('/v3/tables/dicom_all')).json()) as { columns: { name: string; description: string }[] };
  const sop = schema.columns.find((c) => c.name === 'SOPInstanceUID');
  assert.match(sop?.description ?? '', /one row per instance/);
});

test('instance-level questions by SQL: thin CT slices per collection, instances and bytes of one collection joined with index, as DuckDB over the Parquet says', async () => {
  const thin = `SELECT collection_id, count(*)::INTEGER AS n FROM %T WHERE Modality = 'CT' AND TRY_CAST(SliceThickness AS DOUBLE) < 1 GROUP BY 1 ORDER BY 1`;
  const want = await rows(thin.replace('%T', parts('dicom_all')));
  const got = await sql(thin.replace('%T', 'dicom_all'));
  assert.equal(got.status, 200, got.message);
  assert.deepEqual(got.rows, want);
  assert.ok(want.length > 0, 'some CT slices are thinner than 1 mm');
  const [c] = await rows(`SELECT collection_id AS c FROM ${parts('dicom_all')} GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
  const join_ = (d: string, i: string) =>
    `SELECT i.Modality, count(*)::INTEGER AS instances, sum(d.instance_size)::BIGINT AS bytes FROM ${d} d JOIN ${i} i ON i.SeriesInstanceUID = d.SeriesInstanceUID
     WHERE d.collection_id = '${String(c!.c)}' GROUP BY 1 ORDER BY 1`;
  const joined = await rows(join_(parts('dicom_all'), `read_parquet('${join(folder, 'idc_index.parquet')}')`));
  const mine = await sql(join_('dicom_all', 'index'));
  assert.equal(mine.status, 200, mine.message);
  assert.deepEqual(mine.rows.map((r) => ({ ...r, bytes: Number(r.bytes) })), joined.map((r) => ({ ...r, bytes: Number(r.bytes) })));
  // The instances of each series add up to the index's instanceCount (the generator's promise, the build's to keep).
  const off = await sql(`SELECT count(*)::INTEGER AS n FROM index i JOIN (SELECT SeriesInstanceUID, count(*) AS k FROM dicom_all GROUP BY 1) d USING (SeriesInstanceUID) WHERE d.k <> i.instanceCount`);
  assert.deepEqual(off.rows, [{ n: 0 }]);
});

test('the MCP run_sql tool reads the same table', async () => {
  const mcp = new Client({ name: 'full-metadata-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const q = `SELECT SegmentationType, count(*)::INTEGER AS n FROM segmentations GROUP BY 1 ORDER BY 1`;
    const r = (await mcp.callTool({ name: 'run_sql', arguments: { sql: q } })) as unknown as { isError?: boolean; structuredContent: { rows: unknown[] } };
    assert.ok(!r.isError, JSON.stringify(r).slice(0, 300));
    const want = await rows(q.replace('segmentations', parts('segmentations')));
    assert.deepEqual(r.structuredContent.rows, want);
  } finally {
    await mcp.close();
  }
});

test('on the real release, which has no export fetched: SQL on dicom_all and its schema say which command fetches it', async () => {
  const rel = await pinnedRelease();
  const real = await startServer({}, rel.db);
  try {
    const r = await real.post('/v3/sql', { sql: 'SELECT count(*) FROM dicom_all' });
    const b = (await r.json()) as { error: { message: string } };
    assert.equal(r.status, 400, JSON.stringify(b));
    assert.match(b.error.message, new RegExp(`full metadata.*idqs data fetch --release ${PIN.release.replaceAll('.', '\\.')} --source ${PIN.source} --tables dicom_all`));
    const schema = await real.get('/v3/tables/segmentations');
    assert.equal(schema.status, 503);
    assert.match(((await schema.json()) as { error: { message: string } }).error.message, /--tables segmentations/);
  } finally {
    await real.close();
  }
});
