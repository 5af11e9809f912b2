// Resolving what users saved, on the real releases: a manifest of the earlier
// release (test/real-release.json's previous, 24.2.2) built by SQL here in
// every form users have, resolved by a real server over the pinned release
// (25.0.5); each line's class, current version, named version and last
// release are compared with SQL written here over both releases' Parquet
// files. Also the public Python client's own test manifests (both stores, a
// prior-version manifest, a bogus bucket), a v19-era manifest of a collection
// whose UIDs changed, the MCP tool, and the limits.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ResolveWire } from '../src/contract/resolve-schemas.ts';
import { planSaved } from '../src/download/saved.ts';
import { startServer, type TestServer } from './fixture.ts';
import { SKIP_REAL as skip, twoReleases, type TwoReleases } from './real-releases.ts';

let rel: TwoReleases;
let s: TestServer;

before(async () => {
  if (skip) return;
  rel = await twoReleases();
  s = await startServer({}, rel.current.db);
});
after(async () => {
  await s?.close();
  rel?.close();
});

async function resolve(body: unknown, status = 200): Promise<ResolveWire> {
  const r = await s.post('/v3/series/resolve', body);
  const out = (await r.json()) as ResolveWire;
  assert.equal(r.status, status, JSON.stringify(out).slice(0, 400));
  return out;
}

type Row = Record<string, unknown>;

/** The class SQL gives an identifier: a folder (u) or a series UID (sid), over the pinned release's index and prior versions. */
const EXPECTED = `CASE WHEN form = 'uid' THEN
    CASE WHEN sid IN (SELECT SeriesInstanceUID FROM cur_index) AND sid IN (SELECT SeriesInstanceUID FROM cur_prior) THEN 'revised'
         WHEN sid IN (SELECT SeriesInstanceUID FROM cur_index) THEN 'current'
         WHEN sid IN (SELECT SeriesInstanceUID FROM cur_prior) THEN 'removed' ELSE 'unknown' END
  ELSE
    CASE WHEN u IN (SELECT crdc_series_uuid FROM cur_index) THEN 'current'
         WHEN u IN (SELECT crdc_series_uuid FROM cur_prior) AND sid IN (SELECT SeriesInstanceUID FROM cur_index) THEN 'revised'
         WHEN u IN (SELECT crdc_series_uuid FROM cur_prior) THEN 'removed' ELSE 'unknown' END
  END`;

/** A manifest line of each form users have, written from a row's bucket, folder and UID. */
function lineOf(r: Row): string {
  const u = String(r.u);
  switch (r.form) {
    case 'cp_client':
      return `cp s3://${r.b}/${u}/* .`;
    case 'cp_ours':
      return `cp 's3://${r.b}/${u}/*' 'idqs-data/${r.c}/${r.sid}/'`;
    case 'url':
      return `s3://${r.b}/${u}/*`;
    case 'gs':
      return `gs://${r.b2}/${u}/*`;
    case 'bare_uuid':
      return u.toUpperCase();
    default:
      return String(r.sid);
  }
}

const FORMS = `['cp_client', 'cp_ours', 'url', 'gs', 'bare_uuid', 'uid']`;
const CLOUD2 = `CASE aws_bucket WHEN 'idc-open-data-two' THEN 'idc-open-idc1' WHEN 'idc-open-data-cr' THEN 'idc-open-cr' ELSE aws_bucket END`;

