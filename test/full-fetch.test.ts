// `idqs data fetch --tables …,full` brings a release's full metadata from a
// metadata bucket (s3rver holding the generated export of the test dataset,
// laid out as s3://idc-open-metadata/bigquery_export/idc_v<N>/<table>/*.parquet)
// into the release folder, after the release itself (a local release server).
// Checked: the files arrive byte for byte and are recorded; repeated, nothing
// is downloaded again; a fetch killed mid-table leaves no part of that table
// in place and, repeated, resumes from the parts it verified; a corrupted
// object is refused and its table left out; too little disk is refused before
// the first byte, naming the space needed and free.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDataset } from './fixture.ts';
import { makeReleaseLayout, startReleaseServer, TAG, type ReleaseServer } from './release-server.ts';
import { faultProxy, runCli, startCli, startS3, type S3Server } from './s3.ts';

const BUCKET = 'idc-open-metadata';
const BAD_BUCKET = 'idc-open-metadata-damaged';
const N = TAG.split('.')[0]!;
const PREFIX = `bigquery_export/idc_v${N}`;
const TABLES = ['dicom_all', 'segmentations', 'measurement_groups', 'quantitative_measurements', 'qualitative_measurements'];
let tmp: string;
let rel: ReleaseServer;
let s3: S3Server;
/** The generated export, as the bucket holds it. */
let src: string;

const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
const env = (cache: string, endpoint: string, extra: Record<string, string> = {}) => ({
  IDQS_CACHE_DIR: cache,
  IDQS_RELEASE_GCS_URL: `${rel.url}/gcs`,
  IDQS_METADATA_S3_ENDPOINT: endpoint,
  IDQS_METADATA_BUCKET: BUCKET,
  IDQS_FETCH_RETRY_BASE_MS: '10',
  ...extra,
});
const args = (tables: string) => ['data', 'fetch', '--release', TAG, '--tables', tables, '--no-build'];

interface Out {
  folder: string;
  full: { tables: string[]; downloaded: string[]; reused: string[]; bytes: number; needed_bytes: number };
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'idqs-full-fetch-'));
  const dataset = (await testDataset()).folder;
  await makeReleaseLayout(dataset, join(tmp, 'srv'));
  rel = await startReleaseServer(join(tmp, 'srv'));
  const generated = join(dataset, 'bigquery_export', readdirSync(join(dataset, 'bigquery_export'))[0]!);
  src = join(tmp, 'objects', 'meta', PREFIX);
  mkdirSync(src, { recursive: true });
  for (const t of TABLES) cpSync(join(generated, t), join(src, t), { recursive: true });
  cpSync(join(tmp, 'objects', 'meta'), join(tmp, 'objects', 'meta-bad'), { recursive: true });
  const store = join(tmp, 's3data');
  s3 = await startS3(join(tmp, 'objects'), { [BUCKET]: 'meta', [BAD_BUCKET]: 'meta-bad' }, store);
  // Damage segmentations in the second bucket: same size, other bytes, the ETag of the original.
  const obj = join(store, BAD_BUCKET, PREFIX, 'segmentations', '000000000000.parquet._S3rver_object');
  const good = readFileSync(obj);
  rmSync(obj);
  writeFileSync(obj, Buffer.alloc(good.length, 0x41));
  writeFileSync(`${obj}.md5`, createHash('md5').update(good).digest('hex'));
});

