// The web explorer in a real browser (Debian's Chromium via playwright-core)
// against a real server: every number the page shows is checked against the
// API or SQL written here. One page walks through the main states in order;
// screenshots of them go to .cache/screenshots/.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';

let s: TestServer;
let b: TestBrowser;
let coll: string;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  s = await startServer();
  b = await openBrowser();
  // The collection with the most CT series: selecting it, then CT, leaves a cohort of several pages.
  coll = String((await s.ctx.engine.one(`SELECT collection_id FROM "index" WHERE Modality = 'CT' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`))!.collection_id);
});
after(async () => {
  await b?.close();
  await s?.close();
});

type Filter = { terms?: Record<string, string[]>; ranges?: Record<string, { gte?: number | string; lte?: number | string }> };

async function counts(f: Filter): Promise<Record<string, number>> {
  const r = await s.post('/v3/cohort/counts', f);
  assert.equal(r.status, 200);
  return (await r.json()) as Record<string, number>;
}

/** Waits until the page's totals are those of /v3/cohort/counts for the filter. */
async function totalsEqualCounts(f: Filter): Promise<void> {
  const want = await counts(f);
  for (const k of ['patients', 'studies', 'series', 'instances'] as const) {
    await b.page.locator(`[data-total="${k}"][data-value="${want[k]}"]`).waitFor({ timeout: 15_000 });
  }
  const size = Number(await b.page.getAttribute('[data-total="size"]', 'data-value'));
  assert.ok(Math.abs(size - want.size_MB!) < 0.01, `size ${size} vs ${want.size_MB}`);
}

async function check(facet: string, value: string) {
  const card = b.page.locator(`[data-facet="${facet}"]`);
  const search = card.locator('input[type=search]');
  if ((await search.count()) > 0) await search.fill(value);
  // A value's own row (the collection tree's program rows hold their collections' rows too).
  await card.locator(`li:not([data-program]):has([data-value="${value}"]) input[type=checkbox]`).check();
  if ((await search.count()) > 0) await search.fill('');
}

test('the page loads with facet counts of the whole release, equal to the API', async () => {
  await b.page.goto(`${s.url}/`);
  await b.page.locator('[data-facet="Modality"] [data-count]').first().waitFor();
  await totalsEqualCounts({});
  const release = (await (await s.get('/v3/version')).json()) as { idc_version: string };
  assert.equal(await b.page.getAttribute('[data-release]', 'data-release'), release.idc_version);
  assert.equal(await b.page.getAttribute('a[href="/v3/docs"]', 'href'), '/v3/docs');
  await b.screenshot('1-release');
});

test('selecting a collection and a modality: totals equal /v3/cohort/counts, facet counts equal SQL over the other filters', async () => {
  await check('collection_id', coll);
  await totalsEqualCounts({ terms: { collection_id: [coll] } });
  await check('Modality', 'CT');
  const f = { terms: { collection_id: [coll], Modality: ['CT'] } };
  await totalsEqualCounts(f);
  assert.match(b.page.url(), new RegExp(`collection_id=${coll}`));
  assert.match(b.page.url(), /Modality=CT/);
  // Modality counts leave Modality's own selection out: SQL over the collection only.
  const want = await s.ctx.engine.rows(`SELECT Modality, count(DISTINCT PatientID) AS n FROM "index" WHERE collection_id = ? AND Modality IS NOT NULL GROUP BY 1`, [coll]);
  let compared = 0;
  for (const r of want) {
    const shown = b.page.locator(`[data-facet="Modality"] [data-value="${r.Modality}"]`);
    if ((await shown.count()) === 0) continue; // beyond the first values listed
    assert.equal(Number(await shown.getAttribute('data-count')), Number(r.n), `Modality ${r.Modality}`);
    compared++;
  }
  assert.ok(compared >= Math.min(2, want.length), `only ${compared} Modality counts were on screen`);
  // And BodyPartExamined counts use both filters.
  const [bp] = await s.ctx.engine.rows(
    `SELECT BodyPartExamined AS v, count(DISTINCT PatientID) AS n FROM "index" WHERE collection_id = ? AND Modality = 'CT' AND BodyPartExamined IS NOT NULL GROUP BY 1 ORDER BY n DESC LIMIT 1`,
    [coll],
  );
  assert.equal(Number(await b.page.getAttribute(`[data-facet="BodyPartExamined"] [data-value="${bp!.v}"]`, 'data-count')), Number(bp!.n));
  await b.page.locator('[data-chip]').first().waitFor();
  assert.equal(await b.page.locator('[data-chip]').count(), 2);
  await b.screenshot('2-collection-and-ct');
});

