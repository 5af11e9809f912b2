// npm run bench:download-manifest — peak RSS and time of `idqs download
// --manifest` over long manifests built by SQL from the pinned real release
// (s3:// URL lines of its series, in collection order: nlst alone is 592,600),
// run as a user runs it (the real CLI, resolving through a real server over
// the release). The object store is a minimal S3-compatible listing and GET
// server in this process (one object of --object-bytes per series folder):
// the point is the downloader's memory, not the store. Peak RSS is the CLI
// process's VmHWM (/proc), read until it exits. Runs: a dry run of --small
// lines (default --lines/10) and of --lines (the whole manifest resolved,
// planned and every series listed), then real downloads of --download/10
// and --download series into a temporary folder. Each pair runs in the same
// bench, one after the other, so the ratio of their peaks is measured under
// the same load. Target: the peak RSS does not grow with the manifest's
// length (the larger run within about 10% of the smaller).
// Options: -- --lines N --small N --download N --object-bytes B

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { lit } from '../src/core/data/sql.ts';
import { startServer } from '../test/fixture.ts';
import { pinnedRelease } from '../test/real-releases.ts';
import { CLI } from '../test/s3.ts';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const LINES = Number(arg('lines', '600000'));
const DOWNLOAD = Number(arg('download', '20000'));
/** The shorter dry run to compare with (0: none). */
const SMALL = Number(arg('small', String(Math.round(LINES / 10))));
const OBJECT_BYTES = Number(arg('object-bytes', '1000'));

const tmp = mkdtempSync(join(tmpdir(), 'idqs-bench-dlm-'));
const rel = await pinnedRelease();

/** A manifest of the first n series of the release in collection order, written by DuckDB. */
async function manifest(n: number): Promise<string> {
  const file = join(tmp, `manifest-${n}.txt`);
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  await c.run(`COPY (SELECT 's3://' || aws_bucket || '/' || crdc_series_uuid || '/*' AS l
      FROM read_parquet(${lit(join(rel.fetch.folder, 'idc_index.parquet'))}) ORDER BY collection_id, crdc_series_uuid LIMIT ${n})
    TO ${lit(file)} (FORMAT csv, HEADER false, QUOTE '')`);
  const got = Number((await c.runAndReadAll(`SELECT count(*) FROM read_csv(${lit(file)}, header = false, columns = {'l': 'VARCHAR'})`)).getRows()[0]![0]);
  c.closeSync();
  inst.closeSync();
  if (got !== n) throw new Error(`the release has ${got} series, fewer than the ${n} lines asked`);
  return file;
}

// The store: ListObjectsV2 answers one object per series folder; GET answers its bytes.
const body = Buffer.alloc(OBJECT_BYTES, 7);
let requests = 0;
const store = http.createServer((req, res) => {
  requests++;
  const u = new URL(req.url!, 'http://x');
  if (u.searchParams.get('list-type') === '2') {
    const prefix = u.searchParams.get('prefix') ?? '';
    res.setHeader('content-type', 'application/xml');
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>false</IsTruncated>` +
        `<Contents><Key>${prefix}0.dcm</Key><Size>${OBJECT_BYTES}</Size><ETag>"x-1"</ETag></Contents></ListBucketResult>`,
    );
    return;
  }
  res.setHeader('content-length', OBJECT_BYTES);
  res.setHeader('etag', '"x-1"');
  res.end(body);
});
await new Promise<void>((ok) => store.listen(0, '127.0.0.1', ok));
const storeUrl = `http://127.0.0.1:${(store.address() as { port: number }).port}`;
const api = await startServer({ cloud1Endpoint: storeUrl, cloud2Endpoint: storeUrl }, rel.db);

interface Run {
  run: string;
  lines: number;
  seconds: number;
  peakMB: number;
  summary: string;
}
const runs: Run[] = [];

/** Run the CLI, its peak RSS from /proc (VmHWM) read until it exits, and its summary event. */
async function run(name: string, lines: number, file: string, extra: string[]): Promise<void> {
  const out = join(tmp, 'out');
  process.stderr.write(`${name}: ${lines} lines, load ${loadavg()[0]!.toFixed(1)} …\n`);
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'download', '--manifest', file, '--api', api.url, '--out', out, '--layout', '%crdc_series_uuid', '--json', '--yes', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let peak = 0;
  let summary = '';
  let tail = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    const text = tail + d;
    const parts = text.split('\n');
    tail = parts.pop()!;
    for (const p of parts) if (p.startsWith('{"event":"summary"')) summary = p;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      // exited
    }
  }, 100);
  const code = await new Promise<number | null>((ok) => child.on('exit', ok));
  clearInterval(poll);
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0 || !summary) throw new Error(`${name}: exit ${code}\n${err}`);
  const s = JSON.parse(summary) as { series: number; files: number; downloaded: number; failed: number; total_bytes: number };
  if (s.series !== lines || s.failed !== 0) throw new Error(`${name}: ${summary}`);
  if (extra.includes('--dry-run') ? s.files !== lines : s.downloaded !== lines || readdirSync(out).length !== lines) throw new Error(`${name}: ${summary}`);
  rmSync(out, { recursive: true, force: true });
  runs.push({ run: name, lines, seconds, peakMB: peak, summary: `${s.series} series, ${s.files} files, ${s.downloaded} downloaded, ${s.total_bytes} bytes` });
  process.stderr.write(`${name}: ${lines} lines, ${seconds.toFixed(1)} s, peak RSS ${peak.toFixed(0)} MB, load ${loadavg()[0]!.toFixed(1)}\n`);
}

try {
  if (SMALL > 0) await run('dry run', SMALL, await manifest(SMALL), ['--dry-run']);
  await run('dry run', LINES, await manifest(LINES), ['--dry-run']);
  if (DOWNLOAD >= 10) await run('download', Math.round(DOWNLOAD / 10), await manifest(Math.round(DOWNLOAD / 10)), ['--jobs', '8']);
  if (DOWNLOAD > 0) await run('download', DOWNLOAD, await manifest(DOWNLOAD), ['--jobs', '8']);
} finally {
  await api.close();
  store.close();
  rmSync(tmp, { recursive: true, force: true });
}

console.log(`\nidqs download --manifest, pinned release ${rel.fetch.folder.split('/').pop()}, store requests ${requests}, load average ${loadavg().map((v) => v.toFixed(1)).join(' ')}\n`);
console.log('| run | lines | seconds | peak RSS MB | lines/s | summary |');
console.log('|---|---|---|---|---|---|');
for (const r of runs) console.log(`| ${r.run} | ${r.lines} | ${r.seconds.toFixed(1)} | ${r.peakMB.toFixed(0)} | ${(r.lines / r.seconds).toFixed(0)} | ${r.summary} |`);
// Larger run's peak over the smaller one's, per kind of run.
for (const kind of ['dry run', 'download']) {
  const [a, b] = runs.filter((r) => r.run === kind).sort((x, y) => x.lines - y.lines);
  if (a && b && a !== b) console.log(`${kind}: peak RSS at ${b.lines} lines / at ${a.lines} lines = ${(b.peakMB / a.peakMB).toFixed(2)}`);
}
