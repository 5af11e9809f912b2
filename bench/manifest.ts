// npm run bench:manifest — the whole-cohort manifest on the pinned real
// release (test/real-release.json, from the cache; fetched by the product
// when missing): `idqs serve --db` as its own process, then manifest.txt of
// the largest collection (nlst) read by a fast client (URLs and s5cmd), and
// by a slow one that stops reading for a while mid-body. Reported: lines
// against SELECT count(*) run on the same database, time, MB/s, the server's
// RSS before and its peak (VmHWM) after each, and whether an engine
// connection stayed taken while the slow client did not read (it must not).
// Linux only (RSS from /proc). Options: -- --collection ID --pause-s N

import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { DuckDBInstance } from '@duckdb/node-api';
import { defaultCacheDir } from '../src/config.ts';
import { ensureRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';
import { spawnServer } from './server.ts';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const COLLECTION = arg('collection', 'nlst');
const PAUSE_S = Number(arg('pause-s', '8'));

const pin = JSON.parse(readFileSync(new URL('../test/real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const rel = await ensureRelease({ release: pin.release, source: parseSource(pin.source), cacheDir: defaultCacheDir(), env: process.env });

// The expected line count, by SQL on the database itself (read-only).
const inst = await DuckDBInstance.create(rel.db, { access_mode: 'READ_ONLY' });
const conn = await inst.connect();
const want = Number(
  (await conn.runAndReadAll(`SELECT count(*) AS n FROM "index" WHERE collection_id = '${COLLECTION.replace(/'/g, "''")}'`)).getRowObjectsJson()[0]!.n,
);
conn.closeSync();
inst.closeSync();

const { base, proc } = await spawnServer(rel.db);
const status = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** Curated connections busy right now, from /metrics. */
async function busyConnections(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^idqs_budget\{budget="curated",field="busy"\} (\d+)/m.exec(text)?.[1] ?? NaN);
}

/** POST manifest.txt and count its lines; `pauseAt` bytes in, stop reading for PAUSE_S seconds. */
function readManifest(body: unknown, pauseAt?: number): Promise<{ lines: number; bytes: number; comments: number; busyWhilePaused: number | null }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/v3/cohort/manifest.txt`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`manifest.txt answered ${res.statusCode}`));
      let lines = 0;
      let bytes = 0;
      let comments = 0;
      let paused = false;
      let last = 10; // the byte before this chunk: a line starts after a newline
      let busyWhilePaused: number | null = null;
      res.on('data', (chunk: Buffer) => {
        if (last === 10 && chunk[0] === 35) comments++;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
          lines++;
          if (chunk[i + 1] === 35) comments++;
        }
        last = chunk[chunk.length - 1]!;
        bytes += chunk.length;
        if (pauseAt !== undefined && !paused && bytes >= pauseAt) {
          paused = true;
          res.pause();
          // Let the server fill its spool and stop, then look at its connections.
          setTimeout(() => {
            void busyConnections().then((n) => {
              busyWhilePaused = n;
              res.resume();
            }, reject);
          }, PAUSE_S * 1000);
        }
      });
      res.on('end', () => resolve({ lines, bytes, comments, busyWhilePaused }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const filters = { terms: { collection_id: [COLLECTION] } };
const rows: Record<string, string | number>[] = [];
try {
  const rssBefore = status('VmRSS');
  for (const [name, body, pauseAt] of [
    ['urls, fast client', { filters }, undefined],
    ['s5cmd, fast client', { filters, format: 's5cmd' }, undefined],
    [`urls, client pausing ${PAUSE_S} s`, { filters }, 4 << 20],
  ] as const) {
    const t0 = performance.now();
    const r = await readManifest(body, pauseAt);
    const s = (performance.now() - t0) / 1000;
    rows.push({
      run: name,
      series_lines: r.lines - r.comments,
      expected: want,
      comment_lines: r.comments,
      MB: +(r.bytes / 1e6).toFixed(1),
      seconds: +s.toFixed(2),
      'MB/s': +(r.bytes / 1e6 / (pauseAt === undefined ? s : Math.max(0.001, s - PAUSE_S))).toFixed(1),
      server_peak_RSS_MB: Math.round(status('VmHWM')),
      busy_connections_while_paused: r.busyWhilePaused ?? '-',
    });
  }
  process.stdout.write(`release ${pin.release} (${pin.source}), collection ${COLLECTION}: SELECT count(*) = ${want} series; server RSS before: ${Math.round(rssBefore)} MB\n`);
  console.table(rows);
  const bad = rows.filter((r) => r.series_lines !== want || (typeof r.busy_connections_while_paused === 'number' && r.busy_connections_while_paused > 0));
  if (bad.length) {
    process.stderr.write(`FAILED: ${bad.map((r) => r.run).join(', ')}\n`);
    process.exitCode = 1;
  }
} finally {
  proc.kill('SIGTERM');
}
