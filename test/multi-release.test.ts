// One process serving two real releases (the pinned 25.0.5 and the earlier
// 24.2.2), started as a user starts it: idqs serve --release A,B. Each
// release's answers (counts, manifest, facets, a /v2 page, an agent tool) are
// compared with SQL written here over that release's own Parquet files; ETags
// and /v2 tokens stay with their release; an unknown release is a 400 that
// lists both; the explorer's release picker in Chromium.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from './fixture.ts';
import { openBrowser } from './browser.ts';
import { PIN, SKIP_REAL as skip, twoReleases, type TwoReleases } from './real-releases.ts';

const CLI = fileURLToPath(new URL('../bin/idqs.cjs', import.meta.url));

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let rel: TwoReleases;
let proc: ChildProcess;
let url: string;
let stderr = '';
/** A collection whose series differ between the two releases, small enough to list. */
let coll: string;
let cur: string;
let prev: string;
/** Index table of each release in the test's own DuckDB (read from that release's Parquet file). */
const table = (release: string) => (release === cur ? 'cur_index' : 'prev_index');

before(async () => {
  if (skip) return;
  rel = await twoReleases();
  cur = rel.current.build.index_version;
  prev = rel.previous.build.index_version;
  const [pick] = await rel.rows(`SELECT c.collection_id FROM (SELECT collection_id, count(*) AS n FROM cur_index GROUP BY 1) c
    JOIN (SELECT collection_id, count(*) AS n FROM prev_index GROUP BY 1) p USING (collection_id)
    WHERE c.n <> p.n AND c.n BETWEEN 50 AND 5000 ORDER BY abs(c.n - p.n) DESC, 1 LIMIT 1`);
  assert.ok(pick, 'a collection whose series differ between the two releases');
  coll = String(pick.collection_id);
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // Oldest first on the command line: the server still makes the newest the default.
  proc = spawn(process.execPath, [CLI, 'serve', '--release', `${PIN.previous},${PIN.release}`, '--source', PIN.source, '--port', String(port)], {
    // One caller query at a time and none waiting: the shared budget test below.
    env: { ...process.env, IDQS_LOG_LEVEL: 'warn', IDQS_WORKERS: '1', IDQS_SQL_CONNECTIONS: '1', IDQS_SQL_QUEUE: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const end = Date.now() + 180_000;
  while (!/serving data releases/.test(stderr)) {
    if (proc.exitCode !== null || Date.now() > end) throw new Error(`the server did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

after(async () => {
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  rel?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(url + path, { headers });
const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
async function json(r: Response, status = 200): Promise<Json> {
  const body = (await r.json()) as Json;
  assert.equal(r.status, status, JSON.stringify(body).slice(0, 400));
  return body;
}

async function sqlCounts(release: string): Promise<Json> {
  const [r] = await rel.rows(`SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series,
    sum(instanceCount) AS instances FROM ${table(release)} WHERE collection_id = '${coll}'`);
  return { patients: Number(r!.patients), studies: Number(r!.studies), series: Number(r!.series), instances: Number(r!.instances) };
}

test('the startup lines name both releases; /v3/releases and /v3/version list them, newest the default', { skip }, async () => {
  assert.match(stderr, new RegExp(`data: 2 releases.*${cur.replaceAll('.', '\\.')} \\(v\\d+, the default\\).*${prev.replaceAll('.', '\\.')}`));
  assert.match(stderr, new RegExp(`serving data releases v\\d+ \\(${cur.replaceAll('.', '\\.')}, the default\\), v\\d+ \\(${prev.replaceAll('.', '\\.')}\\)`));
  const { releases } = await json(await get('/v3/releases'));
  assert.deepEqual(
    releases.map((r: Json) => [r.release, r.default]),
    [
      [cur, true],
      [prev, false],
    ],
  );
  for (const r of releases as Json[]) {
    const [n] = await rel.rows(`SELECT count(*) AS series, count(DISTINCT PatientID) AS patients FROM ${table(r.release)}`);
    assert.deepEqual([r.series, r.patients], [Number(n!.series), Number(n!.patients)], r.release);
  }
  assert.notEqual(releases[0].dataset_identity, releases[1].dataset_identity);
  const v = await json(await get('/v3/version'));
  assert.equal(v.idc_index_data_version, cur);
  assert.deepEqual(v.releases.map((r: Json) => r.release), [cur, prev]);
  // Named by its data release (v24 and 24) as well as by its index version.
  for (const name of [prev, `v${prev.split('.')[0]}`, prev.split('.')[0]!]) {
    assert.equal((await json(await get(`/v3/version?release=${name}`))).idc_index_data_version, prev, name);
  }
});

test('counts, manifest and facets of a collection on each release equal SQL over that release’s own Parquet file', { skip }, async () => {
  const seen: Json[] = [];
  for (const release of [cur, prev]) {
    const want = await sqlCounts(release);
    // The release as a body member, and in the query.
    const a = await json(await post('/v3/cohort/counts', { filters: { terms: { collection_id: [coll] } }, release }));
    const b = await json(await post(`/v3/cohort/counts?release=${release}`, { terms: { collection_id: [coll] } }));
    for (const got of [a, b]) assert.deepEqual({ patients: got.patients, studies: got.studies, series: got.series, instances: got.instances }, want, release);
    seen.push(want);

    const m = await post('/v3/cohort/manifest.txt', { filters: { terms: { collection_id: [coll] } }, release });
    assert.equal(m.status, 200);
    const uuids = [...(await m.text()).matchAll(/\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\//g)].map((x) => x[1]).sort();
    const sqlUuids = (await rel.rows(`SELECT crdc_series_uuid AS u FROM ${table(release)} WHERE collection_id = '${coll}' ORDER BY 1`)).map((r) => r.u);
    assert.deepEqual(uuids, sqlUuids, `manifest of ${coll} on ${release}`);

    const f = await json(await post('/v3/cohort/facets', { filters: { terms: { collection_id: [coll] } }, attributes: ['Modality'], count: 'series', release }));
    assert.equal(f.totals.series, want.series);
    const byModality = Object.fromEntries(
      (await rel.rows(`SELECT Modality AS m, count(*) AS n FROM ${table(release)} WHERE collection_id = '${coll}' AND Modality IS NOT NULL GROUP BY 1`)).map((r) => [r.m, Number(r.n)]),
    );
    const got = Object.fromEntries((f.facets.Modality.values as Json[]).filter((v) => v.filtered_count > 0).map((v) => [v.value, v.filtered_count]));
    assert.deepEqual(got, byModality, `Modality facet of ${coll} on ${release}`);
  }
  assert.notDeepEqual(seen[0], seen[1], 'the two releases differ for this collection');
  // No release named: the newest.
  assert.deepEqual((({ patients, studies, series, instances }) => ({ patients, studies, series, instances }))(await json(await post('/v3/cohort/counts', { terms: { collection_id: [coll] } }))), seen[0]);
});

test('ETags differ between releases, and one release’s ETag never answers 304 for the other', { skip }, async () => {
  const a = await get('/v3/stats');
  const b = await get(`/v3/stats?release=${prev}`);
  const [ea, eb] = [a.headers.get('etag'), b.headers.get('etag')];
  assert.ok(ea && eb && ea !== eb, `${ea} vs ${eb}`);
  assert.equal((await get(`/v3/stats?release=${prev}`, { 'if-none-match': ea })).status, 200);
  assert.equal((await get(`/v3/stats?release=${prev}`, { 'if-none-match': eb })).status, 304);
  assert.equal((await get('/v3/stats', { 'if-none-match': ea })).status, 304);
  const [n] = await rel.rows(`SELECT count(*) AS n FROM prev_index`);
  assert.equal((await b.json() as Json).series, Number(n!.n));
});

test('a /v2 page token stays with the release that issued it', { skip }, async () => {
  const first = await json(await post('/v2/cohorts/manifest/preview', { release: prev, cohort_def: { filters: { collection_id: [coll] } }, fields: ['SeriesInstanceUID'], page_size: 7 }));
  const token = first.next_page as string;
  assert.ok(token);
  const other = await json(await post('/v2/cohorts/manifest/preview/nextPage', { next_page: token, page_size: 7 }), 400);
  assert.match(other.message, new RegExp(`issued for release ${prev.replaceAll('.', '\\.')}`));
  await json(await post('/v2/cohorts/manifest/preview/nextPage', { next_page: token, page_size: 7, release: cur }), 400);
  const second = await json(await post('/v2/cohorts/manifest/preview/nextPage', { next_page: token, page_size: 7, release: prev }));
  const got = [...first.manifest.manifest_data, ...second.manifest.manifest_data].map((r: Json) => r.SeriesInstanceUID as string);
  const inPrev = new Set((await rel.rows(`SELECT SeriesInstanceUID AS s FROM prev_index WHERE collection_id = '${coll}'`)).map((r) => r.s));
  assert.equal(new Set(got).size, 14);
  for (const s of got) assert.ok(inPrev.has(s), `${s} is a series of ${coll} in ${prev}`);
});

test('an unknown release is a 400 that lists the releases served, on GET, POST and /v2', { skip }, async () => {
  for (const r of [
    await get('/v3/stats?release=19.0.3'),
    await post('/v3/cohort/counts', { terms: { collection_id: [coll] }, release: 'v19' }),
    await post('/v2/cohorts/manifest/preview', { release: 'nope', cohort_def: { filters: {} }, fields: ['collection_id'] }),
  ]) {
    const body = (await r.json()) as Json;
    assert.equal(r.status, 400);
    const message = String(body.error?.message ?? body.message);
    assert.match(message, /Unknown release/);
    assert.ok(message.includes(cur) && message.includes(prev), message);
  }
});

test('budgets are shared: while a caller query runs on one release, another on the other release is refused as busy', { skip }, async () => {
  const ac = new AbortController();
  // A cross join of the whole index with itself: runs until its client leaves.
  const long = fetch(`${url}/v3/sql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sql: 'SELECT count(*) AS n FROM "index" a, "index" b WHERE a.series_size_MB + b.series_size_MB < 0' }),
    signal: ac.signal,
  }).catch(() => null);
  try {
    let refused: Response | null = null;
    const end = Date.now() + 60_000;
    // Until the long query holds the one slot (its worker may take a moment to start).
    while (!refused && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 300));
      const r = await post(`/v3/sql?release=${prev}`, { sql: 'SELECT 1 AS one' });
      if (r.status === 503) refused = r;
      else await r.body?.cancel();
    }
    assert.ok(refused, 'a query on the other release was refused while the first ran');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(((await refused.json()) as Json).error.message, /IDQS_SQL_CONNECTIONS/);
    // Readiness sees the shared budget (whichever release is asked about).
    const ready = await json(await get(`/v3/ready?release=${prev}`), 503);
    assert.match(ready.error.message, /sql is saturated: 1 running/);
  } finally {
    ac.abort();
    await long;
  }
  // Once it is gone, the other release answers.
  const end = Date.now() + 30_000;
  let ok: Json | null = null;
  while (!ok && Date.now() < end) {
    const r = await post(`/v3/sql?release=${prev}`, { sql: 'SELECT count(*) AS n FROM "index"' });
    if (r.status === 200) ok = (await r.json()) as Json;
    else await new Promise((res) => setTimeout(res, 300));
  }
  const [n] = await rel.rows(`SELECT count(*) AS n FROM prev_index`);
  assert.equal(Number(ok?.rows[0].n), Number(n!.n));
  const ready = await json(await get('/v3/ready'));
  assert.equal(ready.checks.database, 'ok');
  assert.equal(ready.checks.budgets.sql.slots, 1);
});

