// npm run bench:download — throughput of `idqs download` to local disk from a
// loopback S3-compatible server (s3rver, its own process), with 1, 8 and 32
// jobs, over 2,000 small objects and over 20 large ones, against parallel curl
// (xargs -P N curl, 20 URLs per curl process so connections are reused) on the
// same objects in the same run. Target: idqs >= 80% of curl's MB/s.
// idqs is timed as a user runs it: the whole command (start-up, listing every
// series prefix, transfers, MD5 and size checks); curl gets the URL list ready-made.
// Options: -- --small N --small-kb K --large N --large-mb M --jobs 1,8,32

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, startS3 } from '../test/s3.ts';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const SMALL = Number(arg('small', '2000'));
const SMALL_KB = Number(arg('small-kb', '50'));
const LARGE = Number(arg('large', '20'));
const LARGE_MB = Number(arg('large-mb', '25'));
const JOBS = arg('jobs', '1,8,32').split(',').map(Number);

const tmp = mkdtempSync(join(tmpdir(), 'idqs-bench-dl-'));
const objects = join(tmp, 'objects');

/** Objects of one set: `count` objects in folders of at most 100 (one folder = one series prefix). */
function writeSet(name: string, count: number, size: number): { manifest: string; urls: string; bytes: number } {
  const urls: string[] = [];
  const prefixes = new Set<string>();
  let bytes = 0;
  const block = randomBytes(size);
  for (let i = 0; i < count; i++) {
    const folder = `${name}-${String(Math.floor(i / 100)).padStart(4, '0')}`;
    mkdirSync(join(objects, 'bench', folder), { recursive: true });
    // Sizes differ a little per object; contents differ in their first bytes.
    const n = size - (i % 97);
    const buf = Buffer.from(block.subarray(0, n));
    buf.writeUInt32LE(i, 0);
    writeFileSync(join(objects, 'bench', folder, `${String(i).padStart(6, '0')}.dcm`), buf);
    urls.push(`${folder}/${String(i).padStart(6, '0')}.dcm`);
    prefixes.add(folder);
    bytes += n;
  }
  const manifest = join(tmp, `${name}.txt`);
  writeFileSync(manifest, [...prefixes].map((p) => `s3://bench/${p}/*`).join('\n') + '\n');
  return { manifest, urls: urls.join('\n'), bytes };
}

function tree(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (!e.name.endsWith('.idqs-part')) {
        files++;
        bytes += statSync(join(d, e.name)).size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

process.stderr.write(`writing ${SMALL} objects of ~${SMALL_KB} kB and ${LARGE} of ~${LARGE_MB} MB …\n`);
const sets = {
  small: { ...writeSet('small', SMALL, SMALL_KB * 1000), count: SMALL },
  large: { ...writeSet('large', LARGE, LARGE_MB * 1_000_000), count: LARGE },
};
const s3 = await startS3(objects, { bench: 'bench' }, join(tmp, 's3'));
// Warm the server (its MD5 side files are computed on first listing) and the page cache.
for (const set of Object.values(sets)) {
  spawnSync(process.execPath, [CLI, 'download', '--manifest', set.manifest, '--endpoint', s3.url, '--api', 'http://127.0.0.1:9', '--layout', 'flat', '--out', join(tmp, 'warm'), '--dry-run', '--quiet']);
}

interface Row {
  set: string;
  jobs: number;
  tool: string;
  seconds: number;
  MB_s: number;
  files_s: number;
}
const rows: Row[] = [];

function time(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

for (const [name, set] of Object.entries(sets)) {
  for (const jobs of JOBS) {
    for (const tool of ['curl', 'idqs']) {
      const out = join(tmp, `out-${name}-${jobs}-${tool}`);
      rmSync(out, { recursive: true, force: true });
      mkdirSync(out, { recursive: true });
      const seconds = time(() => {
        if (tool === 'curl') {
          const r = spawnSync('xargs', ['-P', String(jobs), '-n', '20', 'curl', '-sSf', '--output-dir', out, '--remote-name-all'], {
            input: set.urls.split('\n').map((u) => `${s3.url}/bench/${u}`).join('\n'),
            stdio: ['pipe', 'ignore', 'inherit'],
          });
          if (r.status !== 0) throw new Error(`curl run failed (${r.status})`);
        } else {
          execFileSync(process.execPath, [CLI, 'download', '--manifest', set.manifest, '--endpoint', s3.url, '--api', 'http://127.0.0.1:9', '--layout', 'flat', '--out', out, '--jobs', String(jobs), '--quiet'], {
            stdio: ['ignore', 'ignore', 'inherit'],
          });
        }
      });
      const got = tree(out);
      if (got.files !== set.count || got.bytes !== set.bytes) throw new Error(`${tool} ${name} x${jobs}: got ${got.files} files / ${got.bytes} bytes, want ${set.count} / ${set.bytes}`);
      rows.push({ set: name, jobs, tool, seconds, MB_s: set.bytes / 1e6 / seconds, files_s: set.count / seconds });
      process.stderr.write(`${name} jobs=${jobs} ${tool}: ${seconds.toFixed(2)} s\n`);
      rmSync(out, { recursive: true, force: true });
    }
  }
}
await s3.close();
rmSync(tmp, { recursive: true, force: true });

console.log(`\nidqs download vs parallel curl, loopback s3rver; small: ${SMALL} x ~${SMALL_KB} kB, large: ${LARGE} x ~${LARGE_MB} MB\n`);
console.log('| set | jobs | curl MB/s | curl files/s | idqs MB/s | idqs files/s | idqs / curl |');
console.log('|---|---|---|---|---|---|---|');
for (const name of Object.keys(sets)) {
  for (const jobs of JOBS) {
    const c = rows.find((r) => r.set === name && r.jobs === jobs && r.tool === 'curl')!;
    const i = rows.find((r) => r.set === name && r.jobs === jobs && r.tool === 'idqs')!;
    console.log(`| ${name} | ${jobs} | ${c.MB_s.toFixed(1)} | ${c.files_s.toFixed(0)} | ${i.MB_s.toFixed(1)} | ${i.files_s.toFixed(0)} | ${((i.MB_s / c.MB_s) * 100).toFixed(0)}% |`);
  }
}
