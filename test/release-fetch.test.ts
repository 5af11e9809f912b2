// Fetching a release against a local server in the published layouts (the
// bucket, the repository's release assets, a package index with a wheel),
// made from our generator's test dataset: downloads, resume after a dropped
// connection, refusal of a bad checksum, missing optional and core tables,
// an unknown tag, the wheel's index forms, and the build of what was fetched.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testDataset } from './fixture.ts';
import { makeReleaseLayout, startReleaseServer, TAG, WHEEL, type ReleaseServer } from './release-server.ts';
import { ensureRelease, fetchRelease, type FetchEvent } from '../src/core/release/fetch.ts';
import { builtMetadata } from '../src/core/data/build.ts';
import type { DatasetManifest } from '../src/core/data/manifest.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
let tmp: string;
let srv: ReleaseServer;
let dataset: string;
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

before(async () => {
  dataset = (await testDataset()).folder;
  tmp = mkdtempSync(join(tmpdir(), 'idqs-fetch-'));
  await makeReleaseLayout(dataset, join(tmp, 'srv'));
  srv = await startReleaseServer(join(tmp, 'srv'));
});
after(async () => {
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
/** A fresh cache folder per test. */
const cache = () => join(tmp, `cache-${n++}`);
const env = () => ({ IDQS_RELEASE_GCS_URL: `${srv.url}/gcs`, IDQS_RELEASE_GITHUB_URL: `${srv.url}/github`, IDQS_PYPI_INDEX: `${srv.url}/pypi/simple` });
const fast = { retryBaseMs: 10 };

test('the bucket layout: every table fetched and checked, missing optional tables are warnings, the build serves the release', async () => {
  const cacheDir = cache();
  const events: FetchEvent[] = [];
  const r = await ensureRelease({ release: TAG, source: 'gcs', cacheDir, env: env(), ...fast, onEvent: (e) => events.push(e) });
  const parquet = r.fetch.downloaded.filter((f) => f.endsWith('.parquet')).sort();
  assert.equal(parquet.length, 17);
  for (const f of parquet) assert.equal(sha(join(r.fetch.folder, f)), sha(join(dataset, f)), f);
  // tcia_idc_subset and gdc_idc_mapping are not in our layout: warnings, not errors.
  assert.deepEqual(r.fetch.not_fetched.sort(), ['gdc_idc_mapping', 'tcia_idc_subset']);
  assert.equal(r.fetch.warnings.length, 2);
  assert.ok(events.some((e) => e.type === 'warning' && /tcia_idc_subset\.parquet is not in the release/.test(e.message)));
  const manifest = JSON.parse(readFileSync(join(r.fetch.folder, 'dataset.json'), 'utf8')) as DatasetManifest;
  assert.equal(manifest.provenance?.source, 'gcs');
  assert.equal(manifest.provenance?.urls['idc_index.parquet'], `${srv.url}/gcs/${TAG}/release_artifacts/idc_index.parquet`);
  assert.equal(manifest.provenance?.verified['idc_index.parquet'], sha(join(dataset, 'idc_index.parquet')));
  assert.ok(existsSync(join(r.fetch.folder, 'seg_index_schema.json')));
  assert.equal(r.build.rebuilt, true);
  assert.equal(r.build.release, 'v24');
  assert.equal(r.build.index_version, TAG);
  assert.deepEqual(r.build.missing, []);
  assert.deepEqual(r.build.warnings, []);
  const meta = await builtMetadata(r.db);
  assert.equal(meta?.synthetic, false);
  assert.equal(meta?.provenance?.source, 'gcs');

  // Again: no download, no rebuild, no request for any file.
  const before = srv.requests.length;
  const again = await ensureRelease({ release: TAG, source: 'gcs', cacheDir, env: env(), ...fast });
  assert.deepEqual(again.fetch.downloaded, []);
  assert.equal(again.build.rebuilt, false);
  assert.equal(srv.requests.length, before);
});

test('a connection dropped mid-file is resumed with a Range request and the file is whole', async () => {
  const path = `/gcs/${TAG}/release_artifacts/idc_index.parquet`;
  const size = readFileSync(join(dataset, 'idc_index.parquet')).length;
  srv.dropOnce.set(path, Math.floor(size / 3));
  const r = await fetchRelease({ release: TAG, source: 'gcs', tables: 'core', cacheDir: cache(), env: env(), ...fast });
  const gets = srv.requests.filter((q) => q.path === path);
  assert.equal(gets.at(-2)?.range, undefined);
  assert.equal(gets.at(-1)?.range, `bytes=${Math.floor(size / 3)}-`);
  assert.equal(sha(join(r.folder, 'idc_index.parquet')), sha(join(dataset, 'idc_index.parquet')));
  assert.deepEqual(readdirSync(r.folder).filter((f) => f.includes('.part')), [], 'no part file left');
});

test('a redirected file and a chunked body (no Content-Length) arrive whole', async () => {
  const idx = `/gcs/${TAG}/release_artifacts/idc_index.parquet`;
  const moved = `/github/${TAG}/idc_index.parquet`;
  const coll = `/gcs/${TAG}/release_artifacts/collections_index.parquet`;
  srv.redirect.set(idx, moved);
  srv.chunked.add(coll);
  try {
    const r = await fetchRelease({ release: TAG, source: 'gcs', tables: 'core', cacheDir: cache(), env: env(), ...fast });
    assert.ok(srv.requests.some((q) => q.path === moved), 'the redirect was followed');
    for (const f of ['idc_index.parquet', 'collections_index.parquet']) assert.equal(sha(join(r.folder, f)), sha(join(dataset, f)), f);
  } finally {
    srv.redirect.delete(idx);
    srv.chunked.delete(coll);
  }
});

test('a file that does not match its published sha256 is refused and kept aside', async () => {
  const path = `/gcs/${TAG}/release_artifacts/collections_index.parquet.sha256`;
  srv.override.set(path, `${'0'.repeat(64)}  collections_index.parquet\n`);
  try {
    const cacheDir = cache();
    await assert.rejects(fetchRelease({ release: TAG, source: 'gcs', tables: 'core', cacheDir, env: env(), ...fast }), (e: Error) => {
      assert.match(e.message, /collections_index\.parquet does not match its published sha256/);
      assert.match(e.message, /kept aside as .*collections_index\.parquet\.rejected/);
      return true;
    });
    const folder = join(cacheDir, 'releases', `${TAG}-gcs`);
    assert.ok(existsSync(join(folder, 'collections_index.parquet.rejected')));
    assert.ok(!existsSync(join(folder, 'collections_index.parquet')));
    assert.ok(!existsSync(join(folder, 'dataset.json')), 'an unverified release is not recorded as fetched');
  } finally {
    srv.override.delete(path);
  }
});

test('a missing core table is an error naming it; an unknown tag lists the available ones', async () => {
  const path = `/gcs/${TAG}/release_artifacts/version_metadata_index.parquet`;
  srv.hidden.add(path);
  try {
    await assert.rejects(fetchRelease({ release: TAG, source: 'gcs', tables: 'core', cacheDir: cache(), env: env(), ...fast }), /no version_metadata_index\.parquet .*a core table is missing/);
  } finally {
    srv.hidden.delete(path);
  }
  await assert.rejects(
    fetchRelease({ release: '99.0.0', source: 'gcs', cacheDir: cache(), env: env(), ...fast }),
    (e: Error) => {
      assert.match(e.message, /release 99\.0\.0 was not found at http:\/\/127\.0\.0\.1:\d+\/gcs/);
      assert.match(e.message, new RegExp(`available releases: ${TAG.replaceAll('.', '\\.')}`));
      return true;
    },
  );
});

test('the release assets layout through --mirror, with a table list', async () => {
  const r = await fetchRelease({ release: TAG, source: 'github', tables: ['index', 'seg_index'], cacheDir: cache(), mirror: `${srv.url}/github/`, env: {}, ...fast });
  assert.deepEqual(r.downloaded.sort(), ['idc_index.parquet', 'seg_index.parquet']);
  assert.ok(r.not_fetched.includes('ct_index') && !r.not_fetched.includes('seg_index'));
  assert.ok(srv.requests.some((q) => q.path === `/github/${TAG}/seg_index.parquet.sha256`));
  await assert.rejects(fetchRelease({ release: TAG, source: 'github', tables: ['segindex'], cacheDir: cache(), env: {} }), /unknown table "segindex": use all, core, or names among/);
});

test('the wheel from a package index, JSON or HTML form, checked against the published sha256 and RECORD', async () => {
  for (const form of ['json', 'html'] as const) {
    srv.indexForm = form;
    // PIP_INDEX_URL is honoured as pip does.
    const r = await fetchRelease({ release: 'latest', source: 'pypi', cacheDir: cache(), env: { PIP_INDEX_URL: `${srv.url}/pypi/simple` }, ...fast });
    assert.equal(r.version, TAG, form);
    assert.deepEqual(r.downloaded, [WHEEL]);
    for (const t of ['idc_index', 'collections_index', 'version_metadata_index']) assert.equal(sha(join(r.folder, `${t}.parquet`)), sha(join(dataset, `${t}.parquet`)), `${form} ${t}`);
    assert.ok(!existsSync(join(r.folder, 'seg_index.parquet')));
    assert.ok(r.not_fetched.includes('seg_index'));
  }
  srv.indexForm = 'json';
  srv.sha256.set(WHEEL, 'f'.repeat(64));
  try {
    const cacheDir = cache();
    await assert.rejects(fetchRelease({ release: TAG, source: 'pypi', cacheDir, env: env(), ...fast }), /does not match the sha256 the index publishes .*kept aside/);
    assert.ok(existsSync(join(cacheDir, 'downloads', `${WHEEL}.rejected`)));
  } finally {
    srv.sha256.delete(WHEEL);
  }
  await assert.rejects(fetchRelease({ release: '1.0.0', source: 'pypi', cacheDir: cache(), env: env() }), new RegExp(`idc-index-data 1\\.0\\.0 is not on the package index .*available: ${TAG.replaceAll('.', '\\.')}`));
});

test('a damaged part file left by a dead run is resumed, found wrong, and downloaded again from the start: the source is not blamed', async () => {
  const cacheDir = cache();
  const downloads = join(cacheDir, 'downloads');
  mkdirSync(downloads, { recursive: true });
  // A process that no longer exists left 1000 wrong bytes of the wheel (the highest pid Linux gives is below 2^22).
  const dead = 4_194_304 + 17;
  const part = join(downloads, `${WHEEL}.part-${dead}`);
  writeFileSync(part, Buffer.alloc(1000, 0x55));
  writeFileSync(`${part}.json`, JSON.stringify({ url: `${srv.url}/pypi/files/${WHEEL}`, validator: null }));
  const before = srv.requests.length;
  const retries: string[] = [];
  const r = await fetchRelease({ release: TAG, source: 'pypi', cacheDir, env: env(), ...fast, onEvent: (e) => void (e.type === 'retry' && retries.push(e.message)) });
  const gets = srv.requests.slice(before).filter((q) => q.path === `/pypi/files/${WHEEL}`);
  assert.deepEqual(gets.map((q) => q.range), ['bytes=1000-', undefined], 'resumed the dead run\'s part, then started over');
  assert.match(retries.join('\n'), /resumed from an interrupted run does not match its sha256; downloading it again from the start/);
  assert.equal(sha(join(r.folder, 'idc_index.parquet')), sha(join(dataset, 'idc_index.parquet')));
  assert.deepEqual(readdirSync(downloads), [], 'no part or rejected file left');
});

test('idqs data fetch and data build --from WHEEL on the command line', async () => {
  const cacheDir = cache();
  // Asynchronous: the release server runs in this process.
  const run = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [join(root, 'bin/idqs.cjs'), ...args], { env: { ...process.env, ...env(), IDQS_CACHE_DIR: cacheDir }, timeout: 120_000 }, (err, stdout, stderr) =>
        resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
      );
    });
  const r = await run('data', 'fetch', '--release', TAG, '--source', 'pypi');
  assert.equal(r.status, 0, r.stderr);
  // No terminal: plain lines, no bar.
  assert.match(r.stderr, new RegExp(`fetching release ${TAG.replaceAll('.', '\\.')} from pypi`));
  assert.match(r.stderr, new RegExp(`fetch: ${WHEEL.replaceAll('.', '\\.')} [\\d.]+ MB`));
  assert.doesNotMatch(r.stderr, /warning/);
  const out = JSON.parse(r.stdout) as { db: string; build: { release: string; tables: { name: string }[] } };
  assert.equal(out.build.release, 'v24');
  assert.deepEqual(out.build.tables.map((t) => t.name).sort(), ['analysis_results_index', 'collections_index', 'index', 'prior_versions_index', 'version_metadata_index']);
  const b = await run('data', 'build', '--from', join(tmp, 'srv', 'pypi', 'files', WHEEL), '--db', join(cacheDir, 'from-wheel.duckdb'));
  assert.equal(b.status, 0, b.stderr);
  // Our files carry no version key: the wheel's name gives it.
  assert.equal((JSON.parse(b.stdout) as { index_version: string }).index_version, TAG);
  const bad = await run('data', 'fetch', '--release', '99.0.0', '--source', 'gcs');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /error: release 99\.0\.0 was not found .*available releases: 24\.2\.2/);
});