after(async () => {
  await rel?.close();
  await s3?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('fetch --tables core,full: every table of the export arrives byte for byte, recorded; repeated, nothing is downloaded again', async () => {
  const cache = join(tmp, 'cache-1');
  const r = await runCli(args('core,full'), { env: env(cache, s3.url) });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Out;
  assert.deepEqual(out.full.tables, TABLES);
  const dest = join(out.folder, PREFIX);
  let files = 0;
  for (const t of TABLES) {
    const want = readdirSync(join(src, t)).sort();
    assert.deepEqual(readdirSync(join(dest, t)).sort(), want, t);
    for (const f of want) assert.equal(sha(join(dest, t, f)), sha(join(src, t, f)), `${t}/${f}`);
    files += want.length;
  }
  assert.equal(out.full.downloaded.length, files);
  const bytes = TABLES.flatMap((t) => readdirSync(join(src, t)).map((f) => readFileSync(join(src, t, f)).length)).reduce((a, b) => a + b, 0);
  assert.equal(out.full.bytes, bytes);
  assert.equal(out.full.needed_bytes, bytes);
  const record = JSON.parse(readFileSync(join(dest, 'full-metadata.json'), 'utf8')) as { release: number; checksums: Record<string, string> };
  assert.equal(record.release, Number(N));
  assert.equal(Object.keys(record.checksums).length, files);
  assert.match(r.stderr, new RegExp(`fetching the full metadata \\(dicom_all, .*: ${files} objects, .* from s3://${BUCKET}/${PREFIX}/`));
  assert.match(r.stderr, /fetch: dicom_all\/000000000001\.parquet /);
  assert.ok(!existsSync(join(out.folder, '.full-partial', `v${N}`)), 'no staged parts are left');

  const again = await runCli(args('dicom_all,segmentations'), { env: env(cache, s3.url) });
  assert.equal(again.code, 0, again.stderr);
  const out2 = JSON.parse(again.stdout) as Out;
  assert.deepEqual(out2.full.downloaded, []);
  assert.equal(out2.full.needed_bytes, 0);
  assert.equal(out2.full.reused.length, readdirSync(join(src, 'dicom_all')).length + readdirSync(join(src, 'segmentations')).length);
});

test('a fetch killed mid-table leaves none of that table in place; repeated, it resumes from the verified parts', async () => {
  const cache = join(tmp, 'cache-2');
  const part1 = `/${BUCKET}/${PREFIX}/dicom_all/000000000001.parquet`;
  const hang = await faultProxy(s3.url, (req) => (req.url === part1 ? { hangAfter: 1000 } : null));
  const run = startCli(args('dicom_all'), { env: env(cache, hang.url) });
  const early = await Promise.race([hang.hung.then(() => null), run.done]);
  assert.equal(early, null, `the fetch ended before the hanging part: ${early?.stderr}`);
  // The other parts download beside the hanging one; kill only once one of them is verified,
  // or the test would depend on which request the proxy saw first.
  const staged = join(cache, 'releases', `${TAG}-gcs`, '.full-partial', `v${N}`, 'dicom_all');
  const etags = () => (existsSync(staged) ? readdirSync(staged).filter((f) => f.endsWith('.parquet.etag')) : []);
  for (const until = Date.now() + 20_000; etags().length === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  run.child.kill('SIGKILL');
  await run.done;
  await hang.close();
  const folder = join(cache, 'releases', `${TAG}-gcs`);
  assert.ok(!existsSync(join(folder, PREFIX, 'dicom_all')), 'half a table is never in place');
  const verified = readdirSync(staged).filter((f) => f.endsWith('.parquet.etag')).map((f) => f.slice(0, -5));
  assert.ok(verified.length >= 1, 'some parts were verified before the kill');

  const proxy = await faultProxy(s3.url, () => null);
  try {
    const r = await runCli(args('dicom_all'), { env: env(cache, proxy.url) });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Out;
    for (const f of verified) assert.ok(!proxy.requests.includes(`GET /${BUCKET}/${PREFIX}/dicom_all/${f}`), `${f} is not downloaded again`);
    assert.ok(proxy.requests.includes(`GET ${part1}`));
    assert.equal(out.full.reused.length, verified.length);
    for (const f of readdirSync(join(src, 'dicom_all'))) assert.equal(sha(join(folder, PREFIX, 'dicom_all', f)), sha(join(src, 'dicom_all', f)), f);
  } finally {
    await proxy.close();
  }
});

test('a corrupted object is refused: its table is not in place, the message names the object', async () => {
  const cache = join(tmp, 'cache-3');
  const r = await runCli(args('segmentations'), { env: env(cache, s3.url, { IDQS_METADATA_BUCKET: BAD_BUCKET }) });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, new RegExp(`s3://${BAD_BUCKET}/${PREFIX}/segmentations/000000000000\\.parquet: MD5 differs from the ETag`));
  assert.ok(!existsSync(join(cache, 'releases', `${TAG}-gcs`, PREFIX, 'segmentations')));
});

test('too little disk is refused before the first byte, naming the space needed and free', async () => {
  const cache = join(tmp, 'cache-4');
  const proxy = await faultProxy(s3.url, () => null);
  try {
    const r = await runCli(args('full'), { env: env(cache, proxy.url, { IDQS_FREE_SPACE_BYTES: '1000000' }) });
    assert.notEqual(r.code, 0);
    const need = TABLES.flatMap((t) => readdirSync(join(src, t)).map((f) => readFileSync(join(src, t, f)).length)).reduce((a, b) => a + b, 0);
    const gb = (n: number) => (n / 1e9).toFixed(n < 1e8 ? 3 : 1);
    assert.match(r.stderr, new RegExp(`not enough disk space in .*: the full-metadata tables \\(dicom_all, .*\\) need ${gb(need).replace('.', '\\.')} GB, 0\\.001 GB is free`));
    assert.deepEqual(proxy.requests.filter((q) => q.startsWith('GET') && q.includes('.parquet')), [], 'no part was downloaded');
  } finally {
    await proxy.close();
  }
});

test('an unknown table name is refused with the names there are', async () => {
  const r = await runCli(['data', 'fetch', '--release', TAG, '--tables', 'dicom_al', '--no-build'], { env: env(join(tmp, 'cache-5'), s3.url) });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /unknown table "dicom_al".*dicom_all/);
});
