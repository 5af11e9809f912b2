// `idqs download --manifest` streams a manifest in chunks: on the pinned real
// release, a manifest written here by SQL spanning many chunks (the chunk made
// small through IDQS_DOWNLOAD_RESOLVE_CHUNK), mixing URL, folder and UID lines,
// repeats, comments, and unresolved lines scattered through it (folders no
// release has, series removed before the pinned release, studies), downloaded
// for real from s3rver holding one object per series: the folders downloaded
// are exactly the current versions SQL gives for the lines, every unresolved
// line is reported with its number, and the totals add up. A manifest with
// malformed lines in different chunks is refused naming each.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DEFAULT_STORES } from '../src/core/data/manifest.ts';
import { startServer, type TestServer } from './fixture.ts';
import { SKIP_REAL as skip, twoReleases, type TwoReleases } from './real-releases.ts';
import { bucketFolders, events, runCli, startS3, type S3Server } from './s3.ts';

let rel: TwoReleases;
let api: TestServer;
let s3: S3Server;
let tmp: string;

const CHUNK = 60;
const env = { IDQS_DOWNLOAD_RESOLVE_CHUNK: String(CHUNK) };

interface Manifest {
  lines: string[];
  /** Line numbers (from 1) that must be reported as not downloaded. */
  unresolved: Set<number>;
  /** crdc_series_uuid of every series the manifest must download. */
  want: Set<string>;
  /** Their aws_bucket. */
  buckets: Map<string, string>;
}
let m: Manifest;