test('a manifest of the earlier release, in every form, resolved against the pinned one: each line as SQL over both releases says', { skip }, async () => {
  // Per group of the earlier release's series (kept, revised since, gone since), up to 150 by a fixed order, each in one of the forms.
  const sample = await rel.rows(`
    WITH v AS (
      SELECT SeriesInstanceUID AS sid, crdc_series_uuid AS u, aws_bucket AS b, ${CLOUD2} AS b2, collection_id AS c,
        CASE WHEN crdc_series_uuid IN (SELECT crdc_series_uuid FROM cur_index) THEN 'kept'
             WHEN SeriesInstanceUID IN (SELECT SeriesInstanceUID FROM cur_index) THEN 'revised' ELSE 'gone' END AS grp
      FROM prev_index),
    s AS (SELECT *, row_number() OVER (PARTITION BY grp ORDER BY hash(u), u) AS k FROM v QUALIFY k <= 150),
    f AS (SELECT *, ${FORMS}[1 + (k % 6)::INT] AS form FROM s)
    SELECT f.*, ${EXPECTED} AS expected,
      (SELECT crdc_series_uuid FROM cur_index i WHERE i.SeriesInstanceUID = f.sid) AS cur_u,
      (SELECT max(max_idc_version) FROM cur_prior p WHERE p.crdc_series_uuid = f.u) AS named_max,
      (SELECT max(max_idc_version) FROM cur_prior p WHERE p.SeriesInstanceUID = f.sid) AS last_v
    FROM f ORDER BY grp, k`);
  for (const g of ['kept', 'revised', 'gone']) assert.ok(sample.filter((r) => r.grp === g).length >= 100, `the earlier release has series ${g} in the pinned one`);
  const header = ['# saved from IDC v24 for a paper', '# s5cmd --no-sign-request --endpoint-url https://s3.amazonaws.com run manifest.s5cmd'];
  const text = [...header, 'series_aws_url', ...sample.map(lineOf), '', 'cp nothing here', 'not-an-identifier', '00000000-0000-4000-8000-000000000000', '1.2.3.4.5.6.7.8.9'].join('\n');
  const t0 = Date.now();
  const out = await resolve({ text });
  const ms = Date.now() - t0;
  assert.equal(out.idc_version, `v${rel.current.build.index_version.split('.')[0]}`);
  // Every line is accounted for: the totals add up to the lines sent, and every non-blank, non-comment line is listed once, in order.
  const lineCount = text.split('\n').length;
  const t = out.totals;
  assert.equal(t.lines, lineCount);
  assert.equal(t.blank + t.comments + t.header + t.current + t.revised + t.removed + t.unknown + t.invalid, lineCount);
  assert.equal(out.lines.length, lineCount - t.blank - t.comments);
  assert.deepEqual([t.comments, t.blank, t.header], [2, 1, 1]);
  assert.deepEqual(out.lines.map((l) => l.line), [...Array(lineCount).keys()].map((i) => i + 1).filter((n) => n > 2 && n !== 3 + sample.length + 1));
  assert.equal(out.lines[0]!.class, 'header');

  const byClass: Record<string, number> = {};
  sample.forEach((r, i) => {
    const l = out.lines[1 + i]!;
    const what = `line ${l.line} (${r.form}, ${r.grp}): ${lineOf(r)}`;
    assert.equal(l.class, r.expected, what);
    byClass[String(r.expected)] = (byClass[String(r.expected)] ?? 0) + 1;
    assert.equal(l.SeriesInstanceUID, r.sid, what);
    assert.equal(l.kind, r.form === 'uid' ? 'SeriesInstanceUID' : 'crdc_series_uuid', what);
    if (r.form !== 'uid') assert.equal(l.id, r.u, what);
    if (l.class === 'current' || l.class === 'revised') assert.equal(l.current?.crdc_series_uuid, r.cur_u, what);
    if (l.class === 'revised' && r.form !== 'uid') {
      // The version the line named: the release's prior versions say until when it was served, and its objects' URL.
      assert.equal(l.named?.crdc_series_uuid, r.u, what);
      assert.equal(l.named?.max_idc_version, Number(r.named_max), what);
      assert.match(l.named?.series_aws_url ?? '', new RegExp(`^s3://[a-z0-9-]+/${r.u}/\\*$`), what);
    }
    if (l.class === 'removed') {
      assert.equal(l.last_idc_version, Number(r.last_v), what);
      assert.equal(l.current, undefined, what);
      assert.ok(l.versions!.some((v) => v.crdc_series_uuid === r.u), what);
    }
  });
  // Kept series are current when named by folder; gone ones are removed (last served by the earlier release); revised ones revised.
  for (const r of sample) {
    if (r.form === 'uid') continue;
    assert.equal(r.expected, { kept: 'current', revised: 'revised', gone: 'removed' }[String(r.grp)]);
    if (r.grp !== 'kept') assert.equal(Number(r.named_max), Number(rel.previous.build.index_version.split('.')[0]));
  }
  assert.equal(t.current, byClass.current);
  assert.equal(t.revised, byClass.revised);
  assert.equal(t.removed, byClass.removed);
  // The bogus lines: a cp line without a URL and a word are invalid with their reason; a UUID and a UID nobody has are unknown.
  const tail = out.lines.slice(-4);
  assert.deepEqual(tail.map((l) => [l.class, l.kind ?? null]), [['invalid', null], ['invalid', null], ['unknown', 'crdc_series_uuid'], ['unknown', 'DICOM UID']]);
  assert.match(tail[0]!.message!, /cp line without an s3:\/\/ or gs:\/\/ source/);
  assert.match(tail[1]!.message!, /not an identifier or URL/);
  assert.deepEqual([t.invalid, t.unknown], [2, 2]);
  process.stdout.write(`# resolved ${lineCount} lines in ${ms} ms: ${JSON.stringify(t)}\n`);

  // The same manifest as TSV: the totals in the first line, a row per listed line, each classed as SQL says.
  const tr = await s.post('/v3/series/resolve', { text, format: 'tsv' });
  assert.equal(tr.status, 200);
  assert.match(tr.headers.get('content-type') ?? '', /^text\/tab-separated-values/);
  const [head, names, ...rows] = (await tr.text()).split('\n');
  assert.equal(rows.pop(), '', 'the table ends with a newline');
  assert.equal(head, `# resolved against ${out.idc_version}; totals ${JSON.stringify(t)}`);
  const cols = names!.split('\t');
  const at = (row: string, col: string) => row.split('\t')[cols.indexOf(col)]!;
  assert.equal(rows.length, out.lines.length);
  assert.ok(rows.every((r) => r.split('\t').length === cols.length));
  assert.equal(at(rows[0]!, 'class'), 'header');
  sample.forEach((r, i) => {
    const row = rows[1 + i]!;
    const what = `TSV line ${at(row, 'line')} (${r.form}, ${r.grp}): ${lineOf(r)}`;
    assert.equal(at(row, 'class'), r.expected, what);
    assert.equal(at(row, 'SeriesInstanceUID'), r.sid, what);
    if (r.expected === 'current' || r.expected === 'revised') assert.equal(at(row, 'current_crdc_series_uuid'), r.cur_u, what);
    if (r.expected === 'revised' && r.form !== 'uid') {
      assert.equal(at(row, 'named_crdc_series_uuid'), r.u, what);
      assert.equal(at(row, 'named_max_idc_version'), String(r.named_max), what);
    }
    if (r.expected === 'removed') {
      assert.equal(at(row, 'last_idc_version'), String(r.last_v), what);
      assert.equal(at(row, 'current_crdc_series_uuid'), '', what);
      assert.ok(at(row, 'versions').split(';').some((v) => v.startsWith(`${String(r.u)} v`)), what);
    }
  });
  assert.deepEqual(rows.slice(-4).map((r) => at(r, 'class')), ['invalid', 'invalid', 'unknown', 'unknown']);

  // What idqs download --manifest fetches for each line: the current version by default, the one named with --as-saved;
  // removed series only with --as-saved; the bogus lines reported, never dropped.
  const byDefault = planSaved(out, text, 'cloud2', false);
  const saved = planSaved(out, text, 'cloud2', true);
  const cloud2 = (b: unknown) => ({ 'idc-open-data-two': 'idc-open-idc1', 'idc-open-data-cr': 'idc-open-cr' })[String(b)] ?? String(b);
  const folders = (p: typeof saved) => new Set(p.targets.map((x) => x.url));
  const wantDefault = new Set<string>();
  const wantSaved = new Set<string>();
  for (const r of sample) {
    const [cur] = await rel.rows(`SELECT crdc_series_uuid AS u, aws_bucket AS b FROM cur_index WHERE SeriesInstanceUID = '${r.sid}'`);
    const [last] = await rel.rows(`SELECT crdc_series_uuid AS u, aws_bucket AS b FROM cur_prior WHERE SeriesInstanceUID = '${r.sid}' ORDER BY max_idc_version DESC, crdc_series_uuid LIMIT 1`);
    const named = r.form === 'uid' ? (cur ?? last) : { u: r.u, b: r.b };
    if (cur) wantDefault.add(`s3://${cloud2(cur.b)}/${cur.u}/*`);
    if (r.expected === 'current' || (r.form === 'uid' && cur)) wantSaved.add(`s3://${cloud2(cur!.b)}/${cur!.u}/*`);
    else wantSaved.add(`s3://${cloud2(named!.b)}/${named!.u}/*`);
  }
  assert.deepEqual(folders(byDefault), wantDefault);
  assert.deepEqual(folders(saved), wantSaved);
  const removed = sample.filter((r) => r.expected === 'removed').length;
  assert.equal(byDefault.unresolved.length, removed + 4, 'removed lines, the two invalid and the two unknown lines are reported');
  assert.equal(saved.unresolved.length, 4);
  assert.ok(byDefault.unresolved.some((u) => /removed from the release after v\d+; --as-saved downloads/.test(u.why)));
});