test('download commands name their release, and idqs download --release resolves the cohort on it', { skip }, async () => {
  const payload = await json(await post('/v3/cohort/manifest', { filters: { terms: { collection_id: [coll] } }, release: prev, page_size: 1 }));
  const { idqs, save_manifest } = payload.download.commands as { idqs: string[]; save_manifest: string };
  assert.ok(idqs.every((c) => c.includes(`--release ${prev}`)), idqs.join('\n'));
  assert.match(save_manifest, new RegExp(`"release":"${prev.replaceAll('.', '\\.')}"`));
  for (const release of [prev, cur]) {
    // The cohort is resolved through the API before any file is listed; the store is left unreachable on purpose.
    const out = await new Promise<string>((resolve) => {
      const p = spawn(process.execPath, [CLI, 'download', '--collection', coll, '--api', url, '--release', release, '--dry-run', '--json', '--retries', '0', '--endpoint', 'http://127.0.0.1:9'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let text = '';
      p.stdout.on('data', (d: Buffer) => (text += d.toString()));
      p.on('exit', () => resolve(text));
    });
    const cohort = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json).find((e) => e.event === 'cohort');
    assert.equal(cohort?.series, (await sqlCounts(release)).series, release);
  }
});

test('agent tools take release; get_idc_version lists both releases', { skip }, async () => {
  const client = new Client({ name: 'multi-release-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  try {
    for (const release of [undefined, prev]) {
      const r = await client.callTool({ name: 'get_cohort_counts', arguments: { terms: { collection_id: [coll] }, ...(release ? { release } : {}) } });
      const s = r.structuredContent as Json;
      const want = await sqlCounts(release ?? cur);
      assert.deepEqual({ patients: s.patients, studies: s.studies, series: s.series, instances: s.instances }, want, String(release));
    }
    const tools = (await client.listTools()).tools;
    assert.ok(tools.length > 10 && tools.every((t) => 'release' in (t.inputSchema.properties ?? {})), 'every tool takes release');
    const listed = (await client.callTool({ name: 'get_idc_version', arguments: { release: prev } })).structuredContent as Json;
    assert.equal(listed.idc_index_data_version, prev);
    assert.deepEqual(listed.releases.map((r: Json) => r.release), [cur, prev]);
    const bad = await client.callTool({ name: 'get_stats', arguments: { release: '19.0.3' } });
    assert.equal(bad.isError, true);
    const text = JSON.stringify(bad.structuredContent);
    assert.ok(text.includes(cur) && text.includes(prev), text);
  } finally {
    await client.close();
  }
});

test('explorer: the release picker switches release and keeps it in the URL; a link to a release not served says so', { skip }, async () => {
  const b = await openBrowser();
  try {
    const { page } = b;
    await page.goto(`${url}/?collection_id=${encodeURIComponent(coll)}`);
    const select = page.locator('.release-picker select');
    await select.waitFor();
    assert.equal(await select.inputValue(), cur);
    // The link the page shows carries its release.
    await page.waitForURL((u) => u.searchParams.get('release') === cur);
    await b.screenshot('multi-release-newest');
    await Promise.all([page.waitForURL((u) => u.searchParams.get('release') === prev), select.selectOption(prev)]);
    await page.locator(`.release[data-release="v${prev.split('.')[0]}"]`).waitFor();
    const u = new URL(page.url());
    assert.deepEqual(u.searchParams.getAll('collection_id'), [coll], 'the cohort is kept');
    assert.equal(await page.locator('.release-picker select').inputValue(), prev);
    await b.screenshot('multi-release-previous');
    // A link naming a release this server does not serve: a note, and the newest shown.
    await page.goto(`${url}/?release=19.0.3&collection_id=${encodeURIComponent(coll)}`);
    const note = page.locator('.release-note');
    await note.waitFor();
    const text = await note.innerText();
    assert.ok(text.includes('19.0.3') && text.includes('does not serve') && text.includes(cur), text);
    await page.waitForURL((u) => u.searchParams.get('release') === cur);
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});
