// npm run bench:trino [-- --scale S] [--workers 1,2]: the embedded DuckDB
// against a real Trino cluster (deploy/trino/cluster.sh: one coordinator and
// N workers on this host) over the same generated release, full metadata
// included (the dataset of bench:full-metadata, generated once into
// ~/.cache/idqs/bench/). For each engine: the heaviest questions of the
// full-metadata benchmark and a few of the series index, each the median of
// three runs after a first, and the peak resident memory of each process; for
// Trino, the cluster's start time. Then the overhead of Trino on a small
// question: /v3/cohort/counts requests of `idqs serve` routed to Trino
// (cohort index off) against the same request answered by DuckDB. Prints a
// table with the load average; numbers, not assertions.

import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir, loadavg } from 'node:os';
import { join } from 'node:path';
import { build } from '../src/core/data/build.ts';
import { runTrino } from '../src/core/engine/trino/client.ts';
import { generate } from '../src/datagen/generate.ts';
import { startTrinoCluster } from '../test/trino-cluster.ts';
import { spawnServer } from './server.ts';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const scale = Number(arg('scale', '0.02'));
const workerCounts = arg('workers', '1,2').split(',').map(Number);
const PORT = 18450;
const out = join(homedir(), '.cache', 'idqs', 'bench', `full-metadata-s${scale}`);
const log = (s: string) => process.stderr.write(`${s}\n`);

if (!existsSync(join(out, 'dataset.json'))) {
  log(`generating scale ${scale} with the full metadata into ${out} ...`);
  await generate({ scale, seed: 42, out, instances: true });
}
const exportDir = join(out, 'bigquery_export', readdirSync(join(out, 'bigquery_export'))[0]!);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Questions in the SQL both engines read alike; {cohort} is a fixed list of 1,000 series UIDs. */
const QUESTIONS: [string, string][] = [
  ['series index: series, size and patients by collection and modality', 'SELECT collection_id, Modality, count(*) AS series, sum(series_size_MB) AS mb, count(DISTINCT PatientID) AS patients FROM "index" GROUP BY 1, 2'],
  ['series index: distinct studies and patients', 'SELECT count(DISTINCT StudyInstanceUID) AS studies, count(DISTINCT PatientID) AS patients FROM "index"'],
  ['dicom_all: count of CT slices < 1 mm, whole release', "SELECT count(*) AS n FROM dicom_all WHERE Modality = 'CT' AND TRY_CAST(SliceThickness AS DOUBLE) < 1"],
  ['dicom_all: instances and bytes by collection', 'SELECT collection_id, count(*) AS n, sum(instance_size) AS bytes FROM dicom_all GROUP BY 1'],
  ['dicom_all: instance manifest of a 1,000-series cohort', 'SELECT SeriesInstanceUID, SOPInstanceUID, aws_url FROM dicom_all WHERE SeriesInstanceUID IN ({cohort})'],
  ['dicom_all join index: instances of CT series of one manufacturer', "SELECT count(*) AS n FROM dicom_all d JOIN \"index\" i ON d.SeriesInstanceUID = i.SeriesInstanceUID WHERE i.Modality = 'CT' AND i.Manufacturer = (SELECT Manufacturer FROM \"index\" WHERE Modality = 'CT' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1)"],
];

const duck = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '2GB' });
const c = await duck.connect();
await c.run(`CREATE VIEW "index" AS SELECT * FROM read_parquet('${join(out, 'idc_index.parquet')}')`);
await c.run(`CREATE VIEW dicom_all AS SELECT * FROM read_parquet('${join(exportDir, 'dicom_all')}/*.parquet')`);
const cohortUids = (await c.runAndReadAll(`SELECT SeriesInstanceUID FROM "index" WHERE Modality IN ('CT', 'MR') ORDER BY hash(SeriesInstanceUID) LIMIT 1000`)).getRows().map((r) => `'${String(r[0])}'`);
const sqlOf = (q: string) => q.replace('{cohort}', cohortUids.join(', '));
const [[instances]] = (await c.runAndReadAll('SELECT count(*) FROM dicom_all')).getRows() as [[bigint]];
log(`dataset: scale ${scale}, ${Number(instances).toLocaleString('en')} instance rows`);

/** Each question: first run, then the median of three; the row count as a check that both engines agree. */
async function timeAll(run: (sql: string) => Promise<number>): Promise<{ first: number; median: number; rows: number }[]> {
  const res = [];
  for (const [name, q] of QUESTIONS) {
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < 4; i++) {
      const t = performance.now();
      rows = await run(sqlOf(q));
      times.push(performance.now() - t);
    }
    log(`  ${name}: first ${times[0]!.toFixed(0)} ms, median ${median(times.slice(1)).toFixed(0)} ms, ${rows} rows`);
    res.push({ first: times[0]!, median: median(times.slice(1)), rows });
  }
  return res;
}

