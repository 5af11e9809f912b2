// Reading saved lines (the rule the service and the downloader share), and the
// resolve route's refusals, on the small test dataset: more lines than the
// configured limit is a 413 naming it, a body of neither or both forms a 422;
// the TSV form cell by cell against the JSON one, and idqs resolve --format tsv
// printing the route's table.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';
import { parseSavedLine, splitLines } from '../src/core/rules/saved-lines.ts';
import { rawHttp, startServer, testDataset, type TestServer } from './fixture.ts';

const CLI = fileURLToPath(new URL('../bin/idqs.cjs', import.meta.url));

const U = '28621ba9-1aca-4aab-a2a1-f6d2c3e2ab19';

test('every form of a saved line: cp lines (ours, the client’s, quoted, extra spaces), s3:// and gs:// URLs, bare UUIDs and UIDs, comments, a header, junk', () => {
  const cases: [string, boolean, unknown][] = [
    ['', false, { type: 'blank' }],
    ['   ', false, { type: 'blank' }],
    ['# s5cmd --no-sign-request run x', false, { type: 'comment' }],
    [`cp s3://idc-open-data/${U}/* .`, true, { type: 'uuid', value: U, bucket: 'idc-open-data', url: `s3://idc-open-data/${U}/*` }],
    [`cp s3://idc-open-data/${U}/*  .`, false, { type: 'uuid', value: U, bucket: 'idc-open-data', url: `s3://idc-open-data/${U}/*` }],
    [`cp 's3://idc-open-data-two/${U}/*' 'idqs-data/c/p/s/CT_1.2/'`, false, { type: 'uuid', value: U, bucket: 'idc-open-data-two', url: `s3://idc-open-data-two/${U}/*` }],
    [`cp --show-progress "s3://b/${U.toUpperCase()}/*" out/`, false, { type: 'uuid', value: U, bucket: 'b', url: `s3://b/${U.toUpperCase()}/*` }],
    [`gs://idc-open-idc1/${U}/*`, false, { type: 'uuid', value: U, bucket: 'idc-open-idc1', url: `gs://idc-open-idc1/${U}/*` }],
    [`s3://idc-open-data/${U}/1.2.3.dcm`, false, { type: 'uuid', value: U, bucket: 'idc-open-data', url: `s3://idc-open-data/${U}/1.2.3.dcm` }],
    [` ${U.toUpperCase()} `, false, { type: 'uuid', value: U, bucket: null, url: null }],
    ['1.3.6.1.4.1.14519.5.2.1.7009.2403.255637500032299473330002534202', false, { type: 'uid', value: '1.3.6.1.4.1.14519.5.2.1.7009.2403.255637500032299473330002534202' }],
    ['"1.2.840.10008.1",', false, { type: 'uid', value: '1.2.840.10008.1' }],
    ['study_manifest_cp_command', true, { type: 'header', text: 'study_manifest_cp_command' }],
    ['SeriesInstanceUID,collection_id', true, { type: 'header', text: 'SeriesInstanceUID,collection_id' }],
  ];
  for (const [line, first, want] of cases) assert.deepEqual(parseSavedLine(line, first), want, JSON.stringify(line));
  // Not identifiers: each says what was expected.
  for (const [line, reason] of [
    ['study_manifest_cp_command', /not an identifier or URL/], // a header only as the first line
    ['cp nothing', /cp line without an s3:\/\/ or gs:\/\/ source/],
    ['s3://idc-open-data/*', /the folder "\*" of s3:\/\/idc-open-data\/\* is not a crdc_series_uuid/],
    ['s3://idc-open-data/not-a-uuid/*', /is not a crdc_series_uuid/],
    ['1.2.03', /not an identifier/], // a UID component with a leading zero
    [`1.${'2'.repeat(70)}`, /not an identifier/], // longer than 64 characters
    ['https://example.org/x', /not an identifier/],
    [`cp s3://idc-open-data/${U}/* ${'d/'.repeat(2100)}`, /a line of more than 4096 characters/], // read by its length alone
  ] as const) {
    const p = parseSavedLine(line, false);
    assert.equal(p.type, 'invalid', line);
    assert.match((p as { reason: string }).reason, reason, line);
  }
  assert.deepEqual(splitLines('a\r\nb\n\nc\n'), ['a', 'b', '', 'c']);
  assert.deepEqual(splitLines(''), []);
});

