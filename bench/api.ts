// npm run bench:api — HTTP load on loopback with autocannon against a server
// process over a scale-1.0 database (generated and built once into the cache),
// compared in the same run with the engine's own time for the same SQL:
//   * per endpoint: p50, p99, requests/s;
//   * counts and a manifest page: HTTP latency / in-process engine time (target <= 1.25);
//   * /v3/version requests/s (target >= 15,000);
//   * manifest.txt of 100,000 URLs vs the engine exporting the same URLs (target >= 80%);
//   * p99 of counts while 4 hostile SQL queries run vs idle (target <= 3x).
// Options: --scale S (default 1.0), --duration SECONDS per endpoint (default 8).

import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { defaultCacheDir, loadConfig } from '../src/config.ts';
import { createContext } from '../src/core/context.ts';
import { build } from '../src/core/data/build.ts';
import { generate } from '../src/datagen/generate.ts';
import { GENERATOR_VERSION } from '../src/datagen/dataset.ts';
import { compileFilter } from '../src/core/filters/v3.ts';
import { freePort, spawnServer } from './server.ts';
import { COUNTS_SELECT } from '../src/core/services/version.ts';
import { manifestQueries } from '../src/core/services/cohort.ts';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const scale = arg('scale', 1.0);
const duration = arg('duration', 8);
const root = fileURLToPath(new URL('..', import.meta.url));

async function ensureDb(): Promise<string> {
  const dir = join(defaultCacheDir(), 'bench', `synthetic-g${GENERATOR_VERSION}-s${scale}-seed42-series`);
  const db = join(dir, 'bench.duckdb');
  if (!existsSync(join(dir, 'data', 'dataset.json'))) {
    mkdirSync(dir, { recursive: true });
    process.stderr.write(`generating scale ${scale} (series-level) ...\n`);
    await generate({ scale, seed: 42, out: join(dir, 'data'), instances: false });
  }
  const r = await build({ from: join(dir, 'data'), db });
  if (r.rebuilt) process.stderr.write(`built ${db} in ${r.seconds.toFixed(1)} s\n`);
  return db;
}