const rssOf = (pid: number, field: 'VmHWM' | 'VmRSS') => {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};

log('embedded DuckDB (threads 2, memory_limit 2GB):');
const duckRss0 = rssOf(process.pid, 'VmRSS');
const columns: { engine: string; times: { first: number; median: number; rows: number }[]; memory: string; start: string }[] = [];
columns.push({
  engine: 'DuckDB (embedded)',
  times: await timeAll(async (sql) => (await c.runAndReadAll(sql)).currentRowCount),
  memory: `${(rssOf(process.pid, 'VmHWM') - duckRss0).toFixed(0)} MB over the process's ${duckRss0.toFixed(0)} MB`,
  start: '-',
});

// The small question's overhead: the series-level database of this dataset, served twice (index off).
const db = join(out, 'bench.duckdb');
await build({ from: out, db });
// A different filter each time (one modality, one collection), so no answer cache can serve it.
const smallFilters = (await c.runAndReadAll('SELECT Modality, collection_id FROM "index" GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 10')).getRows().map(([m, coll]) => JSON.stringify({ terms: { Modality: [String(m)], collection_id: [String(coll)] } }));
async function countsMs(base: string): Promise<number> {
  const ask = (body: string) => fetch(`${base}/v3/cohort/counts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.text());
  await ask(JSON.stringify({ terms: {} }));
  const ts: number[] = [];
  for (const body of smallFilters) {
    const t = performance.now();
    await ask(body);
    ts.push(performance.now() - t);
  }
  return median(ts);
}
const overhead: [string, number][] = [];
{
  const s = await spawnServer(db, { IDQS_COHORT_INDEX: 'off' });
  overhead.push(['counts request, DuckDB', await countsMs(s.base)]);
  s.proc.kill('SIGTERM');
}

const home = process.env.IDQS_TRINO_HOME ?? join(homedir(), '.cache', 'idqs-trino');
for (const n of workerCounts) {
  log(`Trino, 1 coordinator + ${n} worker(s): starting ...`);
  const cluster = await startTrinoCluster(out, PORT, n);
  try {
    const target = { url: cluster.url, catalog: 'idqs', schema: 'main', user: 'idqs' };
    const times = await timeAll(async (sql) => (await runTrino(target, sql)).rows.length);
    const pids = ['coordinator', ...Array.from({ length: n }, (_, i) => `worker${i + 1}`)].map((name) => [name, Number(readFileSync(join(home, `cluster-${PORT}`, name, 'launcher.pid'), 'utf8'))] as const);
    columns.push({
      engine: `Trino, ${n} worker${n > 1 ? 's' : ''}`,
      times,
      memory: pids.map(([name, pid]) => `${name} ${rssOf(pid, 'VmHWM').toFixed(0)} MB`).join(', '),
      start: `${cluster.startS.toFixed(0)} s`,
    });
    const s = await spawnServer(db, { IDQS_COHORT_INDEX: 'off', IDQS_TRINO_URL: cluster.url });
    overhead.push([`counts request, Trino (${n} worker${n > 1 ? 's' : ''})`, await countsMs(s.base)]);
    s.proc.kill('SIGTERM');
  } finally {
    await cluster.stop();
  }
}
c.closeSync();
duck.closeSync();

const lines = [
  `\nbench:trino, scale ${scale} (${Number(instances).toLocaleString('en')} instances), load average ${loadavg().map((x) => x.toFixed(2)).join(', ')}`,
  `| question (median of 3 after a first run, ms) | ${columns.map((k) => k.engine).join(' | ')} |`,
  `|---|${columns.map(() => '---').join('|')}|`,
  ...QUESTIONS.map(([name], i) => `| ${name} | ${columns.map((k) => `${k.times[i]!.median.toFixed(0)} (first ${k.times[i]!.first.toFixed(0)}; ${k.times[i]!.rows} rows)`).join(' | ')} |`),
  `| peak resident memory | ${columns.map((k) => k.memory).join(' | ')} |`,
  `| cluster start | ${columns.map((k) => k.start).join(' | ')} |`,
  '',
  '| small question through idqs serve (median of 10 filters, ms) | |',
  '|---|---|',
  ...overhead.map(([w, ms]) => `| ${w} | ${ms.toFixed(1)} |`),
];
process.stdout.write(lines.join('\n') + '\n');