let s: TestServer;
before(async () => {
  s = await startServer({ resolveMaxLines: 5 });
});
after(async () => s?.close());

test('the resolve route: a 413 past the line limit (saying it), a 422 for a body of neither or both forms, every line of a small manifest accounted for', async () => {
  const six = await s.post('/v3/series/resolve', { text: 'a\nb\nc\nd\ne\nf\n' });
  assert.equal(six.status, 413);
  const body = (await six.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'too_large');
  assert.match(body.error.message, /6 lines were sent; one request resolves at most 5 lines \(IDQS_RESOLVE_MAX_LINES\)/);
  assert.equal((await s.post('/v3/series/resolve', { ids: ['1', '2', '3', '4', '5', '6'] })).status, 413);
  for (const bad of [{}, { text: 'x', ids: ['y'] }, { ids: [] }]) {
    const r = await s.post('/v3/series/resolve', bad);
    assert.equal(r.status, 422, JSON.stringify(bad));
  }
  const row = (await s.ctx.engine.one(`SELECT crdc_series_uuid, SeriesInstanceUID, StudyInstanceUID FROM "index" ORDER BY SeriesInstanceUID LIMIT 1`))!;
  const r = await s.post('/v3/series/resolve', { text: `# c\n\ns3://x/${row.crdc_series_uuid}/*\n${row.StudyInstanceUID}\nzz` });
  const out = (await r.json()) as { totals: Record<string, number>; lines: { line: number; class: string; kind?: string; SeriesInstanceUID?: string; message?: string }[] };
  assert.equal(r.status, 200);
  assert.deepEqual(out.totals, { lines: 5, blank: 1, comments: 1, header: 0, current: 2, revised: 0, removed: 0, unknown: 0, invalid: 1 });
  assert.deepEqual(out.lines.map((l) => [l.line, l.class, l.kind ?? null]), [[3, 'current', 'crdc_series_uuid'], [4, 'current', 'StudyInstanceUID'], [5, 'invalid', null]]);
  assert.equal(out.lines[0]!.SeriesInstanceUID, row.SeriesInstanceUID);
  assert.match(out.lines[0]!.message!, /the bucket x is not one of the stores' buckets/);

  // As TSV: the same lines, a cell per field of the JSON line; a header line's tabs do not split its row.
  const both = `series_id\tx\n${row.SeriesInstanceUID}\n00000000-0000-4000-8000-000000000000`;
  const json = (await (await s.post('/v3/series/resolve', { text: both })).json()) as { totals: unknown; lines: Record<string, unknown>[] };
  const tr = await s.post('/v3/series/resolve', { text: both, format: 'tsv' });
  assert.equal(tr.status, 200);
  const [head, names, ...rows] = (await tr.text()).trimEnd().split('\n');
  assert.equal(head, `# resolved against ${s.ctx.dataset.release}; totals ${JSON.stringify(json.totals)}`);
  const cols = names!.split('\t');
  assert.equal(rows.length, 3);
  const cell = (v: unknown) => (v === undefined || v === null ? '' : String(v).replace(/\t/g, ' '));
  rows.forEach((r, i) => {
    const l = json.lines[i]!;
    const cur = (l.current ?? {}) as Record<string, unknown>;
    const want = cols.map((c) => (c.startsWith('current_') ? cell(cur[c.slice(8)]) : c === 'license_short_name' ? cell(cur.license_short_name) : c === 'versions' ? cell(l.versions) : cell(l[c])));
    assert.deepEqual(r.split('\t'), want, r);
  });
  assert.deepEqual(rows.map((r) => r.split('\t')[1]), ['header', 'current', 'unknown']);
  assert.equal((await s.post('/v3/series/resolve', { text: 'x', format: 'csv' })).status, 422);
  // idqs resolve --format tsv prints the same table (the service run locally on the same database), totals on stderr.
  const ids = [String(row.SeriesInstanceUID), '00000000-0000-4000-8000-000000000000'];
  const api = await (await s.post('/v3/series/resolve', { ids, format: 'tsv' })).text();
  const cli = spawnSync(process.execPath, [CLI, 'resolve', ...ids, '--db', (await testDataset()).db, '--format', 'tsv'], { encoding: 'utf8', env: { ...process.env, IDQS_LOG_LEVEL: 'silent' } });
  assert.equal(cli.status, 1, cli.stderr);
  assert.equal(cli.stdout, api);
  assert.match(cli.stderr, /2 lines against .*: 1 current, 0 revised, 0 removed, 1 unknown, 0 invalid/);
});

test('a manifest longer than one written block (2,000 lines), with repeated lines: the JSON is whole across the blocks and every line, repeated or not, classed by SQL', async () => {
  const big = await startServer({ resolveMaxLines: 5000 });
  try {
    // A folder the release serves is current; its SeriesInstanceUID is revised when prior_versions_index has an earlier version.
    const rows = await big.ctx.engine.rows(`SELECT crdc_series_uuid AS u, SeriesInstanceUID AS sid,
        SeriesInstanceUID IN (SELECT SeriesInstanceUID FROM prior_versions_index) AS revised FROM "index" ORDER BY hash(crdc_series_uuid) LIMIT 1500`);
    assert.equal(rows.length, 1500);
    // 4,500 lines: every folder three times (as a URL, bare, and as its SeriesInstanceUID), so blocks of 2,000 end mid-list.
    const lines = rows.flatMap((r) => [`cp s3://idc-open-data/${String(r.u)}/* .`, String(r.u).toUpperCase(), String(r.sid)]);
    const res = await big.post('/v3/series/resolve', { text: lines.join('\n') }, { 'accept-encoding': 'identity' });
    assert.equal(res.status, 200);
    const body = await res.text();
    const out = JSON.parse(body) as { totals: Record<string, number>; lines: { line: number; class: string; kind?: string; SeriesInstanceUID?: string; current?: { crdc_series_uuid: string } }[] };
    // Exactly what JSON.stringify writes of the same document: no byte lost or doubled where one block meets the next.
    assert.equal(body, JSON.stringify(out));
    // gzip (made in pieces on several threads: this answer is several pieces) is the same bytes once read by the
    // system's gzip; br stays with the compression plugin. Both say they vary by Accept-Encoding.
    const raw = (encoding: string) =>
      rawHttp(`${big.url}/v3/series/resolve`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': encoding }, body: JSON.stringify({ text: lines.join('\n') }) });
    const gz = await raw('gzip, deflate');
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.match(String(gz.headers.vary), /accept-encoding/i);
    assert.ok(gz.body.length < body.length / 4, `${gz.body.length} gzip bytes for ${body.length}`);
    const unzipped = spawnSync('gzip', ['-dc'], { input: gz.body, maxBuffer: 1 << 28 });
    assert.equal(unzipped.status, 0, unzipped.stderr.toString());
    assert.equal(unzipped.stdout.toString('utf8'), body);
    const br = await raw('br;q=1, gzip;q=0.5');
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.body).toString('utf8'), body);
    assert.equal(out.lines.length, 4500);
    const revised = rows.filter((r) => r.revised === true).length;
    assert.ok(revised > 0 && revised < 1500, `${revised} of the series have earlier versions`);
    assert.deepEqual([out.totals.current, out.totals.revised], [4500 - revised, revised]);
    out.lines.forEach((l, i) => {
      const r = rows[Math.floor(i / 3)]!;
      assert.deepEqual([l.line, l.class, l.kind, l.SeriesInstanceUID, l.current?.crdc_series_uuid], [i + 1, i % 3 === 2 && r.revised === true ? 'revised' : 'current', i % 3 === 2 ? 'SeriesInstanceUID' : 'crdc_series_uuid', r.sid, r.u], `line ${i + 1}`);
    });
  } finally {
    await big.close();
  }
});
