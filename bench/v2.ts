// npm run bench:v2 — /v2 manifest previews over HTTP on loopback, against a
// server process over a scale-0.2 database with the instance table (about
// ten million instances; generated and built once into the cache):
//   * first page at series and at instance granularity: p50 / p99 over
//     repeated requests (target: series p50 under 300 ms);
//   * paging a manifest of about 1,000,000 instance rows to the end with
//     next_page, at several page sizes: rows per second (target >= 50,000),
//     also with the result cache disabled (what a replica that did not serve
//     the first page does).
// Options: --scale S (default 0.2), --runs N first-page requests (default 30).

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCacheDir } from '../src/config.ts';
import { build } from '../src/core/data/build.ts';
import { generate } from '../src/datagen/generate.ts';
import { GENERATOR_VERSION } from '../src/datagen/dataset.ts';
import { spawnServer } from './server.ts';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const scale = arg('scale', 0.2);
const runs = arg('runs', 30);
const PREVIEW = '/v2/cohorts/manifest/preview';

async function ensureDb(): Promise<string> {
  const dir = join(defaultCacheDir(), 'bench', `synthetic-g${GENERATOR_VERSION}-s${scale}-seed42-full`);
  const db = join(dir, 'bench.duckdb');
  if (!existsSync(join(dir, 'data', 'dataset.json'))) {
    mkdirSync(dir, { recursive: true });
    process.stderr.write(`generating scale ${scale} with instances (about a minute) ...\n`);
    await generate({ scale, seed: 42, out: join(dir, 'data'), instances: true });
  }
  const r = await build({ from: join(dir, 'data'), db });
  if (r.rebuilt) process.stderr.write(`built ${db} in ${r.seconds.toFixed(1)} s\n`);
  return db;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function post(base: string, path: string, body: unknown): Promise<Json> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = (await r.json()) as Json;
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
  return j;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

/** p50/p99 of the first page over `runs` requests cycling through `bodies` (after one warm-up each). */
async function firstPage(base: string, bodies: Json[]): Promise<{ p50: number; p99: number; rows: number[] }> {
  for (const b of bodies) await post(base, PREVIEW, b);
  const t: number[] = [];
  const rows = bodies.map(() => 0);
  for (let i = 0; i < runs; i++) {
    const k = i % bodies.length;
    const t0 = performance.now();
    const j = await post(base, PREVIEW, bodies[k]);
    t.push(performance.now() - t0);
    rows[k] = j.manifest.totalFound;
  }
  return { p50: pct(t, 50), p99: pct(t, 99), rows };
}

/** Page a manifest to the end; rows per second over the whole walk (first page included). */
async function pageAll(base: string, body: Json, pageSize: number): Promise<{ rows: number; seconds: number; pages: number }> {
  const t0 = performance.now();
  let j = await post(base, PREVIEW, { ...body, page_size: pageSize });
  let rows = j.manifest.rowsReturned as number;
  let pages = 1;
  const total = j.manifest.totalFound as number;
  while (j.next_page) {
    j = await post(base, `${PREVIEW}/nextPage`, { next_page: j.next_page });
    rows += j.manifest.rowsReturned;
    pages++;
  }
  const seconds = (performance.now() - t0) / 1000;
  if (rows !== total) throw new Error(`paged ${rows} rows of ${total}`);
  return { rows, seconds, pages };
}

async function main() {
  const db = await ensureDb();
  const main = await spawnServer(db, { IDQS_V2_DEADLINE_MS: '600000' });
  const bare = await spawnServer(db, { IDQS_V2_DEADLINE_MS: '600000', IDQS_V2_CACHE_MB: '0' });
  try {
    const seriesFields = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID'];
    const seriesBodies = [
      { cohort_def: { filters: { Modality: ['CT', 'MR'] } }, fields: seriesFields, counts: true, group_size: true },
      { cohort_def: { filters: { collection_id: ['nlst'] } }, fields: seriesFields, counts: true },
      { cohort_def: { filters: { BodyPartExamined: ['chest', 'lung'], SliceThickness_ebtwe: [1, 3] } }, fields: ['SeriesInstanceUID', 'Modality'], counts: true, group_size: true },
      { cohort_def: { filters: {} }, fields: ['SeriesInstanceUID'], counts: true },
    ];
    const studyBodies = [
      { cohort_def: { filters: { Modality: ['CT'] } }, fields: ['collection_id', 'PatientID', 'StudyInstanceUID'], counts: true, group_size: true },
      { cohort_def: { filters: { collection_id: ['tcga%'] } }, fields: ['PatientID', 'StudyInstanceUID'], counts: true },
    ];
    const instanceBodies = [
      { cohort_def: { filters: { collection_id: ['nlst'] } }, fields: ['SOPInstanceUID'] },
      { cohort_def: { filters: { Modality: ['MR'] } }, fields: ['SeriesInstanceUID', 'SOPInstanceUID', 'cloud1_url'] },
    ];

    // A manifest of about a million instance rows: whole collections, largest that fit first.
    const sizes = (await post(main.base, PREVIEW, { cohort_def: {}, fields: ['collection_id'], counts: true, page_size: 50000 })).manifest.manifest_data as Json[];
    sizes.sort((a, b) => b.instance_count - a.instance_count);
    const picked: string[] = [];
    let n = 0;
    for (const c of sizes) {
      if (n + c.instance_count <= 1_050_000) {
        picked.push(c.collection_id);
        n += c.instance_count;
      }
      if (n >= 950_000) break;
    }
    const million = { cohort_def: { filters: { collection_id: picked } }, fields: ['SeriesInstanceUID', 'SOPInstanceUID', 'cloud1_url'] };

    const instances = (await post(main.base, PREVIEW, { cohort_def: {}, fields: [], counts: true })).manifest.manifest_data[0].instance_count;
    console.log(`\nbench:v2 at scale ${scale}: ${instances.toLocaleString('en-US')} instances; ${runs} first-page requests per granularity (default page size 1000), loopback\n`);

    console.log('| first page | manifest rows (per body) | p50 ms | p99 ms |');
    console.log('|---|---|---|---|');
    for (const [name, bodies] of [
      ['series', seriesBodies],
      ['study', studyBodies],
      ['instance', instanceBodies],
    ] as const) {
      const r = await firstPage(main.base, bodies as unknown as Json[]);
      console.log(`| ${name} | ${r.rows.map((x) => x.toLocaleString('en-US')).join(' / ')} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} |`);
      if (name === 'series') console.log(`|  target: series p50 < 300 ms | | ${r.p50 < 300 ? 'met' : 'MISSED'} | |`);
    }

    console.log(`\nPaging ${n.toLocaleString('en-US')} instance rows (${picked.length} collections) to the end, fields SeriesInstanceUID, SOPInstanceUID, cloud1_url:\n`);
    console.log('| server | page size | pages | seconds | rows/s |');
    console.log('|---|---|---|---|---|');
    let best1000 = 0;
    for (const size of [1000, 10000, 50000]) {
      const r = await pageAll(main.base, million, size);
      const rps = r.rows / r.seconds;
      if (size === 1000) best1000 = rps;
      console.log(`| result cache on | ${size} | ${r.pages} | ${r.seconds.toFixed(1)} | ${Math.round(rps).toLocaleString('en-US')} |`);
    }
    for (const size of [50000]) {
      const r = await pageAll(bare.base, million, size);
      console.log(`| no result cache (keyset queries) | ${size} | ${r.pages} | ${r.seconds.toFixed(1)} | ${Math.round(r.rows / r.seconds).toLocaleString('en-US')} |`);
    }
    console.log('\nThe first walk includes materializing the manifest (at its second page); later walks of the same query reuse it, as another client paging the same cohort would. The server without result cache reads every page with its keyset query.');
    console.log(`\ntarget: paging >= 50,000 rows/s at the default page size: ${best1000 >= 50000 ? 'met' : 'MISSED'} (${Math.round(best1000).toLocaleString('en-US')} rows/s)`);
  } finally {
    main.proc.kill();
    bare.proc.kill();
  }
}

await main();
