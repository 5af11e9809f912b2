// The cohort index written beside the database and loaded at start: a server
// that loads it answers exactly as one that built the index from the engine,
// and both as SQL written here (random filters of the property test, facets
// and manifest pages compared whole). A stale file (another key) or a damaged
// one (a flipped byte, a truncation) is detected, never served: the index is
// built again and the file rewritten, as is a file of an earlier database
// file of the same data. `idqs data build` writes the file. On the test
// dataset and the real release.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { startServer, testConfig, testDataset, type TestServer } from './fixture.ts';
import { filterArb, referenceCounts, sampleOf, type Filter, type Reference } from './cohort-index-support.ts';
import { indexOrigin, readyCohortIndex } from '../src/core/services/cohort-index/build.ts';
import { indexFileOf } from '../src/core/services/cohort-index/file.ts';
import { prepareIndexFile } from '../src/core/services/cohort-index/prepare.ts';
import { defaultCacheDir } from '../src/config.ts';
import { ensureRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';

const PIN = JSON.parse(readFileSync(new URL('./real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const skipReal = process.env.IDQS_SKIP_REAL_DATA ? `IDQS_SKIP_REAL_DATA is set: the real release ${PIN.release} is skipped on purpose` : false;

const dir = mkdtempSync(join(tmpdir(), 'idqs-index-file-'));
const open: TestServer[] = [];
after(async () => {
  for (const s of open) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(db: string): Promise<TestServer> {
  const s = await startServer({}, db);
  open.push(s);
  return s;
}

async function stop(s: TestServer): Promise<void> {
  open.splice(open.indexOf(s), 1);
  await s.close();
}

/** A server on `db` once its index is there, with how it came to be and what became of writing the file. */
async function started(db: string): Promise<{ s: TestServer; loaded: boolean; reason: string | null; saved: string | null }> {
  const s = await serve(db);
  // Without a file the build runs in the background: wait for it (readyCohortIndex starts nothing new once started).
  for (let i = 0; !readyCohortIndex(s.ctx); i++) {
    assert.ok(i < 6000, 'the index is ready within ten minutes');
    await new Promise((r) => setTimeout(r, 100));
  }
  const o = indexOrigin(s.ctx)!;
  return { s, loaded: o.loaded, reason: o.reason, saved: o.saved ? await o.saved : null };
}

async function json(s: TestServer, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await s.post(path, body);
  const out = (await r.json()) as Record<string, unknown>;
  assert.equal(r.status, 200, `${path} ${JSON.stringify(body)}: ${JSON.stringify(out).slice(0, 300)}`);
  return out;
}

function sameCounts(got: Record<string, unknown>, want: Reference, f: Filter): void {
  for (const k of ['patients', 'studies', 'series', 'instances'] as const) assert.equal(got[k], want[k], `${k} of ${JSON.stringify(f)}`);
  const mb = got.size_MB as number;
  assert.ok(Math.abs(mb - want.size_MB) <= 0.0005 + 1e-12 * Math.abs(want.size_MB), `size_MB of ${JSON.stringify(f)}: ${mb} vs ${want.size_MB}`);
}

/** Counts of `n` random filters from every server equal SQL; facets and manifest pages of the first `whole` are equal across servers. */
async function agree(servers: TestServer[], n: number, seed: number, batch: number, whole: number): Promise<void> {
  const ctx = servers[0]!.ctx;
  const filters = fc.sample(filterArb(await sampleOf(ctx), 4), { numRuns: n, seed });
  const want = await referenceCounts(ctx, filters, batch);
  let nonEmpty = 0;
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i]!;
    for (const s of servers) sameCounts(await json(s, '/v3/cohort/counts', f), want[i]!, f);
    if (want[i]!.series > 0) nonEmpty++;
    if (i < whole) {
      const bodies = [];
      for (const s of servers) {
        const facets = await json(s, '/v3/cohort/facets', { filters: f });
        const page = await json(s, '/v3/cohort/manifest', { filters: f, page_size: 50, page: 2 });
        // The download commands name each server by its own address.
        bodies.push(JSON.stringify({ facets, page }).replaceAll(s.url, 'BASE'));
      }
      for (const b of bodies.slice(1)) {
        if (b === bodies[0]) continue;
        let at = 0;
        while (b[at] === bodies[0]![at]) at++;
        assert.fail(`facets and page 2 of ${JSON.stringify(f)} differ between a loaded and a built index at ${at}: ${b.slice(at - 200, at + 100)} vs ${bodies[0]!.slice(at - 200, at + 100)}`);
      }
    }
  }
  assert.ok(nonEmpty >= n / 10 && n - nonEmpty >= n / 10, `the draw is not degenerate: ${nonEmpty} of ${n} cohorts are non-empty`);
}

/** Rewrites a file's checksum after an edit, so only the key (not the checksum) tells it is stale. */
function resum(path: string): void {
  const b = readFileSync(path);
  b.writeUInt32LE(crc32(b.subarray(16)), 12);
  writeFileSync(path, b);
}

test('a loaded index answers as a freshly built one and as SQL; stale and damaged files are rebuilt, never served', async () => {
  const db = join(dir, 'test.duckdb');
  copyFileSync((await testDataset()).db, db);
  const file = indexFileOf(db);

  const built = await started(db);
  assert.deepEqual([built.loaded, built.reason, built.saved], [false, 'absent', 'written']);
  assert.ok(existsSync(file), 'the file is written beside the database');
  const loaded = await started(db);
  assert.deepEqual([loaded.loaded, loaded.reason], [true, null], 'a second start loads the file');
  await agree([built.s, loaded.s], 300, 2201, 1, 20);
  await stop(loaded.s);

  // Stale: the file of another database (another key, a valid checksum).
  const good = readFileSync(file);
  const stale = Buffer.from(good);
  const at = stale.indexOf('"key":"') + 7;
  stale.write(stale.toString('latin1', at, at + 32).replace(/./g, (c) => (c === '0' ? '1' : '0')), at, 'latin1');
  writeFileSync(file, stale);
  resum(file);
  const afterStale = await started(db);
  assert.equal(afterStale.loaded, false);
  assert.match(afterStale.reason!, /^stale/);
  assert.equal(afterStale.saved, 'written', 'the stale file is replaced');
  assert.ok(readFileSync(file).equals(good), 'the rewritten file is the one the first build wrote');
  await stop(afterStale.s);

  // Damaged: a byte flipped among the arrays, then a truncated file.
  const flipped = Buffer.from(good);
  flipped[good.length - 1000] = flipped[good.length - 1000]! ^ 0x5a;
  writeFileSync(file, flipped);
  const afterFlip = await started(db);
  assert.deepEqual([afterFlip.loaded, afterFlip.reason, afterFlip.saved], [false, 'damaged (checksum mismatch)', 'written']);
  await stop(afterFlip.s);
  truncateSync(file, Math.floor(good.length / 2));
  const afterCut = await started(db);
  assert.equal(afterCut.loaded, false);
  assert.match(afterCut.reason!, /^damaged/);
  assert.equal(afterCut.saved, 'written');
  assert.ok(readFileSync(file).equals(good), 'the rewritten file is whole again');
  // The rebuilt servers answer as SQL too.
  await agree([afterCut.s], 100, 7, 1, 0);
  await stop(afterCut.s);

  // The same data in a database file written again (its row ids may differ): the file is stale.
  copyFileSync((await testDataset()).db, db);
  const afterCopy = await started(db);
  assert.deepEqual([afterCopy.loaded, afterCopy.reason, afterCopy.saved], [false, 'stale (written for another database or version)', 'written']);
});

test('idqs data build writes the file (prepareIndexFile), then finds it up to date', async () => {
  const db = join(dir, 'prepared.duckdb');
  copyFileSync((await testDataset()).db, db);
  const first = await prepareIndexFile(testConfig(), db);
  assert.equal(first?.outcome, 'written');
  assert.ok(first.mb > 0 && existsSync(indexFileOf(db)));
  assert.equal((await prepareIndexFile(testConfig(), db))?.outcome, 'present');
  assert.equal(await prepareIndexFile(testConfig({ cohortIndex: 'off' }), db), null);
  const s = await started(db);
  assert.equal(s.loaded, true, 'a server loads the file the build wrote');
});

test('on the real release: the loaded index answers as SQL', { skip: skipReal }, async () => {
  const rel = await ensureRelease({ release: PIN.release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  let first = await started(rel.db);
  if (!first.loaded) {
    assert.ok(first.saved === 'written' || first.saved === 'present', `the file is written (${first.saved})`);
    await stop(first.s);
    first = await started(rel.db);
  }
  assert.equal(first.loaded, true, 'the real release loads its file');
  await agree([first.s], 150, 2026, 10, 3);
});
