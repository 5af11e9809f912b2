// npm run bench:full-metadata [-- --scale S]: the generated full metadata at a
// stated scale (default 0.02 of the real release; the real dicom_all is ~59 M
// instance rows), generated once into ~/.cache/idqs/bench/, then queried where
// it lies with DuckDB over the Parquet parts, as the server is to read them:
// an instance page of 1,000 rows of a collection, counts of CT slices thinner
// than 1 mm (one collection; the whole release), the instances of a
// 1,000-series cohort (first row and all), one series' instances as generated
// and from a copy sorted by SeriesInstanceUID (the row groups a lookup
// touches), the same questions over the table the build copies into the
// release's database (what caller SQL reads), the RSS these queries add and
// the sizes on disk. Prints a
// table; run it on a quiet machine (the load average is printed with it).

import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir, loadavg } from 'node:os';
import { join } from 'node:path';
import { build } from '../src/core/data/build.ts';
import { generate } from '../src/datagen/generate.ts';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const scale = Number(arg('scale', '0.02'));
const out = join(homedir(), '.cache', 'idqs', 'bench', `full-metadata-s${scale}`);
const rows: [string, string][] = [];
const say = (what: string, value: string) => {
  rows.push([what, value]);
  process.stderr.write(`${what}: ${value}\n`);
};