test('StudyInstanceUIDs: current with their series counts, or removed with the last release, as SQL says', { skip }, async () => {
  const studies = await rel.rows(`
    (SELECT StudyInstanceUID AS st, 'current' AS expected FROM cur_index GROUP BY 1 ORDER BY hash(StudyInstanceUID) LIMIT 3)
    UNION ALL
    (SELECT StudyInstanceUID, 'removed' FROM cur_prior WHERE StudyInstanceUID NOT IN (SELECT StudyInstanceUID FROM cur_index)
       AND StudyInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index) GROUP BY 1 ORDER BY hash(StudyInstanceUID) LIMIT 3)`);
  const out = await resolve({ ids: studies.map((r) => String(r.st)) });
  for (const [i, r] of studies.entries()) {
    const l = out.lines[i]!;
    assert.deepEqual([l.kind, l.class, l.line], ['StudyInstanceUID', r.expected, i + 1]);
    const [c] = await rel.rows(`SELECT
      (SELECT count(*) FROM cur_index WHERE StudyInstanceUID = '${r.st}') AS cur,
      (SELECT count(DISTINCT SeriesInstanceUID) FROM cur_prior WHERE StudyInstanceUID = '${r.st}'
         AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index)) AS gone,
      (SELECT max(max_idc_version) FROM cur_prior WHERE StudyInstanceUID = '${r.st}') AS last`);
    assert.deepEqual([l.series_current, l.series_removed], [Number(c!.cur), Number(c!.gone)]);
    if (l.class === 'removed') assert.equal(l.last_idc_version, Number(c!.last));
  }
});