before(async () => {
  if (skip) return;
  rel = await twoReleases();
  tmp = mkdtempSync(join(tmpdir(), 'idqs-dl-stream-'));
  // 450 current series by a fixed order, each written in one of three forms.
  const cur = await rel.rows(`
    SELECT crdc_series_uuid AS u, SeriesInstanceUID AS sid, aws_bucket AS b,
      row_number() OVER (ORDER BY crdc_series_uuid) AS n
    FROM cur_index
    WHERE SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index GROUP BY 1 HAVING count(*) > 1)
    ORDER BY crdc_series_uuid LIMIT 450`);
  // Versions of series the pinned release no longer has at all (removed: named nothing without --as-saved).
  const removed = await rel.rows(`
    SELECT crdc_series_uuid AS u, aws_bucket AS b FROM cur_prior
    WHERE crdc_series_uuid NOT IN (SELECT crdc_series_uuid FROM cur_index)
      AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index)
    ORDER BY crdc_series_uuid LIMIT 8`);
  const studies = await rel.rows(`SELECT DISTINCT StudyInstanceUID AS st FROM cur_index ORDER BY 1 LIMIT 5`);
  assert.equal(cur.length, 450);
  assert.equal(removed.length, 8, 'the pinned release has removed series to write into the manifest');
  const lines: string[] = ['# a manifest saved for a test', ''];
  const unresolved = new Set<number>();
  const want = new Set<string>();
  const buckets = new Map<string, string>();
  const bad = (line: string) => {
    lines.push(line);
    unresolved.add(lines.length);
  };
  let r = 0;
  let s = 0;
  for (const row of cur) {
    const n = Number(row.n);
    const u = String(row.u);
    lines.push(n % 3 === 0 ? `s3://${row.b}/${u}/*` : n % 3 === 1 ? `cp 's3://${row.b}/${u}/*' 'data/x/'` : String(row.sid));
    want.add(u);
    buckets.set(u, String(row.b));
    // Repeats of an earlier line download nothing more and are no failure.
    if (n % 50 === 0) lines.push(`s3://${row.b}/${u}/*`);
    if (n % 37 === 0) bad(`ffffffff-ffff-4fff-bfff-${String(n).padStart(12, '0')}`);
    if (n % 71 === 0 && r < removed.length) bad(`s3://${removed[r]!.b}/${removed[r++]!.u}/*`);
    if (n % 113 === 0 && s < studies.length) bad(String(studies[s++]!.st));
    if (n % 90 === 0) lines.push('', '# a comment');
  }
  // The made-up folders are in neither release table.
  const made = [...unresolved].map((l) => lines[l - 1]!).filter((l) => l.startsWith('ffffffff'));
  const known = await rel.rows(`SELECT count(*) AS n FROM (SELECT crdc_series_uuid FROM cur_index UNION ALL SELECT crdc_series_uuid FROM cur_prior)
    WHERE crdc_series_uuid IN (${made.map((u) => `'${u}'`).join(', ')})`);
  assert.equal(Number(known[0]!.n), 0);
  m = { lines, unresolved, want, buckets };
  assert.ok(lines.length > CHUNK * 6, `the manifest spans many chunks (${lines.length} lines)`);

  // One small object per series, in the folder of its bucket (cloud1's names are the index's).
  const objects = join(tmp, 'objects');
  const folders = bucketFolders(DEFAULT_STORES);
  const byName = Object.fromEntries(Object.entries(folders).map(([name, folder]) => [name, folder]));
  for (const [u, b] of buckets) {
    const dir = join(objects, byName[b] ?? b, u);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${u}.dcm`), u);
  }
  s3 = await startS3(objects, folders, join(tmp, 's3'));
  api = await startServer({ cloud1Endpoint: s3.url, cloud2Endpoint: s3.url }, rel.current.db);
  assert.deepEqual(api.ctx.dataset.stores.cloud1.bucket_map, DEFAULT_STORES.cloud1.bucket_map);
});

after(async () => {
  await api?.close();
  await s3?.close();
  rel?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('a manifest of many chunks downloads exactly its lines\' current series and reports each unresolved line by number', { skip }, async () => {
  const file = join(tmp, 'manifest.txt');
  writeFileSync(file, m.lines.join('\n') + '\n');
  const out = join(tmp, 'out');
  const r = await runCli(['download', '--manifest', file, '--layout', '%crdc_series_uuid', '--api', api.url, '--out', out, '--json', '--jobs', '4', '--yes'], { env });
  assert.equal(r.code, 1, `unresolved lines make the run fail: ${r.stderr.slice(0, 2000)}`);
  const ev = events(r.stdout);

  // Every series folder, each holding its one object.
  const got = readdirSync(out).sort();
  assert.deepEqual(got, [...m.want].sort());
  for (const u of got) assert.deepEqual(readdirSync(join(out, u)), [`${u}.dcm`]);

  // Each unresolved line named once with its number, and nothing else reported as not downloaded.
  const reported = ev
    .filter((e) => e.event === 'warning' && /: not downloaded: /.test(String(e.message)))
    .map((e) => Number(/manifest\.txt:(\d+): not downloaded/.exec(String(e.message))![1]));
  assert.deepEqual(reported.sort((a, b) => a - b), [...m.unresolved].sort((a, b) => a - b));
  for (const l of m.unresolved) {
    const w = ev.find((e) => e.event === 'warning' && String(e.message).startsWith(`${file}:${l}: not downloaded: `))!;
    const text = m.lines[l - 1]!;
    // The reason says what the line is: a study, a removed series, or a folder no release has.
    if (/^\d/.test(text)) assert.match(String(w.message), /a study/);
    else if (text.startsWith('s3://')) assert.match(String(w.message), /removed from the release/);
    else assert.match(String(w.message), /ffffffff/);
  }
  const recap = ev.find((e) => e.event === 'warning' && /name nothing downloaded/.test(String(e.message)))!;
  assert.match(String(recap.message), new RegExp(`^${m.unresolved.size} line\\(s\\)`));
  // The final report recalls them after the transfers, by number (the first 50).
  const last = ev.filter((e) => e.event === 'warning').at(-1)!;
  const sorted = [...m.unresolved].sort((a, b) => a - b);
  assert.match(String(last.message), new RegExp(`^${m.unresolved.size} line\\(s\\) of .* were not downloaded .*: lines ${sorted.slice(0, 50).join(', ')}( and ${m.unresolved.size - 50} more)?$`));
  assert.ok(ev.indexOf(last) > ev.findLastIndex((e) => e.event === 'file'));

  const cohort = ev.find((e) => e.event === 'cohort')!;
  assert.equal(cohort.series, m.want.size);
  const size = await rel.rows(`SELECT sum(series_size_MB) AS mb FROM cur_index WHERE crdc_series_uuid IN (${[...m.want].map((u) => `'${u}'`).join(', ')})`);
  assert.ok(Math.abs(Number(cohort.index_bytes) - Math.round(Number(size[0]!.mb) * 1e6)) <= 1, `index_bytes ${cohort.index_bytes}`);
  const summary = ev.find((e) => e.event === 'summary')!;
  assert.equal(summary.series, m.want.size);
  assert.equal(summary.downloaded, m.want.size);
  assert.equal(summary.total_bytes, 36 * m.want.size);
  assert.equal(summary.failed, m.unresolved.size);
  assert.equal(summary.files, m.want.size + m.unresolved.size);
});

test('malformed lines in different chunks refuse the manifest, naming each line, before anything is downloaded', { skip }, async () => {
  const lines = [...m.lines];
  const at = [5, CHUNK * 3 + 7, lines.length - 2];
  for (const l of at) lines[l - 1] = 'not a series, just words';
  const file = join(tmp, 'malformed.txt');
  writeFileSync(file, lines.join('\n'));
  const out = join(tmp, 'malformed-out');
  const r = await runCli(['download', '--manifest', file, '--api', api.url, '--out', out], { env });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /3 line\(s\) are not identifiers or URLs/);
  for (const l of at) assert.match(r.stderr, new RegExp(`malformed\\.txt:${l}: not an identifier or URL`));
  assert.equal(existsSync(out), false);
});
