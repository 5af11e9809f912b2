// Caller SQL at default settings on the pinned real release (the fourth
// audit): whole-release distinct counts and SUMMARIZE answer, again and again
// on the same workers, and a run of heavy queries leaves small ones answering;
// the kernel's cap of each worker sits above what its engine may use; a worker
// that ran out of memory is replaced before the next query. The server is
// `idqs serve` as a user runs it (the build, in a process of its own, with no
// caller-SQL setting in its environment). Answers are checked against DuckDB
// reading the release's Parquet file directly.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { lit } from '../src/core/data/sql.ts';
import { SKIP_REAL, pinnedRelease } from './real-releases.ts';
import { serveWithDefaults, type CliServer } from './serve-cli.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let server: CliServer;
let raw: DuckDBConnection;
const post = (path: string, body: unknown) => server.post(path, body);
/** The server's caller-SQL workers: its children that run the worker entry. */
const workerPids = () =>
  execFileSync('pgrep', ['-P', String(server.proc.pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number).filter((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('sql-worker'));

/** Rows of the independent SQL, with its BIGINT counts as numbers (as the service writes them). */
const oracle = async (sql: string) =>
  (await raw.runAndReadAll(sql)).getRowObjectsJS().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]))) as Json[];

async function sql(q: string): Promise<{ status: number; body: Json }> {
  const r = await post('/v3/sql', { sql: q, max_rows: 10_000 });
  return { status: r.status, body: (await r.json()) as Json };
}

before(async () => {
  if (SKIP_REAL) return;
  const rel = await pinnedRelease();
  const inst = await DuckDBInstance.create(':memory:');
  raw = await inst.connect();
  await raw.run(`CREATE VIEW idx AS SELECT * FROM read_parquet(${lit(join(rel.fetch.folder, 'idc_index.parquet'))})`);
  // Default settings: no IDQS_* variable reaches the server but its log level.
  server = await serveWithDefaults(rel.db);
});

after(async () => {
  await server?.stop();
});

const DISTINCT = [
  ['SELECT count(DISTINCT SeriesInstanceUID) AS n FROM index', 'SELECT count(DISTINCT SeriesInstanceUID) AS n FROM idx'],
  ['SELECT count(DISTINCT StudyInstanceUID) AS n FROM index', 'SELECT count(DISTINCT StudyInstanceUID) AS n FROM idx'],
  ['SELECT count(DISTINCT PatientID) AS n, count(DISTINCT crdc_series_uuid) AS u FROM index', 'SELECT count(DISTINCT PatientID) AS n, count(DISTINCT crdc_series_uuid) AS u FROM idx'],
  [
    'SELECT collection_id, count(DISTINCT PatientID) AS p, count(DISTINCT StudyInstanceUID) AS st, count(DISTINCT SeriesInstanceUID) AS se FROM index GROUP BY 1 ORDER BY 1',
    'SELECT collection_id, count(DISTINCT PatientID) AS p, count(DISTINCT StudyInstanceUID) AS st, count(DISTINCT SeriesInstanceUID) AS se FROM idx GROUP BY 1 ORDER BY 1',
  ],
] as const;

test('whole-release distinct counts answer at default settings, three times over on the same workers, equal to DuckDB over the Parquet', { skip: SKIP_REAL }, async () => {
  for (let round = 0; round < 3; round++) {
    for (const [ours, theirs] of DISTINCT) {
      const r = await sql(ours);
      assert.equal(r.status, 200, `round ${round + 1}: ${ours}: ${JSON.stringify(r.body).slice(0, 400)}`);
      assert.deepEqual(r.body.rows, await oracle(theirs), ours);
    }
  }
  // Two at once, as two researchers would.
  const both = await Promise.all(DISTINCT.slice(0, 2).map(([q]) => sql(q)));
  for (const [i, r] of both.entries()) {
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 400));
    assert.deepEqual(r.body.rows, await oracle(DISTINCT[i]![1]));
  }
});

test('SUMMARIZE of the whole index answers three times in a row: every column counted over every row', { skip: SKIP_REAL }, async () => {
  const [{ n }] = (await oracle('SELECT count(*)::INTEGER AS n FROM idx')) as [{ n: number }];
  const [{ lo, hi }] = (await oracle('SELECT min(SeriesInstanceUID) AS lo, max(SeriesInstanceUID) AS hi FROM idx')) as [{ lo: string; hi: string }];
  const columns = (await oracle('SELECT column_name FROM (DESCRIBE idx)')).map((x) => String(x.column_name));
  const schema = (await (await fetch(`${server.base}/v3/tables/index`)).json()) as { columns: { name: string }[] };
  const served = schema.columns.map((c) => c.name);
  for (let round = 0; round < 3; round++) {
    const r = await sql('SELECT * FROM (SUMMARIZE index)');
    assert.equal(r.status, 200, `round ${round + 1}: ${JSON.stringify(r.body).slice(0, 400)}`);
    const rows = r.body.rows as Json[];
    const summarised = rows.map((x) => String(x.column_name)).sort();
    assert.equal(new Set(summarised).size, summarised.length, 'each column once');
    // Every column of the release's file, and the service's derived ones (its schema lists them).
    assert.deepEqual(summarised, [...new Set([...columns, ...served])].sort());
    for (const row of rows) assert.equal(Number(row.count), n, `count of ${row.column_name}`);
    const series = rows.find((x) => x.column_name === 'SeriesInstanceUID');
    assert.deepEqual([series?.min, series?.max], [lo, hi], 'the smallest and largest SeriesInstanceUID');
  }
});

test('after a run of heavy queries, small queries keep answering (no worker kept near its cap)', { skip: SKIP_REAL }, async () => {
  const heavy = [...DISTINCT.map(([q]) => q), 'SELECT * FROM (SUMMARIZE index)', 'SELECT StudyInstanceUID, list(DISTINCT Modality) AS m, sum(series_size_MB) AS mb FROM index GROUP BY 1 ORDER BY mb DESC LIMIT 5'];
  for (const q of heavy) assert.equal((await sql(q)).status, 200, q);
  const small = [];
  for (let i = 0; i < 12; i++) small.push(await sql(`SELECT ${i} AS i`));
  assert.deepEqual(
    small.map((r) => [r.status, r.body.rows?.[0]?.i]),
    small.map((_, i) => [200, i]),
  );
});

test("each worker's kernel cap sits above what its runtime holds plus its engine's own memory limit", { skip: SKIP_REAL }, async () => {
  // The engine reports its own limit; the kernel reports the cap and what the process holds.
  const limit = await sql("SELECT current_setting('memory_limit') AS m");
  assert.equal(limit.status, 200);
  const m = /^([\d.]+) (KiB|MiB|GiB)$/.exec(String(limit.body.rows[0].m));
  assert.ok(m, `memory_limit ${limit.body.rows[0].m}`);
  const engineBytes = Number(m[1]) * 1024 ** (['KiB', 'MiB', 'GiB'].indexOf(m[2]!) + 1);
  const workers = workerPids();
  assert.ok(workers.length >= 1);
  for (const pid of workers) {
    const cap = Number(execFileSync('prlimit', ['--pid', String(pid), '--data', '--raw', '--noheadings', '--output=SOFT'], { encoding: 'utf8' }).trim());
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const vmData = Number(/^VmData:\s+(\d+)/m.exec(status)![1]) * 1024;
    assert.ok(cap > vmData + engineBytes, `cap ${cap} <= VmData ${vmData} + engine limit ${engineBytes}`);
  }
});