function du(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? du(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
}

if (!existsSync(join(out, 'dataset.json'))) {
  const t = Date.now();
  await generate({ scale, seed: 42, out, instances: true });
  say(`generate (scale ${scale}, all tables)`, `${((Date.now() - t) / 1000).toFixed(1)} s`);
}
const exp = join(out, 'bigquery_export', readdirSync(join(out, 'bigquery_export'))[0]!);
const glob = (t: string) => `read_parquet('${join(exp, t)}/*.parquet')`;
const inst = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '2GB' });
const c = await inst.connect();
const rss0 = process.memoryUsage().rss;
let peak = rss0;
const timed = async (what: string, sql: string, firstRow = false): Promise<unknown[][]> => {
  const t = Date.now();
  let result: unknown[][];
  if (firstRow) {
    const r = await c.stream(sql);
    const first = await r.fetchChunk();
    const tFirst = Date.now() - t;
    let n = first?.rowCount ?? 0;
    for (;;) {
      const ch = await r.fetchChunk();
      if (!ch || ch.rowCount === 0) break;
      n += ch.rowCount;
    }
    say(what, `first row ${tFirst} ms, all ${n} rows ${Date.now() - t} ms`);
    result = [];
  } else {
    result = (await c.runAndReadAll(sql)).getRows();
    say(what, `${Date.now() - t} ms (${JSON.stringify(result[0]?.map((v) => (typeof v === 'bigint' ? Number(v) : v)))})`);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return result;
};

const [[total]] = (await c.runAndReadAll(`SELECT count(*) FROM ${glob('dicom_all')}`)).getRows() as [[bigint]];
say('dicom_all rows (instances)', `${Number(total).toLocaleString('en')} (${(readdirSync(join(exp, 'dicom_all')).length)} parts)`);
const [[coll]] = (await c.runAndReadAll(`SELECT collection_id FROM ${glob('dicom_all')} WHERE Modality = 'CT' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`)).getRows() as [[string]];
await timed(`instance page, 1,000 rows of ${coll}`, `SELECT SOPInstanceUID, crdc_instance_uuid, instance_size, aws_url, gcs_url, SliceThickness FROM ${glob('dicom_all')} WHERE collection_id = '${coll}' LIMIT 1000`, true);
await timed(`count CT slices < 1 mm, ${coll}`, `SELECT count(*) FROM ${glob('dicom_all')} WHERE collection_id = '${coll}' AND Modality = 'CT' AND TRY_CAST(SliceThickness AS DOUBLE) < 1`);
await timed('count CT slices < 1 mm, whole release', `SELECT count(*) FROM ${glob('dicom_all')} WHERE Modality = 'CT' AND TRY_CAST(SliceThickness AS DOUBLE) < 1`);
await c.run(`CREATE TEMP TABLE cohort AS SELECT SeriesInstanceUID FROM read_parquet('${join(out, 'idc_index.parquet')}') WHERE Modality IN ('CT', 'MR') ORDER BY hash(SeriesInstanceUID) LIMIT 1000`);
await timed('instance manifest of a 1,000-series cohort', `SELECT SeriesInstanceUID, SOPInstanceUID, aws_url FROM ${glob('dicom_all')} WHERE SeriesInstanceUID IN (SELECT SeriesInstanceUID FROM cohort)`, true);
const [[one]] = (await c.runAndReadAll(`SELECT SeriesInstanceUID FROM cohort LIMIT 1`)).getRows() as [[string]];
await timed('one series, as generated', `SELECT count(*) FROM ${glob('dicom_all')} WHERE SeriesInstanceUID = '${one}'`);
const sorted = join(out, 'dicom_all-sorted');
if (!existsSync(sorted)) {
  const t = Date.now();
  await c.run(`COPY (SELECT * FROM ${glob('dicom_all')} ORDER BY SeriesInstanceUID) TO '${sorted}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 30720, FILE_SIZE_BYTES '8MB')`);
  say('rewrite sorted by SeriesInstanceUID', `${((Date.now() - t) / 1000).toFixed(1)} s`);
}
await timed('one series, sorted copy', `SELECT count(*) FROM read_parquet('${sorted}/*.parquet') WHERE SeriesInstanceUID = '${one}'`);
await timed('1,000-series cohort, sorted copy', `SELECT count(*) FROM read_parquet('${sorted}/*.parquet') WHERE SeriesInstanceUID IN (SELECT SeriesInstanceUID FROM cohort)`);
const groups = async (src: string) =>
  (await c.runAndReadAll(`SELECT count(*) FROM parquet_metadata(${src}) WHERE path_in_schema = 'SeriesInstanceUID' AND stats_min <= '${one}' AND stats_max >= '${one}'`)).getRows()[0]![0];
say('row groups whose SeriesInstanceUID range holds one series (as generated / sorted)', `${Number(await groups(`'${join(exp, 'dicom_all')}/*.parquet'`))} / ${Number(await groups(`'${sorted}/*.parquet'`))}`);
// The same questions over the table the build copies into the release's database (what caller SQL reads).
const dbFile = join(out, 'bench-release.duckdb');
const tb = Date.now();
const report = await build({ from: out, db: dbFile });
if (report.rebuilt) say('build of the release database, full metadata copied in', `${((Date.now() - tb) / 1000).toFixed(1)} s`);
await c.run(`ATTACH '${dbFile}' AS rel (READ_ONLY)`);
await timed('copied table: count CT slices < 1 mm, whole release', `SELECT count(*) FROM rel.dicom_all WHERE Modality = 'CT' AND TRY_CAST(SliceThickness AS DOUBLE) < 1`);
await timed(`copied table: instance page, 1,000 rows of ${coll}`, `SELECT SOPInstanceUID, crdc_instance_uuid, instance_size, aws_url, gcs_url, SliceThickness FROM rel.dicom_all WHERE collection_id = '${coll}' LIMIT 1000`, true);
await timed('copied table: instance manifest of a 1,000-series cohort', `SELECT SeriesInstanceUID, SOPInstanceUID, aws_url FROM rel.dicom_all WHERE SeriesInstanceUID IN (SELECT SeriesInstanceUID FROM cohort)`, true);
await timed('copied table: one series', `SELECT count(*) FROM rel.dicom_all WHERE SeriesInstanceUID = '${one}'`);
say('release database on disk (index, full metadata and the rest)', `${(statSync(dbFile).size / 1e6).toFixed(0)} MB`);
say('RSS added by these queries (peak)', `${((peak - rss0) / 1e6).toFixed(0)} MB`);
say('Parquet on disk: dicom_all / all five tables / whole dataset', `${(du(join(exp, 'dicom_all')) / 1e6).toFixed(0)} MB / ${(du(exp) / 1e6).toFixed(0)} MB / ${(du(out) / 1e6).toFixed(0)} MB`);
say('load average (1, 5, 15 min)', loadavg().map((x) => x.toFixed(2)).join(', '));
c.closeSync();
inst.closeSync();
process.stdout.write(`\n| measure (scale ${scale}) | value |\n|---|---|\n${rows.map(([a, b]) => `| ${a} | ${b} |`).join('\n')}\n`);