// The public Python client's test manifests (ImagingDataCommons/idc-index, tests/), as they are.
const CLIENT_MANIFESTS: Record<string, string> = {
  aws: `# To download the files in this manifest, first install s5cmd (https://github.com/peak/s5cmd),
# then run the following command:
# s5cmd --no-sign-request --endpoint-url https://s3.amazonaws.com run study_manifest_aws.s5cmd
cp s3://idc-open-data/28621ba9-1aca-4aab-a2a1-f6d2c3e2ab19/* .
cp s3://idc-open-data/f0b76401-c6d1-4b61-a5fd-3fa596e6cc41/* .
cp s3://idc-open-data/4ea3bbe6-98da-4b92-abe6-2ee18927e3c9/* .
`,
  aws_with_header: `study_manifest_cp_command
cp s3://idc-open-data/28621ba9-1aca-4aab-a2a1-f6d2c3e2ab19/* .
`,
  gcs: `# To download the files in this manifest, first install s5cmd (https://github.com/peak/s5cmd),
# then run the following command:
# s5cmd --no-sign-request --endpoint-url https://storage.googleapis.com run study_manifest_gcs.s5cmd
cp s3://public-datasets-idc/58719bbb-1356-457a-bfb6-e0bee68e05aa/* .
cp s3://public-datasets-idc/f7dbee2f-1f62-466e-bba7-b79e299d03a9/* .
cp s3://public-datasets-idc/e3dd4623-d4c9-4d65-8f57-be1bded184a0/* .
`,
  prior: `cp s3://idc-open-data/2f77262c-3a4a-4e5a-bdc0-056dc2837f15/* .
cp s3://idc-open-data/35459457-bd4c-4eef-9579-47f12fc6928e/*  .
cp s3://idc-open-data/9c9ab2bf-c784-4658-b0f9-d2e4b33f2dbf/*  .
cp s3://idc-open-data/312788ec-8739-4e56-a857-efcab92b20ed/* .
cp s3://idc-open-data/c27b80c9-0e90-416b-8eca-0b20bc0cf8e2/*  .
`,
  bogus: `# the URLs below are invalid and are used for test purposes only!
cp s3://invalid-idc-open-data/28621ba9-1aca-4aab-a2a1-f6d2c3e2ab19/* .
cp s3://invalid-idc-open-data/f0b76401-c6d1-4b61-a5fd-3fa596e6cc41/* .
cp s3://invalid-idc-open-data/4ea3bbe6-98da-4b92-abe6-2ee18927e3c9/* .
`,
};

