// Processes that start together on an empty cache share one download, one
// unpack and one build: real `idqs` processes against a local release source
// (one file sent slowly, so they overlap). A fetch killed mid-download leaves
// its lock and part file behind; the next fetch takes the lock over and
// resumes the part file. Four servers started at once on the generated
// dataset generate and build it once, and all answer.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { builtMetadata } from '../src/core/data/build.ts';
import { freePort, testDataset } from './fixture.ts';
import { makeReleaseLayout, startReleaseServer, TAG, WHEEL, type ReleaseServer } from './release-server.ts';

const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'idqs.cjs');
const WHEEL_PATH = `/pypi/files/${WHEEL}`;
let tmp: string;
let srv: ReleaseServer;
let dataset: string;

before(async () => {
  dataset = (await testDataset()).folder;
  tmp = mkdtempSync(join(tmpdir(), 'idqs-cache-conc-'));
  await makeReleaseLayout(dataset, join(tmp, 'srv'));
  srv = await startReleaseServer(join(tmp, 'srv'));
});
after(async () => {
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

function idqs(args: string[], cacheDir: string, env: Record<string, string> = {}): Run {
  const proc = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, IDQS_CACHE_DIR: cacheDir, IDQS_PYPI_INDEX: `${srv.url}/pypi/simple`, IDQS_RELEASE_GCS_URL: `${srv.url}/gcs`, IDQS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.on('close', (c) => resolve(c)));
  return { proc, out: () => out, err: () => err, exit };
}

/** Every file and folder under `dir`, relative. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) => {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    return e.isDirectory() ? [rel, ...tree(dir, rel)] : [rel];
  });
}

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

test('four fetches of one release at once: all succeed, the source sends the wheel once, the database is built once and opens', async () => {
  const cacheDir = join(tmp, 'cache-four');
  srv.slow.set(WHEEL_PATH, 40);
  const before = srv.requests.length;
  const runs = Array.from({ length: 4 }, () => idqs(['data', 'fetch', '--source', 'pypi', '--release', TAG], cacheDir));
  const codes = await Promise.all(runs.map((r) => r.exit));
  srv.slow.delete(WHEEL_PATH);
  const log = runs.map((r, i) => `--- ${i} (pid ${r.proc.pid}) exit ${codes[i]}\n${r.err()}`).join('\n');
  assert.deepEqual(codes, [0, 0, 0, 0], log);

  const wheelGets = srv.requests.slice(before).filter((r) => r.path === WHEEL_PATH);
  assert.equal(wheelGets.length, 1, `the wheel was requested ${wheelGets.length} times\n${log}`);
  // The others waited, naming a process that was one of the four.
  const pids = runs.map((r) => r.proc.pid);
  const waits = runs.flatMap((r) => [...r.err().matchAll(/waiting for process (\d+)/g)].map((m) => Number(m[1])));
  assert.ok(waits.length >= 3, `at least three waited\n${log}`);
  for (const p of waits) assert.ok(pids.includes(p), `waited for ${p}, one of ${pids.join(', ')}`);

  const results = runs.map((r) => JSON.parse(r.out()) as { db: string; fetch: { downloaded: string[] }; build: { rebuilt: boolean } });
  assert.equal(results.filter((r) => r.fetch.downloaded.length > 0).length, 1, 'one process downloaded');
  assert.equal(results.filter((r) => r.build.rebuilt).length, 1, 'one process built the database');
  assert.equal(new Set(results.map((r) => r.db)).size, 1);
  const meta = await builtMetadata(results[0]!.db);
  assert.equal(meta?.index_version, TAG);
  assert.equal(meta?.synthetic, false);
  const folder = join(cacheDir, 'releases', `${TAG}-pypi`);
  assert.equal(sha(join(folder, 'idc_index.parquet')), sha(join(dataset, 'idc_index.parquet')));
  // Nothing left behind: no lock, owner note, part file or partial folder.
  assert.deepEqual(tree(cacheDir).filter((f) => /\.lock|\.part|\.partial-|\.building-/.test(f)), []);
});

test('four fetches of the bucket layout at once: every file is downloaded once', async () => {
  const cacheDir = join(tmp, 'cache-gcs');
  const index = `/gcs/${TAG}/release_artifacts/idc_index.parquet`;
  srv.slow.set(index, 20);
  const before = srv.requests.length;
  const runs = Array.from({ length: 4 }, () => idqs(['data', 'fetch', '--source', 'gcs', '--release', TAG, '--no-build'], cacheDir));
  const codes = await Promise.all(runs.map((r) => r.exit));
  srv.slow.delete(index);
  assert.deepEqual(codes, [0, 0, 0, 0], runs.map((r) => r.err()).join('\n---\n'));
  // Files the source has (the absent ones are asked for and answered 404: no download).
  const present = readdirSync(dataset).filter((x) => x.endsWith('.parquet'));
  const parquet = srv.requests.slice(before).filter((r) => present.some((f) => r.path.endsWith(`/${f}`)));
  const perFile = new Map<string, number>();
  for (const r of parquet) perFile.set(r.path, (perFile.get(r.path) ?? 0) + 1);
  assert.equal(perFile.size, present.length);
  for (const [path, n] of perFile) assert.equal(n, 1, `${path} requested ${n} times`);
  for (const f of present) {
    assert.equal(sha(join(cacheDir, 'releases', `${TAG}-gcs`, f)), sha(join(dataset, f)), f);
  }
});

test('a fetch killed mid-download: the next one takes its lock over, resumes its part file and succeeds', async () => {
  const cacheDir = join(tmp, 'cache-killed');
  const size = statSync(join(tmp, 'srv', 'pypi', 'files', WHEEL)).size;
  srv.slow.set(WHEEL_PATH, 150);
  const first = idqs(['data', 'fetch', '--source', 'pypi', '--release', TAG], cacheDir);
  const part = join(cacheDir, 'downloads', `${WHEEL}.part-${first.proc.pid}`);
  const end = Date.now() + 30_000;
  while (!(existsSync(part) && statSync(part).size >= 64 * 1024)) {
    assert.ok(Date.now() < end && first.proc.exitCode === null, `no part file grew\n${first.err()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  first.proc.kill('SIGKILL');
  await first.exit;
  const kept = statSync(part).size;
  assert.ok(kept > 0 && kept < size, `killed mid-download (${kept} of ${size} bytes)`);
  assert.ok(existsSync(join(cacheDir, 'releases', `${TAG}-pypi.lock`)), 'the dead owner left its lock');
  srv.slow.delete(WHEEL_PATH);

  const before = srv.requests.length;
  const started = Date.now();
  const second = idqs(['data', 'fetch', '--source', 'pypi', '--release', TAG], cacheDir);
  assert.equal(await second.exit, 0, second.err());
  // Taken over within seconds of the owner's death (its pid is gone), not after a long stale time.
  assert.ok(Date.now() - started < 20_000);
  assert.match(second.err(), new RegExp(`process ${first.proc.pid}\\b[^\\n]*stopped without finishing`));
  const resumed = srv.requests.slice(before).filter((r) => r.path === WHEEL_PATH);
  assert.equal(resumed.length, 1);
  assert.ok(resumed[0]!.range?.startsWith('bytes='), 'continued with a Range request');
  assert.equal(Number(/^bytes=(\d+)-/.exec(resumed[0]!.range!)![1]), kept, 'resumed where the dead run stopped');
  const r = JSON.parse(second.out()) as { db: string; fetch: { downloaded: string[] }; build: { rebuilt: boolean } };
  assert.equal(r.build.rebuilt, true);
  assert.equal((await builtMetadata(r.db))?.index_version, TAG);
  assert.equal(sha(join(cacheDir, 'releases', `${TAG}-pypi`, 'idc_index.parquet')), sha(join(dataset, 'idc_index.parquet')));
  assert.deepEqual(tree(cacheDir).filter((f) => /\.lock|\.part|\.partial-|\.building-/.test(f)), []);
});

test('four servers started at once on the generated dataset (--demo): one generates and builds it, all answer', async () => {
  const cacheDir = join(tmp, 'cache-demo');
  const ports = await Promise.all([0, 1, 2, 3].map(() => freePort()));
  const runs = ports.map((port) => idqs(['serve', '--demo', '--port', String(port)], cacheDir, { IDQS_SCALE: '0.001', IDQS_WORKERS: '1', IDQS_SQL_CONNECTIONS: '1' }));
  try {
    const identities: unknown[] = [];
    for (const [i, port] of ports.entries()) {
      const end = Date.now() + 240_000;
      for (;;) {
        assert.ok(runs[i]!.proc.exitCode === null, `server ${i} exited:\n${runs[i]!.err()}`);
        assert.ok(Date.now() < end, `server ${i} not ready:\n${runs[i]!.err()}`);
        const r = await fetch(`http://127.0.0.1:${port}/v3/stats`).catch(() => null);
        if (r?.ok) {
          identities.push(await r.json());
          break;
        }
        await new Promise((res) => setTimeout(res, 200));
      }
      const v = (await (await fetch(`http://127.0.0.1:${port}/v3/version`)).json()) as { synthetic: boolean };
      assert.equal(v.synthetic, true);
    }
    // The same data behind every server, generated by one of them.
    for (const s of identities.slice(1)) assert.deepEqual(s, identities[0]);
    const log = runs.map((r, i) => `--- ${i} (pid ${r.proc.pid})\n${r.err()}`).join('\n');
    assert.equal(runs.filter((r) => /generating default dataset/.test(r.err())).length, 1, log);
    assert.equal(runs.filter((r) => /building database/.test(r.err())).length, 1, log);
    assert.equal(readdirSync(join(cacheDir, 'datasets')).length, 1, 'one dataset folder, no partial one');
  } finally {
    for (const r of runs) r.proc.kill('SIGTERM');
    await Promise.all(runs.map((r) => r.exit));
  }
  assert.deepEqual(tree(cacheDir).filter((f) => /\.lock|\.part|\.partial-|\.building-/.test(f)), []);
});
