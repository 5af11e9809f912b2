// End-to-end tests of `idqs download`: the real command against a real
// S3-compatible server (s3rver) on loopback holding DICOM objects written by
// the generator, and a real API server whose store endpoints point at it.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { spawn } from 'node:child_process';
import dicomParser from 'dicom-parser';
import { DEFAULT_STORES } from '../src/core/data/manifest.ts';
import { writeObjects, type ObjectsResult } from '../src/datagen/objects.ts';
import { lit } from '../src/core/data/sql.ts';
import { startServer, testDataset, type TestServer } from './fixture.ts';
import { bucketFolders, CLI, events, faultProxy, runCli, startCli, startS3, type S3Server } from './s3.ts';

let tmp: string;
let objects: string;
let written: ObjectsResult;
let s3: S3Server;
let api: TestServer;

before(async () => {
  const ds = await testDataset();
  tmp = mkdtempSync(join(tmpdir(), 'idqs-dl-'));
  objects = join(tmp, 'objects');
  written = await writeObjects({ from: ds.folder, out: objects, series: 20 });
  s3 = await startS3(objects, bucketFolders(DEFAULT_STORES), join(tmp, 's3'));
  // The service's stores point at the loopback server (the config of IDQS_CLOUD1_ENDPOINT / IDQS_CLOUD2_ENDPOINT).
  api = await startServer({ cloud1Endpoint: s3.url, cloud2Endpoint: s3.url });
  const complete = await api.ctx.engine.rows(
    `SELECT collection_id AS c, count(*) AS n, bool_or(Modality = 'SM') AS sm, bool_or(license_short_name LIKE '%NC%') AS nc
     FROM "index" WHERE collection_id IN (${written.complete_collections.map((c) => lit(c)).join(', ')}) GROUP BY 1 ORDER BY 1`,
  );
  COLL = String(complete.find((r) => Number(r.n) >= 2 && !r.nc && !r.sm)?.c);
  COLL2 = String(complete.find((r) => r.sm && r.c !== COLL)?.c);
  assert.deepEqual(api.ctx.dataset.stores.cloud1.bucket_map, DEFAULT_STORES.cloud1.bucket_map);
});