test("the public client's test manifests (both stores, a prior-version one, a bogus bucket): every line classed as SQL says", { skip }, async () => {
  for (const [name, text] of Object.entries(CLIENT_MANIFESTS)) {
    const out = await resolve({ text });
    const uuids = [...text.matchAll(/\/([0-9a-f-]{36})\//g)].map((m) => m[1]!);
    const values = uuids.map((u, i) => `('${u}', ${i})`).join(', ');
    const classes = await rel.rows(`WITH t AS (SELECT u, k, (SELECT any_value(SeriesInstanceUID) FROM (SELECT SeriesInstanceUID FROM cur_index WHERE crdc_series_uuid = u
        UNION ALL SELECT SeriesInstanceUID FROM cur_prior WHERE crdc_series_uuid = u)) AS sid, 'x' AS form FROM (VALUES ${values}) v(u, k))
      SELECT u, ${EXPECTED} AS expected FROM t ORDER BY k`);
    const ids = out.lines.filter((l) => l.kind !== undefined);
    assert.deepEqual(ids.map((l) => [l.id, l.class]), classes.map((r) => [r.u, r.expected]), name);
    assert.equal(out.totals.comments, (text.match(/^#/gm) ?? []).length, name);
    if (name === 'aws_with_header') assert.deepEqual([out.lines[0]!.class, out.lines[0]!.line], ['header', 1]);
    if (name === 'bogus') for (const l of ids) assert.match(l.message ?? '', /the bucket invalid-idc-open-data is not one of the stores' buckets/, name);
    else for (const l of ids) assert.equal(l.message?.includes('bucket') ?? false, false, `${name}: ${l.message}`);
    process.stdout.write(`# client manifest ${name}: ${JSON.stringify(out.totals)}\n`);
  }
});

for (const era of [18, 19]) {
  test(`a v${era}-era manifest of a collection whose UIDs changed in v19 (cmb_crc): every version v${era} served, classed as SQL says`, { skip }, async () => {
    // What that release served of cmb_crc: current versions revised at or before it, and prior versions whose range covers it.
    const saved = await rel.rows(`
      WITH s AS (
        SELECT SeriesInstanceUID AS sid, crdc_series_uuid AS u, aws_bucket AS b FROM cur_index WHERE collection_id = 'cmb_crc' AND series_revised_idc_version <= ${era}
        UNION SELECT SeriesInstanceUID, crdc_series_uuid, aws_bucket FROM cur_prior WHERE collection_id = 'cmb_crc' AND min_idc_version <= ${era} AND max_idc_version >= ${era})
      SELECT s.*, 'url' AS form, ${EXPECTED} AS expected FROM s ORDER BY u`);
    assert.ok(saved.length > 100, `cmb_crc had ${saved.length} series in v${era}`);
    const out = await resolve({ text: saved.map((r) => `cp s3://${r.b}/${r.u}/* .`).join('\n') });
    assert.deepEqual(out.lines.map((l) => l.class), saved.map((r) => r.expected));
    const count = (c: string) => saved.filter((r) => r.expected === c).length;
    assert.deepEqual([out.totals.current, out.totals.revised, out.totals.removed, out.totals.unknown], [count('current'), count('revised'), count('removed'), count('unknown')]);
    // Before the change its series are gone from the pinned release (their UIDs changed); from v19 on they are current.
    if (era === 18) assert.ok(out.totals.removed > out.totals.current, JSON.stringify(out.totals));
    else assert.ok(out.totals.current > out.totals.removed, JSON.stringify(out.totals));
    process.stdout.write(`# v${era}-era cmb_crc manifest, ${saved.length} lines: ${JSON.stringify(out.totals)}\n`);
  });
}

test('the MCP tool answers as the route does; bad requests are refused with what to fix', { skip }, async () => {
  const mcp = new Client({ name: 'resolve-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const text = `${CLIENT_MANIFESTS.prior}1.2.3\nhello`;
    const r = (await mcp.callTool({ name: 'resolve_series', arguments: { text } })) as CallToolResult;
    assert.equal(r.isError ?? false, false);
    assert.deepEqual(r.structuredContent, await resolve({ text }));
    const both = (await mcp.callTool({ name: 'resolve_series', arguments: { text, ids: ['1.2'] } })) as CallToolResult;
    assert.equal(both.isError, true);
    assert.match(JSON.stringify(both.content), /either text .* or ids/);
  } finally {
    await mcp.close();
  }
  const bad = (await (await s.post('/v3/series/resolve', { text: 'x', ids: ['y'] })).json()) as { error: { message: string } };
  assert.match(bad.error.message, /text|ids/);
});