test('a range filter typed into the min box narrows the cohort as the API does', async () => {
  const [mid] = await s.ctx.engine.rows(`SELECT quantile_disc(instanceCount, 0.5) AS m FROM "index" WHERE collection_id = ? AND Modality = 'CT'`, [coll]);
  const gte = Number(mid!.m);
  const box = b.page.locator('[data-facet="instanceCount"] input[aria-label^="Minimum"]');
  if (!(await box.isVisible())) await b.page.locator('[data-facet="instanceCount"] .facet-toggle').click();
  await box.fill(String(gte));
  await box.press('Enter');
  await totalsEqualCounts({ terms: { collection_id: [coll], Modality: ['CT'] }, ranges: { instanceCount: { gte } } });
  assert.match(b.page.url(), new RegExp(`instanceCount_gte=${gte}`));
  await b.screenshot('3-range');
  // Removing its chip brings the previous cohort back.
  await b.page.locator('[data-chip="instanceCount:range"] button').click();
  await totalsEqualCounts({ terms: { collection_id: [coll], Modality: ['CT'] } });
  // A date is typed as the API writes it (YYYY-MM-DD), whatever the browser's locale.
  const [day] = await s.ctx.engine.rows(`SELECT CAST(quantile_disc(StudyDate, 0.5) AS VARCHAR) AS d FROM "index" WHERE collection_id = ? AND Modality = 'CT'`, [coll]);
  const date = b.page.locator('[data-facet="StudyDate"] input[aria-label^="Maximum"]');
  if (!(await date.isVisible())) await b.page.locator('[data-facet="StudyDate"] .facet-toggle').click();
  assert.equal(await date.getAttribute('type'), 'text');
  assert.match((await date.getAttribute('placeholder')) ?? '', /^\d{4}-\d{2}-\d{2}$/);
  await date.fill(String(day!.d));
  await date.press('Enter');
  await totalsEqualCounts({ terms: { collection_id: [coll], Modality: ['CT'] }, ranges: { StudyDate: { lte: String(day!.d) } } });
  await date.fill('03/04/2001');
  await date.press('Enter');
  await b.page.locator('[data-facet="StudyDate"] .field-error', { hasText: 'Enter a date (YYYY-MM-DD).' }).waitFor();
  await b.page.locator('[data-chip="StudyDate:range"] button').click();
  await totalsEqualCounts({ terms: { collection_id: [coll], Modality: ['CT'] } });
  await b.page.locator('[data-facet="StudyDate"] .field-error').waitFor({ state: 'detached' });
  assert.equal(await date.inputValue(), '', 'the refused text goes with the range');
});

test('the series table pages and sorts on the server, with viewer links as /v3/viewer-url gives them', async () => {
  await b.page.locator('#tab-series').click();
  const table = b.page.locator('[data-table="series"] table.data');
  await table.locator('tbody tr').first().waitFor();
  const order = `ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID`;
  const uids = (await s.ctx.engine.rows(`SELECT SeriesInstanceUID AS u FROM "index" WHERE collection_id = ? AND Modality = 'CT' ${order}`, [coll])).map((r) => String(r.u));
  assert.ok(uids.length > 25, 'the cohort spans several pages');
  const shownUids = async () =>
    Promise.all((await table.locator('tbody tr td[data-col="SeriesInstanceUID"] code').all()).map(async (c) => (await c.getAttribute('data-uid'))!));
  assert.deepEqual(await shownUids(), uids.slice(0, 25));
  await b.page.getByRole('button', { name: 'Next' }).click();
  await b.page.locator('[data-page="1"]').waitFor();
  assert.deepEqual(await shownUids(), uids.slice(25, 50));
  // Sort by instances, largest first.
  await b.page.locator('[data-sort="instanceCount"]').click();
  await b.page.locator('th[aria-sort="descending"] [data-sort="instanceCount"]').waitFor();
  await b.page.locator('[data-page="0"]').waitFor();
  const top = (
    await s.ctx.engine.rows(
      `SELECT SeriesInstanceUID AS u FROM "index" WHERE collection_id = ? AND Modality = 'CT' ORDER BY instanceCount DESC NULLS LAST, collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID LIMIT 25`,
      [coll],
    )
  ).map((r) => String(r.u));
  await table.locator(`tbody tr:first-child td[data-col="SeriesInstanceUID"] code[data-uid="${top[0]}"]`).waitFor();
  assert.deepEqual(await shownUids(), top);
  const link = table.locator('a.viewer').first();
  const series = (await link.getAttribute('data-viewer-for'))!;
  const viewer = (await (await s.get(`/v3/viewer-url?series_instance_uid=${encodeURIComponent(series)}`)).json()) as { viewer_url: string };
  assert.equal(await link.getAttribute('href'), viewer.viewer_url);
  await b.screenshot('4-series-table');
});