after(async () => {
  await api?.close();
  await s3?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

interface Expected {
  /** Relative path under --out with the default layout → source file of the object. */
  files: Map<string, string>;
  bytes: number;
}

/** A folder name as the s5cmd lines of manifest.txt write it: leading dots and unsafe characters become "_", nothing is empty. */
const safe = (v: string) => (v === '' ? '_' : v.replace(/^\.+/, '_').replace(/[^A-Za-z0-9._-]/g, '_'));

/** What a cohort should produce, from independent SQL over the instance table. */
async function expected(where: string, params: unknown[], layout: 'default' | 'flat' | 'uuid' = 'default'): Promise<Expected> {
  const rows = await api.ctx.engine.rows(
    `SELECT i.collection_id, i.PatientID, i.StudyInstanceUID, i.Modality, i.SeriesInstanceUID, i.aws_bucket, i.crdc_series_uuid, d.crdc_instance_uuid
     FROM (SELECT * FROM "index" WHERE ${where}) i JOIN v2.dicom_pivot d USING (SeriesInstanceUID)`,
    params as never,
  );
  const files = new Map<string, string>();
  let bytes = 0;
  for (const r of rows) {
    const name = `${r.crdc_instance_uuid}.dcm`;
    const folder =
      layout === 'flat'
        ? ''
        : layout === 'uuid'
          ? String(r.crdc_series_uuid)
          : [r.collection_id, r.PatientID, r.StudyInstanceUID, `${safe(String(r.Modality))}_${r.SeriesInstanceUID}`].map((v) => safe(String(v))).join('/');
    const src = join(objects, String(r.aws_bucket), String(r.crdc_series_uuid), name);
    files.set(folder ? `${folder}/${name}` : name, src);
    bytes += statSync(src).size;
  }
  return { files, bytes };
}

function listTree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

function assertTree(out: string, want: Expected): void {
  assert.deepEqual(listTree(out), [...want.files.keys()].sort());
  for (const [rel, src] of want.files) assert.ok(readFileSync(join(out, rel)).equals(readFileSync(src)), `${rel} differs from the stored object`);
}

/** Two of the whole collections written: one of several series under a commercial-use license, one with slides. */
let COLL: string;
let COLL2: string;

test('the generator wrote whole collections of valid DICOM files whose UIDs match the index', async () => {
  assert.ok(written.complete_collections.includes(COLL) && written.complete_collections.includes(COLL2), JSON.stringify(written));
  const want = await expected('collection_id = ?', [COLL]);
  assert.equal(want.files.size, written.objects > 0 ? want.files.size : -1);
  const rows = await api.ctx.engine.rows(
    `SELECT d.crdc_instance_uuid, d.SOPInstanceUID, i.SeriesInstanceUID, i.StudyInstanceUID, i.PatientID, i.Modality, i.SOPClassUID, i.aws_bucket, i.crdc_series_uuid
     FROM (SELECT * FROM "index" WHERE collection_id = ?) i JOIN v2.dicom_pivot d USING (SeriesInstanceUID)`,
    [COLL2],
  );
  assert.ok(rows.length > 0);
  for (const r of rows) {
    const bytes = readFileSync(join(objects, String(r.aws_bucket), String(r.crdc_series_uuid), `${r.crdc_instance_uuid}.dcm`));
    assert.equal(bytes.subarray(128, 132).toString('latin1'), 'DICM');
    const ds = dicomParser.parseDicom(new Uint8Array(bytes));
    assert.equal(ds.string('x00020010'), '1.2.840.10008.1.2.1');
    assert.equal(ds.string('x00080018'), r.SOPInstanceUID);
    assert.equal(ds.string('x00020003'), r.SOPInstanceUID);
    assert.equal(ds.string('x00080016'), r.SOPClassUID);
    assert.equal(ds.string('x0020000e'), r.SeriesInstanceUID);
    assert.equal(ds.string('x0020000d'), r.StudyInstanceUID);
    assert.equal(ds.string('x00100020'), r.PatientID);
    assert.equal(ds.string('x00080060'), r.Modality);
  }
});

test('download --collection through the API: default layout, files equal to the stored objects, JSON summary', async () => {
  const out = join(tmp, 'by-collection');
  // Listing pages of 2 keys: series with more objects are listed through continuation tokens.
  const r = await runCli(['download', '--collection', COLL, COLL2, '--api', api.url, '--out', out, '--json', '--jobs', '4'], { env: { IDQS_DOWNLOAD_LIST_PAGE: '2' } });
  assert.equal(r.code, 0, r.stderr);
  const want = await expected('collection_id IN (?, ?)', [COLL, COLL2]);
  assertTree(out, want);
  const ev = events(r.stdout);
  const cohort = ev.find((e) => e.event === 'cohort')!;
  const series = await api.ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE collection_id IN (?, ?)`, [COLL, COLL2]);
  assert.equal(cohort.series, Number(series!.n));
  assert.ok(Array.isArray(cohort.licenses) && (cohort.licenses as unknown[]).length > 0);
  const summary = ev.find((e) => e.event === 'summary')!;
  assert.equal(summary.downloaded, want.files.size);
  assert.equal(summary.bytes, want.bytes);
  assert.equal(summary.failed, 0);
  assert.equal(ev.filter((e) => e.event === 'file' && e.status === 'downloaded').length, want.files.size);

  // A second run skips every complete file and downloads nothing.
  const again = await runCli(['download', '--collection', COLL, COLL2, '--api', api.url, '--out', out, '--json']);
  assert.equal(again.code, 0, again.stderr);
  const s2 = events(again.stdout).find((e) => e.event === 'summary')!;
  assert.equal(s2.skipped, want.files.size);
  assert.equal(s2.downloaded, 0);
  assert.equal(s2.bytes, 0);
});

test('download --dry-run prints the object count and the exact sum of object sizes, and writes nothing', async () => {
  const out = join(tmp, 'dry');
  const want = await expected('collection_id = ?', [COLL2]);
  const r = await runCli(['download', '--filters', JSON.stringify({ terms: { collection_id: [COLL2] } }), '--api', api.url, '--out', out, '--dry-run', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const plan = events(r.stdout).find((e) => e.event === 'plan')!;
  assert.deepEqual(plan, { event: 'plan', files: want.files.size, bytes: want.bytes });
  assert.equal(existsSync(out), false);
  const human = await runCli(['download', '--collection', COLL2, '--api', api.url, '--out', out, '--dry-run']);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stderr, new RegExp(`would download ${want.files.size} files, .* \\(${want.bytes} bytes\\)`));
  assert.match(human.stderr, /licenses: CC BY/);
});

async function manifestTxt(filters: unknown, format = 'urls'): Promise<string> {
  const r = await api.post('/v3/cohort/manifest.txt', { filters, format });
  assert.equal(r.status, 200);
  return r.text();
}

test('download --manifest: URL lines, s5cmd lines and comments; flat layout and the API-resolved default layout', async () => {
  const urls = await manifestTxt({ terms: { collection_id: [COLL] } });
  const s5 = await manifestTxt({ terms: { collection_id: [COLL2] } }, 's5cmd');
  assert.match(s5, /^# Run with/);
  const file = join(tmp, 'mixed-manifest.txt');
  writeFileSync(file, `# a comment\n\n${urls}${s5}`);
  const both = ['collection_id IN (?, ?)', [COLL, COLL2]] as const;

  const flat = join(tmp, 'manifest-flat');
  const r1 = await runCli(['download', '--manifest', file, '--layout', 'flat', '--api', api.url, '--out', flat]);
  assert.equal(r1.code, 0, r1.stderr);
  assertTree(flat, await expected(both[0], [...both[1]], 'flat'));

  const def = join(tmp, 'manifest-default');
  const r2 = await runCli(['download', '--manifest', file, '--api', api.url, '--out', def]);
  assert.equal(r2.code, 0, r2.stderr);
  assertTree(def, await expected(both[0], [...both[1]]));
});

test('download --manifest reports sizes and licenses from the service: what each license allows is its verdict', async () => {
  const file = join(tmp, 'm-licenses.txt');
  writeFileSync(file, await manifestTxt({ terms: { collection_id: [COLL, COLL2] } }));
  const r = await runCli(['download', '--manifest', file, '--api', api.url, '--out', join(tmp, 'm-licenses'), '--dry-run', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const cohort = events(r.stdout).find((e) => e.event === 'cohort')! as { licenses: { license_short_name: string | null; series: number; commercial_use_allowed: boolean | null }[]; index_bytes: number };
  const want = await api.ctx.engine.rows(
    `SELECT license_short_name AS l, count(*) AS n, sum(series_size_MB) AS mb FROM "index" WHERE collection_id IN (?, ?) GROUP BY 1 ORDER BY n DESC, l`,
    [COLL, COLL2],
  );
  assert.deepEqual(
    cohort.licenses.map((l) => [l.license_short_name, l.series]),
    want.map((w) => [w.l, Number(w.n)]),
  );
  // CC BY allows commercial use, CC BY-NC does not (the downloader used to say neither for CC BY).
  for (const l of cohort.licenses) {
    const expected = l.license_short_name === null ? null : /NC/.test(l.license_short_name) ? false : /^CC BY/.test(l.license_short_name) ? true : null;
    assert.equal(l.commercial_use_allowed, expected, String(l.license_short_name));
  }
  assert.ok(cohort.licenses.some((l) => l.commercial_use_allowed === true), 'the cohort has a license that allows commercial use');
  assert.equal(cohort.index_bytes, Math.round(want.reduce((s, w) => s + Number(w.mb), 0) * 1e6));
});

test('download --manifest without a reachable API: files go to <crdc_series_uuid>/ folders, with a warning', async () => {
  const file = join(tmp, 'm-noapi.txt');
  writeFileSync(file, await manifestTxt({ terms: { collection_id: [COLL] } }));
  const out = join(tmp, 'manifest-noapi');
  const r = await runCli(['download', '--manifest', file, '--api', 'http://127.0.0.1:9', '--endpoint', s3.url, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /cannot reach the IDQS API at http:\/\/127\.0\.0\.1:9/);
  assert.match(r.stderr, /<crdc_series_uuid>/);
  assertTree(out, await expected('collection_id = ?', [COLL], 'uuid'));
});

test('--source gcs reads the second store: its bucket names, same files', async () => {
  const out = join(tmp, 'cloud2');
  const coll = String(
    (await api.ctx.engine.one(
      `SELECT collection_id FROM "index" WHERE aws_bucket = 'idc-open-data-two' AND collection_id IN (${written.complete_collections.map(() => '?').join(', ')}) ORDER BY 1 LIMIT 1`,
      written.complete_collections,
    ))?.collection_id ?? COLL,
  );
  const r = await runCli(['download', '--collection', coll, '--source', 'gcs', '--api', api.url, '--out', out, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assertTree(out, await expected('collection_id = ?', [coll]));
  const map = api.ctx.dataset.stores.cloud2.bucket_map;
  const buckets = await api.ctx.engine.rows(`SELECT DISTINCT aws_bucket FROM "index" WHERE collection_id = ?`, [coll]);
  const urls = events(r.stdout).filter((e) => e.event === 'file').map((e) => String(e.url));
  for (const b of buckets) assert.ok(urls.some((u) => u.startsWith(`s3://${map[String(b.aws_bucket)]}/`)), `no URL in the cloud2 bucket of ${b.aws_bucket}`);
});

test('a series missing from the store and an object that vanished are reported; exit status 1; the rest is downloaded', async () => {
  const urls = await manifestTxt({ terms: { collection_id: [COLL] } });
  const file = join(tmp, 'm-missing.txt');
  writeFileSync(file, `${urls}s3://idc-open-data/00000000-0000-4000-8000-000000000000/*\n`);
  const want = await expected('collection_id = ?', [COLL], 'uuid');
  const [victim] = [...want.files.keys()];
  const proxy = await faultProxy(s3.url, (req) => (req.method === 'GET' && req.url!.endsWith(victim!.split('/')[1]!) ? { status: 404 } : null));
  try {
    const out = join(tmp, 'missing');
    const r = await runCli(['download', '--manifest', file, '--layout', '%crdc_series_uuid', '--api', api.url, '--endpoint', proxy.url, '--out', out]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /no objects under s3:\/\/idc-open-data\/00000000-0000-4000-8000-000000000000\/\*/);
    assert.match(r.stderr, /HTTP 404/);
    assert.match(r.stderr, new RegExp(`${want.files.size} downloaded|${want.files.size - 1} downloaded.*2 failed`));
    want.files.delete(victim!);
    assertTree(out, want);
  } finally {
    await proxy.close();
  }
});

test('5xx answers and a dropped connection are retried with backoff until the download succeeds', async () => {
  const failed = new Map<string, number>();
  const proxy = await faultProxy(s3.url, (req) => {
    const key = req.url!.split('?')[0]!;
    const n = (failed.get(key) ?? 0) + 1;
    failed.set(key, n);
    // Every request fails once (a listing with 503, objects with 500); objects then lose their connection mid-body once.
    if (n === 1) return { status: req.url!.includes('list-type') ? 503 : 500 };
    if (n === 2 && key.endsWith('.dcm')) return { dropAfter: 200 };
    return null;
  });
  try {
    const out = join(tmp, 'retry');
    const r = await runCli(['download', '--collection', COLL, '--api', api.url, '--endpoint', proxy.url, '--out', out, '--retries', '3']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /retry 1\/3 .*HTTP 500/);
    assert.match(r.stderr, /retry 1\/3 .*HTTP 503/);
    assert.match(r.stderr, /retry 2\/3 .*(premature close|aborted|socket hang up|received \d+ bytes)/i);
    assertTree(out, await expected('collection_id = ?', [COLL]));
  } finally {
    await proxy.close();
  }
  const always = await faultProxy(s3.url, (req) => (req.url!.includes('list-type') ? null : { status: 500 }));
  try {
    const noRetry = await runCli(['download', '--collection', COLL, '--api', api.url, '--endpoint', always.url, '--out', join(tmp, 'r0'), '--retries', '0', '--quiet']);
    assert.equal(noRetry.code, 1);
    assert.match(noRetry.stderr, /failed: .*HTTP 500/);
    assert.match(noRetry.stderr, /finished with failures/);
    assert.deepEqual(listTree(join(tmp, 'r0')).filter((f) => !f.endsWith('/')), []);
  } finally {
    await always.close();
  }
});

test('killed mid-transfer: no partial file under a final name; a rerun completes every file', async () => {
  const out = join(tmp, 'killed');
  const want = await expected('collection_id = ?', [COLL2]);
  for (const sig of ['SIGKILL', 'SIGINT'] as const) {
    const proxy = await faultProxy(s3.url, (req) => (req.method === 'GET' && req.url!.endsWith('.dcm') ? { hangAfter: 700 } : null));
    try {
      const run = startCli(['download', '--collection', COLL2, '--api', api.url, '--endpoint', proxy.url, '--out', out, '--jobs', '2']);
      // A command that ends before any transfer hangs is a failure, not a wait without end.
      const early = await Promise.race([proxy.hung.then(() => null), run.done]);
      assert.equal(early, null, `the download ended before a transfer started: ${early?.stderr}`);
      // Let the client write the partial body to its temporary file.
      await new Promise((r) => setTimeout(r, 300));
      run.child.kill(sig);
      const res = await run.done;
      if (sig === 'SIGINT') {
        assert.equal(res.code, 130, res.stderr);
        assert.match(res.stderr, /interrupted/);
        assert.deepEqual(listTree(out).filter((f) => f.endsWith('.idqs-part')), [], 'SIGINT removes temporary files');
      }
      // Whatever has a final name is complete and identical to the stored object.
      for (const f of listTree(out).filter((x) => x.endsWith('.dcm'))) assert.ok(readFileSync(join(out, f)).equals(readFileSync(want.files.get(f)!)), f);
      assert.ok(listTree(out).filter((f) => f.endsWith('.dcm')).length < want.files.size);
    } finally {
      await proxy.close();
    }
  }
  const r = await runCli(['download', '--collection', COLL2, '--api', api.url, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assertTree(out, want);
});

test('the idqs commands of the manifest payload run verbatim and download exactly the cohort', async () => {
  const body = (await (await api.post('/v3/cohort/manifest', { filters: { terms: { collection_id: [COLL] } } })).json()) as {
    download: { commands: { idqs: string[]; save_manifest: string } };
  };
  const { idqs, save_manifest } = body.download.commands;
  assert.equal(idqs.length, 3);
  assert.match(idqs[2]!, /--manifest idqs_manifest\.txt/);
  const bin = join(tmp, 'bin');
  mkdirSync(bin, { recursive: true });
  if (!existsSync(join(bin, 'idqs'))) symlinkSync(CLI, join(bin, 'idqs'));
  const want = await expected('collection_id = ?', [COLL]);
  const scripts = [[idqs[0]!], [idqs[1]!], [save_manifest, idqs[2]!]];
  for (const [i, lines] of scripts.entries()) {
    const cwd = join(tmp, `verbatim-${i}`);
    mkdirSync(cwd, { recursive: true });
    const script = lines.join(' && ');
    const res = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const c = spawn('sh', ['-c', script], { cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr.on('data', (d) => (err += d));
      c.on('close', (code) => resolve({ code, err }));
    });
    assert.equal(res.code, 0, `${script}\n${res.err}`);
    assertTree(join(cwd, 'idqs-data'), want);
  }
});

test('bad input: clear errors and exit status 2', async () => {
  const bad = join(tmp, 'bad.txt');
  writeFileSync(bad, 's3://idc-open-data/abc/*\nhttps://example.org/x\n');
  const r1 = await runCli(['download', '--manifest', bad, '--api', api.url, '--out', join(tmp, 'bad')]);
  assert.equal(r1.code, 2);
  // Every line that is no identifier or URL is named, and nothing is downloaded.
  assert.match(r1.stderr, /2 line\(s\) are not identifiers or URLs/);
  assert.match(r1.stderr, /bad\.txt:1: the folder "abc" of s3:\/\/idc-open-data\/abc\/\* is not a crdc_series_uuid/);
  assert.match(r1.stderr, /bad\.txt:2: not an identifier or URL/);
  const r2 = await runCli(['download', '--out', join(tmp, 'bad')]);
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, /--manifest FILE, --collection ID/);
  const r3 = await runCli(['download', '--collection', COLL, '--source', 'azure', '--out', join(tmp, 'bad')]);
  assert.notEqual(r3.code, 0);
  assert.match(r3.stderr, /cloud1 \(or aws\), cloud2 \(or gcs\)/);
  const r4 = await runCli(['download', '--filters', '{"terms":', '--api', api.url]);
  assert.equal(r4.code, 2);
  assert.match(r4.stderr, /--filters is not valid JSON/);
  const r5 = await runCli(['download', '--collection', 'no_such_collection', '--api', api.url]);
  assert.equal(r5.code, 2);
  assert.match(r5.stderr, /cohort is empty/);
  // A cohort above the confirmation threshold, with no terminal to ask on, needs --yes.
  const r6 = await runCli(['download', '--collection', COLL, '--api', api.url, '--out', join(tmp, 'big'), '--confirm-above', '1MB']);
  assert.equal(r6.code, 2);
  assert.match(r6.stderr, /above 1\.00 MB.*--yes/);
  assert.equal(existsSync(join(tmp, 'big')), false);
  const r7 = await runCli(['download', '--collection', COLL, '--api', api.url, '--out', join(tmp, 'big'), '--confirm-above', '1MB', '--yes', '--quiet']);
  assert.equal(r7.code, 0, r7.stderr);
  assert.equal(r7.stderr, '');
  assertTree(join(tmp, 'big'), await expected('collection_id = ?', [COLL]));
});
