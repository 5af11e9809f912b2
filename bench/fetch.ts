// npm run bench:fetch — the release fetcher's download speed against curl on
// the same large file from a loopback HTTP server (its own process), one
// stream each, alternating runs, in the same run (target: >= 90% of curl).
// Both run as processes of their own: curl writing the file with -o, and a
// Node process running the compiled fetcher's downloadFile (resumable writer
// with the sha256 computed as bytes arrive). Reported: the download speed by
// each tool's own clock, and the whole process spawn to exit; each ratio is
// the median of the per-pair ratios, which holds when the machine's speed
// drifts between pairs.
// With -- --real VERSION it also measures the real wheel end to end in a
// fresh cache: fetch + build time, database size, first start to ready with
// `idqs serve --release`, and /v3/cohort/counts p50 (network: PyPI).
// Options: -- --mb N --runs N --real 25.0.5

import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort } from './server.ts';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const MB = Number(arg('mb', '512'));
const RUNS = Number(arg('runs', '7'));
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

/** A whole process, spawn to exit: its wall seconds and what it printed; throws when it fails. */
function run(cmd: string, args: string[]): Promise<{ wall: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    p.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve({ wall: (performance.now() - t) / 1000, stdout }) : reject(new Error(`${cmd} exited with ${code}`))));
  });
}

async function speed(): Promise<void> {
  // Written 1 MB at a time, so this process holds no file-sized buffer.
  const file = join(tmp, 'big.bin');
  const chunk = randomBytes(1 << 20);
  const fd = openSync(file, 'w');
  for (let i = 0; i < MB; i++) writeSync(fd, chunk);
  closeSync(fd);
  const bytes = statSync(file).size;
  const port = await freePort();
  const server = spawn(process.execPath, ['-e', SERVER, file, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
  const url = `http://127.0.0.1:${port}/big.bin`;
  const out = join(tmp, 'out.bin');
  const fetcher = pathToFileURL(join(root, 'dist/core/release/http-file.js')).href;
  // The child reports the download's own time (from the request to the renamed, hashed file), as curl's -w does.
  const idqsScript =
    `import(${JSON.stringify(fetcher)}).then(async (m) => { const t = performance.now(); ` +
    `await m.downloadFile(process.argv[1], process.argv[2]); process.stdout.write(String((performance.now() - t) / 1000)); })`;
  const curlArgs = ['-sS', '-o', out, '-w', '%{time_total}', url];
  const curl: { wall: number; transfer: number }[] = [];
  const idqs: { wall: number; transfer: number }[] = [];
  try {
    await run('curl', curlArgs); // warm-up, not counted
    rmSync(out, { force: true });
    for (let r = 0; r < RUNS; r++) {
      const c = await run('curl', curlArgs);
      curl.push({ wall: c.wall, transfer: Number(c.stdout) });
      rmSync(out, { force: true });
      const i = await run(process.execPath, ['-e', idqsScript, url, out]);
      idqs.push({ wall: i.wall, transfer: Number(i.stdout) });
      rmSync(out, { force: true });
    }
  } finally {
    server.kill();
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  const mbs = (s: number) => bytes / 1e6 / s;
  const line = (what: 'transfer' | 'wall', label: string) => {
    const cs = curl.map((x) => x[what]);
    const is = idqs.map((x) => x[what]);
    const ratios = cs.map((c, i) => c / is[i]!);
    console.log(`  ${label}: curl ${mbs(median(cs)).toFixed(0)} MB/s, idqs ${mbs(median(is)).toFixed(0)} MB/s, idqs / curl = ${median(ratios).toFixed(2)} (pairs ${ratios.map((x) => x.toFixed(2)).join(', ')})`);
  };
  console.log(`large file ${MB} MB, one stream, loopback, ${RUNS} pairs in turn (medians; target >= 0.90 of curl):`);
  line('transfer', 'download (each tool\'s own time: curl -w time_total, the fetcher from request to hashed file)');
  line('wall', 'whole process (start-up included: Node about 0.1 s, curl a few ms)');
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