/** POST a JSON body and count the newlines of the response as it arrives. */
function postCountingLines(url: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let n = 0;
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
      });
      res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`manifest.txt ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timeIt(n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn();
  const t: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

interface Load {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  body?: unknown;
  connections?: number;
}

async function load(base: string, l: Load, seconds = duration) {
  const r = await autocannon({
    url: base + l.path,
    method: l.method ?? 'GET',
    connections: l.connections ?? 8,
    duration: seconds,
    headers: l.body ? { 'content-type': 'application/json' } : {},
    body: l.body ? JSON.stringify(l.body) : undefined,
  });
  return { p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, errors: r.errors + r.non2xx };
}

async function main() {
  const db = await ensureDb();
  const { base, proc: server } = await spawnServer(db, { IDQS_SQL_TIMEOUT_MS: '120000' });
  try {
    const ctx = await createContext({ ...loadConfig(), connections: 2 }, db);
    const counts = { terms: { collection_id: ['nlst'], Modality: ['CT'] } };
    const bigCohort = { terms: { collection_id: ['nlst'] } };
    const total = Number((await ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE collection_id = 'nlst'`))!.n);

    // Ceiling of this machine for the same tiny response: bare Fastify, same load.
    const barePort = await freePort();
    const versionBody = await (await fetch(base + '/v3/version')).text();
    const bare = spawn(process.execPath, [join(root, 'bench/bare-server.mjs'), String(barePort), versionBody], { stdio: 'ignore' });
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${barePort}/v3/version`)).ok) break;
      } catch {
        /* not up yet */
      }
      if (i > 100) throw new Error('bare server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const bareVersion = await load(`http://127.0.0.1:${barePort}`, { name: 'bare', path: '/v3/version', connections: 32 });
    bare.kill('SIGKILL');

    // 1. Throughput and latency per endpoint.
    const loads: Load[] = [
      { name: 'GET /v3/version', path: '/v3/version', connections: 32 },
      { name: 'GET /v3/stats', path: '/v3/stats' },
      { name: 'GET /v3/collections', path: '/v3/collections' },
      { name: 'GET /v3/attributes/Modality/values', path: '/v3/attributes/Modality/values' },
      { name: 'POST /v3/cohort/counts', method: 'POST', path: '/v3/cohort/counts', body: counts },
      { name: 'POST /v3/cohort/manifest', method: 'POST', path: '/v3/cohort/manifest', body: { filters: counts, page: 3, page_size: 100 } },
      { name: 'POST /v3/licenses', method: 'POST', path: '/v3/licenses', body: counts },
      { name: 'POST /v3/sql', method: 'POST', path: '/v3/sql', body: { sql: 'SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC', max_rows: 50 } },
    ];
    const table: Record<string, ReturnType<typeof load> extends Promise<infer T> ? T : never> = {};
    for (const l of loads) {
      process.stderr.write(`load ${l.name} ...\n`);
      table[l.name] = await load(base, l);
    }

    // 2. HTTP latency vs the engine's own time for the same SQL (one request at a time).
    const f = await compileFilter(ctx, counts);
    const countsSql = `SELECT ${COUNTS_SELECT} FROM "index" WHERE ${f.where}`;
    // The manifest route runs the counts, the page and the preview queries concurrently; time the same.
    const mq = manifestQueries(f, 100, 300);
    const engineCounts = await timeIt(40, () => ctx.engine.query(countsSql, f.params));
    const enginePage = await timeIt(40, () =>
      Promise.all([ctx.engine.query(countsSql, f.params), ctx.engine.query(mq.rows.sql, mq.rows.params), ctx.engine.query(mq.preview.sql, mq.preview.params)]),
    );
    const post = (path: string, body: unknown) =>
      fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => {
        if (!r.ok) throw new Error(`${path} ${r.status} ${await r.text()}`);
        return r.arrayBuffer();
      });
    const httpCounts = await timeIt(40, () => post('/v3/cohort/counts', counts));
    const httpPage = await timeIt(40, () => post('/v3/cohort/manifest', { filters: counts, page: 3, page_size: 100 }));

    // 3. manifest.txt of 100,000 URLs vs the engine exporting the same URLs to a file.
    const limit = Math.min(100_000, total);
    const urlSql = `SELECT series_cloud1_url FROM "index" WHERE collection_id = 'nlst' ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID LIMIT ${limit}`;
    const exportFile = join(defaultCacheDir(), 'bench', 'export.txt');
    const raw = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY', threads: '2' });
    const rc = await raw.connect();
    const engineExport = await timeIt(5, () => rc.run(`COPY (${urlSql}) TO '${exportFile}' (FORMAT csv, HEADER false, QUOTE '')`));
    const exportBytes = statSync(exportFile).size;
    rmSync(exportFile, { force: true });
    rc.closeSync();
    raw.closeSync();
    // Timed until the last byte arrives, with node:http (as curl or s5cmd
    // would read it; fetch's own buffering would be timed otherwise).
    let lines = 0;
    const httpText = await timeIt(5, () => postCountingLines(`${base}/v3/cohort/manifest.txt`, { filters: bigCohort, limit }).then((n) => (lines = n)));

    // 4. counts p99 while 4 hostile queries run on the caller-SQL budget.
    const idle = await load(base, { name: 'counts idle', method: 'POST', path: '/v3/cohort/counts', body: counts, connections: 4 });
    const hostile = Array.from({ length: 4 }, () =>
      fetch(base + '/v3/sql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql: 'SELECT count(*) FROM index a, index b WHERE a.series_size_MB < b.series_size_MB' }),
      }).then((r) => r.status),
    );
    await new Promise((r) => setTimeout(r, 1000));
    const busy = await load(base, { name: 'counts under hostile SQL', method: 'POST', path: '/v3/cohort/counts', body: counts, connections: 4 });
    const stillRunning = ctx.engine.stats();
    void stillRunning;

    console.log(`\nbench:api at scale ${scale} (${(await ctx.engine.one('SELECT count(*) AS n FROM "index"'))!.n} series), ${duration}s per endpoint, loopback\n`);
    console.log('| endpoint | p50 ms | p99 ms | req/s | errors |');
    console.log('|---|---|---|---|---|');
    for (const [name, r] of Object.entries(table)) console.log(`| ${name} | ${r.p50} | ${r.p99} | ${Math.round(r.rps)} | ${r.errors} |`);
    console.log('\n| comparison | HTTP | engine | ratio | target |');
    console.log('|---|---|---|---|---|');
    console.log(`| counts latency (median ms) | ${httpCounts.toFixed(2)} | ${engineCounts.toFixed(2)} | ${(httpCounts / engineCounts).toFixed(2)}x | <= 1.25x |`);
    console.log(`| manifest page latency (median ms) | ${httpPage.toFixed(2)} | ${enginePage.toFixed(2)} | ${(httpPage / enginePage).toFixed(2)}x | <= 1.25x |`);
    console.log(
      `| manifest.txt ${lines.toLocaleString('en-US')} URLs (ms) | ${httpText.toFixed(0)} | ${engineExport.toFixed(0)} (COPY, ${(exportBytes / 1e6).toFixed(1)} MB) | ${((engineExport / httpText) * 100).toFixed(0)}% of engine speed | >= 80% |`,
    );
    console.log(`| counts p99 idle vs 4 hostile SQL (ms) | ${busy.p99} | ${idle.p99} (idle) | ${(busy.p99 / Math.max(idle.p99, 1)).toFixed(2)}x | <= 3x |`);
    const v = table['GET /v3/version']!.rps;
    console.log(`| /v3/version req/s | ${Math.round(v)} | ${Math.round(bareVersion.rps)} (bare Fastify, same run) | ${((v / bareVersion.rps) * 100).toFixed(0)}% of bare | >= 15000 |`);
    ctx.engine.close();
    server.kill('SIGTERM');
    await Promise.race([Promise.allSettled(hostile), new Promise((r) => setTimeout(r, 2000))]);
  } finally {
    server.kill('SIGKILL');
  }
  process.exit(0);
}

await main();
