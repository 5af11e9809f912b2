// npm run bench:fetch — the release fetcher's download speed against curl on
// the same large file from a loopback HTTP server (its own process), one
// stream each, alternating runs, in the same run (target: >= 90% of curl).
// idqs is the fetcher's downloadFile (resumable writer with the sha256
// computed as bytes arrive); curl writes the file with -o.
// With -- --real VERSION it also measures the real wheel end to end in a
// fresh cache: fetch + build time, database size, first start to ready with
// `idqs serve --release`, and /v3/cohort/counts p50 (network: PyPI).
// Options: -- --mb N --runs N --real 25.0.5

import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { downloadFile } from '../src/core/release/http-file.ts';
import { freePort } from './server.ts';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const MB = Number(arg('mb', '512'));
const RUNS = Number(arg('runs', '3'));
const REAL = arg('real', '');
const root = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'idqs-bench-fetch-'));

// A plain static server in a separate process, so it does not share the client's event loop.
const SERVER = `
const http = require('node:http'), fs = require('node:fs');
const file = process.argv[1], size = fs.statSync(file).size;
http.createServer((req, res) => {
  res.writeHead(200, { 'content-length': size, 'accept-ranges': 'bytes', etag: '"x"' });
  fs.createReadStream(file, { highWaterMark: 1 << 20 }).pipe(res);
}).listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write('up\\n'));
`;

async function speed(): Promise<void> {
  const file = join(tmp, 'big.bin');
  const chunk = randomBytes(1 << 20);
  const parts: Buffer[] = [];
  for (let i = 0; i < MB; i++) parts.push(chunk);
  writeFileSync(file, Buffer.concat(parts));
  const bytes = statSync(file).size;
  const port = await freePort();
  const server = spawn(process.execPath, ['-e', SERVER, file, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
  const url = `http://127.0.0.1:${port}/big.bin`;
  const curl: number[] = [];
  const idqs: number[] = [];
  try {
    for (let r = 0; r < RUNS; r++) {
      const out = join(tmp, 'out.bin');
      let t = performance.now();
      execFileSync('curl', ['-sS', '-o', out, url]);
      curl.push(bytes / 1e6 / ((performance.now() - t) / 1000));
      rmSync(out, { force: true });
      t = performance.now();
      await downloadFile(url, out);
      idqs.push(bytes / 1e6 / ((performance.now() - t) / 1000));
      rmSync(out, { force: true });
    }
  } finally {
    server.kill();
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  console.log(`large file ${MB} MB, one stream, loopback, ${RUNS} runs each (median):`);
  console.log(`  curl  ${median(curl).toFixed(0)} MB/s  (runs: ${curl.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  idqs  ${median(idqs).toFixed(0)} MB/s  (runs: ${idqs.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`  idqs / curl = ${(median(idqs) / median(curl)).toFixed(2)} (target >= 0.90)`);
}

/** `idqs serve` with `args` in `cache`; resolves with the seconds until /v3/version answers, and the server. */
async function serveReady(cache: string, args: string[]): Promise<{ seconds: number; base: string; stop: () => void }> {
  const port = await freePort();
  const t = performance.now();
  const proc = spawn(process.execPath, [join(root, 'bin/idqs.cjs'), 'serve', ...args, '--port', String(port)], {
    env: { ...process.env, IDQS_CACHE_DIR: cache, IDQS_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      if ((await fetch(`${base}/v3/version`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (proc.exitCode !== null) throw new Error('server exited');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { seconds: (performance.now() - t) / 1000, base, stop: () => proc.kill() };
}

async function real(version: string): Promise<void> {
  const cacheA = join(tmp, 'cache-a');
  const t = performance.now();
  execFileSync(process.execPath, [join(root, 'bin/idqs.cjs'), 'data', 'fetch', '--source', 'pypi', '--release', version], {
    env: { ...process.env, IDQS_CACHE_DIR: cacheA },
    stdio: 'ignore',
  });
  const db = join(cacheA, 'releases', `${version}-pypi`, 'idqs.duckdb');
  console.log(`real wheel ${version} (pypi), empty cache: data fetch (download + unpack + build) ${((performance.now() - t) / 1000).toFixed(1)} s, database ${(statSync(db).size / 1e6).toFixed(0)} MB`);
  const args = ['--release', version, '--source', 'pypi'];
  const first = await serveReady(join(tmp, 'cache-b'), args);
  first.stop();
  console.log(`serve --release ${version} --source pypi, empty cache, start to ready (fetch + build + open): ${first.seconds.toFixed(1)} s`);
  const again = await serveReady(join(tmp, 'cache-b'), args);
  console.log(`the same, release cached: start to ready ${again.seconds.toFixed(2)} s`);
  try {
    const times: number[] = [];
    const bodies = [{ terms: { collection_id: ['nlst'], Modality: ['CT'] } }, { terms: { Modality: ['MR'] } }, { ranges: { StudyDate: { gte: '2000-01-01' } } }];
    for (let i = 0; i < 60; i++) {
      const s = performance.now();
      const r = await fetch(`${again.base}/v3/cohort/counts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bodies[i % 3]) });
      await r.json();
      if (i >= 6) times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    console.log(`/v3/cohort/counts on the real data, 54 sequential requests over 3 filters: p50 ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms, p99 ${times[Math.floor(times.length * 0.99)]!.toFixed(1)} ms`);
  } finally {
    again.stop();
  }
}

try {
  await speed();
  if (REAL) await real(REAL);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