test('the manifest the export tab downloads is manifest.txt for the same cohort and store', async () => {
  await b.page.locator('#tab-export').click();
  await b.page.locator('select[name=source]').selectOption('cloud2');
  const [download] = await Promise.all([b.page.waitForEvent('download'), b.page.locator('[data-action="download-manifest"]').click()]);
  const got = readFileSync((await download.path())!, 'utf8');
  const want = await (await s.post('/v3/cohort/manifest.txt', { filters: { terms: { collection_id: [coll], Modality: ['CT'] } }, source: 'cloud2', format: 's5cmd' })).text();
  assert.equal(got, want);
  // Saved under the name its own first line runs it with.
  assert.equal(download.suggestedFilename(), /run (\S+)$/.exec(want.split('\n')[0]!)![1]);
  // A table of chosen columns: what manifest.txt gives for the same format and columns.
  await b.page.locator('select[name=format]').selectOption('csv');
  await b.page.locator('input[name=columns]').fill('SeriesInstanceUID, Modality, url');
  const [table] = await Promise.all([b.page.waitForEvent('download'), b.page.locator('[data-action="download-manifest"]').click()]);
  const wantCsv = await (
    await s.post('/v3/cohort/manifest.txt', { filters: { terms: { collection_id: [coll], Modality: ['CT'] } }, source: 'cloud2', format: 'csv', columns: ['SeriesInstanceUID', 'Modality', 'url'] })
  ).text();
  assert.ok(wantCsv.startsWith('SeriesInstanceUID,Modality,url\n'));
  assert.equal(readFileSync((await table.path())!, 'utf8'), wantCsv);
  assert.match(table.suggestedFilename(), /^manifest_.*_gcs\.csv$/);
  await b.page.locator('select[name=format]').selectOption('s5cmd');
  // The downloader command of the manifest payload is shown as the API returns it.
  await b.page.locator('#cmd-idqs').waitFor();
  const payload = (await (await s.post('/v3/cohort/manifest', { filters: { terms: { collection_id: [coll], Modality: ['CT'] } }, include_rows: false })).json()) as {
    download: { commands: { idqs: string[] } };
  };
  assert.equal(await b.page.locator('#cmd-idqs').textContent(), payload.download.commands.idqs.join('\n'));
  await b.screenshot('5-export');
});

test('the SQL console shows results with truncated, and engine errors with their hint', async () => {
  await b.page.locator('#tab-sql').click();
  const editor = b.page.locator('#sql-editor');
  await editor.fill('SELECT SeriesInstanceUID FROM index ORDER BY 1');
  await b.page.locator('input.narrow').fill('7');
  await b.page.locator('input.narrow').press('Tab');
  await b.page.locator('[data-action="run-sql"]').click();
  await b.page.locator('[data-row-count="7"]').waitFor();
  await b.page.locator('[data-truncated="true"]').waitFor();
  assert.equal(await b.page.locator('.sql-result tbody tr').count(), 7);
  await editor.fill('SELECT count(*) FROM indx');
  await editor.press('Control+Enter');
  const error = b.page.locator('.error');
  await error.waitFor();
  const api = (await (await s.post('/v3/sql', { sql: 'SELECT count(*) FROM indx' })).json()) as { error: { message: string } };
  assert.match(api.error.message, /Did you mean/);
  assert.equal(await error.textContent(), `Query failed: ${api.error.message}`);
  await b.screenshot('6-sql-error');
});

test('a SQL result charted: bar, line and scatter plot the rows SQL gives, rows without a number are counted, not drawn', async () => {
  const editor = b.page.locator('#sql-editor');
  const canvas = b.page.locator('.sql-chart canvas');
  // What the chart draws, once it is what SQL says (the selects redraw it one by one on the way).
  const drawn = async (want: unknown) => {
    let got: unknown = null;
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      const a = await canvas.getAttribute('data-points');
      got = a === null ? null : JSON.parse(a);
      if (JSON.stringify(got) === JSON.stringify(want)) break;
    }
    assert.deepEqual(got, want);
  };
  const q = `SELECT Modality, count(*) AS series, sum(instanceCount) AS instances, avg(CASE WHEN collection_id = '${coll}' THEN instanceCount END) AS here FROM index GROUP BY 1 ORDER BY 2 DESC, 1`;
  await b.page.locator('input.narrow').fill('1000');
  await editor.fill(q);
  await b.page.locator('[data-action="run-sql"]').click();
  await b.page.locator('[data-action="chart-sql"]').click();
  const want = await s.ctx.engine.rows(q);
  // The first choice: categories along (Modality), the first numeric column up.
  await drawn(want.map((r) => [r.Modality, Number(r.series)]));
  await b.page.locator('select[name=chart-y]').selectOption('instances');
  await drawn(want.map((r) => [r.Modality, Number(r.instances)]));
  await b.page.locator('select[name=chart-kind]').selectOption('line');
  await b.page.locator('select[name=chart-y]').selectOption('here');
  const some = want.filter((r) => r.here !== null);
  await drawn(some.map((r) => [r.Modality, Number(r.here)]));
  assert.equal(await b.page.locator('[data-chart-skipped]').getAttribute('data-chart-skipped'), String(want.length - some.length));
  assert.ok(want.length - some.length > 0, 'some modalities have no series in the collection');
  await b.page.locator('select[name=chart-kind]').selectOption('scatter');
  await b.page.locator('select[name=chart-x]').selectOption('series');
  await b.page.locator('select[name=chart-y]').selectOption('instances');
  await drawn(want.map((r) => ({ x: Number(r.series), y: Number(r.instances) })));
  await b.screenshot('6b-sql-chart');
});

test('the Changes tab: totals and a row per collection or modality as /v3/cohort/changes gives them, and the whole list as TSV', async () => {
  await b.page.locator('#tab-changes').click();
  const filters = { terms: { collection_id: [coll], Modality: ['CT'] } };
  const version = (await (await s.get('/v3/version')).json()) as { idc_version: string };
  const from = `v${Number(/\d+/.exec(version.idc_version)![0]) - 1}`;
  const rowsOf = async (by: string) => {
    const table = b.page.locator(`table[data-changes-by="${by}"]`);
    await table.waitFor();
    return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
  };
  for (const by of ['collection_id', 'Modality']) {
    if (by === 'Modality') await b.page.locator('[data-by="Modality"]').click();
    const api = (await (await s.post('/v3/cohort/changes', { filters, from, limit: 0, by })).json()) as {
      counts: Record<'added' | 'revised' | 'removed', { series: number }> & { unchanged: number };
      groups: { value: string | null; added: number; revised: number; removed: number; unchanged: number }[];
    };
    assert.ok(api.groups.length > 0);
    const want = api.groups.map((g) => [g.value ?? '(none)', ...[g.added, g.revised, g.removed, g.unchanged].map((n) => n.toLocaleString('en-US'))]);
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      if (JSON.stringify((await rowsOf(by)).map((r) => r.slice(0, 5))) === JSON.stringify(want)) break;
    }
    assert.deepEqual((await rowsOf(by)).map((r) => r.slice(0, 5)), want);
    for (const k of ['added', 'revised', 'removed'] as const) assert.equal(await b.page.locator(`[data-change="${k}"]`).getAttribute('data-value'), String(api.counts[k].series));
    assert.equal(await b.page.locator('[data-change="unchanged"]').getAttribute('data-value'), String(api.counts.unchanged));
  }
  const [download] = await Promise.all([b.page.waitForEvent('download'), b.page.locator('[data-action="download-changes"]').click()]);
  const tsv = await (await s.post('/v3/cohort/changes', { filters, from, format: 'tsv' })).text();
  assert.equal(readFileSync((await download.path())!, 'utf8'), tsv);
  await b.screenshot('6c-changes');
  await b.page.locator('#tab-sql').click();
});

test('reloading the shared URL restores the cohort; a portal filter link opens the same cohort', async () => {
  const shared = b.page.url();
  const fresh = await b.context.newPage();
  const main = b.page;
  b.page = fresh;
  try {
    await fresh.goto(shared);
    await totalsEqualCounts({ terms: { collection_id: [coll], Modality: ['CT'] } });
    assert.equal(await fresh.locator('#tab-sql').getAttribute('aria-selected'), 'true');
    await fresh.goto(`${s.url}/explore/filters/?Modality_op=OR&Modality=CT&collection_id=${coll}&instanceCount_gte=2&NoSuchAttribute=1`);
    await totalsEqualCounts({ terms: { collection_id: [coll], Modality: ['CT'] }, ranges: { instanceCount: { gte: 2 } } });
    assert.equal(new URL(fresh.url()).pathname, '/');
    assert.match(await fresh.locator('main').textContent() ?? '', /NoSuchAttribute/);
    await b.screenshot('7-portal-link');
  } finally {
    b.page = main;
    await fresh.close();
  }
});

test('no console errors, page errors or failed requests; the page has its own CSP and cached assets', async () => {
  // The only error answer is the SQL error the console test provoked.
  assert.deepEqual(b.problems, ['http 400 POST /v3/sql']);
  const page = await s.get('/');
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  const js = /src="(\/assets\/app-[^"]+\.js)"/.exec(await page.text())![1]!;
  const asset = await s.get(js, { 'accept-encoding': 'br' });
  assert.equal(asset.status, 200);
  assert.match(asset.headers.get('cache-control') ?? '', /max-age=31536000.*immutable|immutable.*max-age=31536000/);
  assert.equal(asset.headers.get('content-encoding'), 'br');
});
