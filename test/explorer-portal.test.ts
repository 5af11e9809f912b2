// The portal's remaining controls in the explorer, on the test dataset:
// Modality ANY / ALL, the None bucket, the Derived group, "# in cart" and
// the per-row s5cmd download of the tables and the collections list. Totals and counts against SQL
// written here; the URL carries ALL and None; axe (heading order included)
// on each view; screenshots at 390, 768, 1024 and 1440 px.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';
import { WIDTHS, axe, loaded } from './layout-checks.ts';

let s: TestServer;
let b: TestBrowser;
let pair: [string, string];

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  s = await startServer();
  b = await openBrowser({ width: 1440, height: 900 });
  const [r] = await s.ctx.engine.rows(
    `SELECT a.Modality AS a, b.Modality AS b FROM "index" a JOIN "index" b ON a.StudyInstanceUID = b.StudyInstanceUID AND a.Modality < b.Modality
     GROUP BY 1, 2 ORDER BY count(DISTINCT a.StudyInstanceUID) DESC, 1, 2 LIMIT 1`,
  );
  pair = [String(r!.a), String(r!.b)];
});
after(async () => {
  await b?.close();
  await s?.close();
});

async function sql(where: string, params: string[] = []): Promise<{ p: number; st: number; se: number }> {
  const [r] = await s.ctx.engine.rows(
    `SELECT count(DISTINCT PatientID)::INTEGER AS p, count(DISTINCT StudyInstanceUID)::INTEGER AS st, count(*)::INTEGER AS se FROM "index" WHERE ${where}`,
    params,
  );
  return r as { p: number; st: number; se: number };
}

const patients = (n: number) => b.page.locator(`[data-total="patients"][data-value="${n}"]`).waitFor({ timeout: 20_000 });

test('Modality ANY then ALL: totals of either modality, then of studies having both; the URL keeps ALL', async () => {
  await b.page.goto(`${s.url}/`);
  await loaded(b.page);
  const facet = b.page.locator('#filters [data-facet="Modality"]');
  for (const m of pair) await facet.locator(`li:has([data-value="${m}"]) input[type=checkbox]`).check();
  await patients((await sql(`Modality IN (?, ?)`, pair)).p);
  await facet.getByRole('button', { name: 'ALL', exact: true }).click();
  const both = await sql(`StudyInstanceUID IN (SELECT StudyInstanceUID FROM "index" WHERE Modality = ? INTERSECT SELECT StudyInstanceUID FROM "index" WHERE Modality = ?)`, pair);
  await patients(both.p);
  await b.page.locator(`[data-total="series"][data-value="${both.se}"]`).waitFor();
  const url = new URL(b.page.url());
  assert.equal(url.searchParams.get('Modality_op'), 'AND');
  assert.deepEqual(url.searchParams.getAll('Modality').sort(), [...pair].sort());
  for (const [w, h] of WIDTHS) {
    await b.page.setViewportSize({ width: w, height: h });
    if (w < 1000) {
      await b.page.locator('#open-filters').click();
      await b.page.locator('#filters [data-facet="Modality"]').scrollIntoViewIfNeeded();
    } else await facet.scrollIntoViewIfNeeded();
    await b.screenshot(`portal-synthetic-${w}-modality-all`);
    assert.deepEqual(await axe(b.page), [], `axe, ALL at ${w} px`);
    if (w < 1000) await b.page.keyboard.press('Escape');
  }
  await b.page.setViewportSize({ width: 1440, height: 900 });
  // The link alone reopens the same cohort.
  await b.page.goto(url.href);
  await patients(both.p);
  assert.equal(await b.page.locator('#filters [data-facet="Modality"] button[aria-pressed="true"]', { hasText: 'ALL' }).count(), 1);
});

test('the None bucket of Body part examined selects the series without a value; the Derived group holds the analysis results', async () => {
  await b.page.goto(`${s.url}/`);
  await loaded(b.page);
  const none = await sql(`BodyPartExamined IS NULL`);
  assert.ok(none.se > 0, 'the test dataset has series without BodyPartExamined');
  const bucket = b.page.locator('#filters [data-facet="BodyPartExamined"] [data-none-bucket]');
  const [unfiltered] = await s.ctx.engine.rows(`SELECT count(DISTINCT PatientID)::INTEGER AS n FROM "index" WHERE BodyPartExamined IS NULL`);
  assert.equal(Number(await bucket.locator('[data-none]').getAttribute('data-count')), unfiltered!.n, 'the bucket counts patients with such series');
  await bucket.locator('input[type=checkbox]').check();
  await patients(none.p);
  assert.equal(new URL(b.page.url()).searchParams.get('BodyPartExamined_none'), '1');
  await b.page.locator('[data-chip="BodyPartExamined="]').waitFor();
  const derived = b.page.locator('#filters section[aria-labelledby="group-derived"]');
  assert.equal(await derived.locator('[data-facet="analysis_result_id"]').count(), 1, 'analysis results are in Derived');
  assert.equal(await b.page.locator('#filters section[aria-labelledby="group-scope"] [data-facet="analysis_result_id"]').count(), 0);
  await bucket.scrollIntoViewIfNeeded();
  await b.screenshot('portal-synthetic-1440-none-bucket');
  assert.deepEqual(await axe(b.page), [], 'axe with the None bucket');
});

test('"# in cart" counts the cart\'s series per study row by SQL; a row downloads its own s5cmd manifest', async () => {
  await b.page.goto(`${s.url}/`);
  await b.page.evaluate(`localStorage.removeItem('idqs-cart')`);
  // The cohort Modality = first of the pair goes into the cart; the studies table (no filter) shows how many of each study's series are in it.
  await b.page.goto(`${s.url}/?Modality=${encodeURIComponent(pair[0])}`);
  await b.page.locator('[data-add-cohort]:not([disabled])').click();
  await b.page.goto(`${s.url}/?tab=studies`);
  const rows = b.page.locator('[data-table="studies"] tbody tr');
  await rows.first().waitFor({ timeout: 20_000 });
  await b.page.locator('[data-table="studies"] tbody tr:first-child [data-in-cart]:not(:has-text("—"))').waitFor({ timeout: 20_000 });
  const cells = b.page.locator('[data-table="studies"] tbody [data-in-cart]');
  const n = await cells.count();
  assert.ok(n > 0);
  const study = (await cells.first().getAttribute('data-in-cart'))!;
  let nonZero = 0;
  for (const cell of await cells.all()) {
    const uid = (await cell.getAttribute('data-in-cart'))!;
    const [want] = await s.ctx.engine.rows(`SELECT count(*)::INTEGER AS n FROM "index" WHERE StudyInstanceUID = ? AND Modality = ?`, [uid, pair[0]]);
    assert.equal(Number((await cell.textContent())!.replaceAll(',', '')), want!.n, `${uid}: series in the cart`);
    if (Number(want!.n) > 0) nonZero++;
  }
  assert.ok(nonZero > 0 || n < 2, 'some study of the page has series in the cart');
  for (const [w, h] of WIDTHS) {
    await b.page.setViewportSize({ width: w, height: h });
    await b.screenshot(`portal-synthetic-${w}-studies-in-cart`);
  }
  await b.page.setViewportSize({ width: 1440, height: 900 });
  assert.deepEqual(await axe(b.page), [], 'axe on the studies table with its cart and download columns');

  const [download] = await Promise.all([b.page.waitForEvent('download'), b.page.locator(`[data-row-download="${study}"]`).click()]);
  assert.match(download.suggestedFilename(), /\.s5cmd$/);
  const text = readFileSync((await download.path())!, 'utf8');
  const lines = text.split('\n').filter((l) => l.startsWith('cp '));
  const uuids = (await s.ctx.engine.rows(`SELECT crdc_series_uuid AS u FROM "index" WHERE StudyInstanceUID = ? ORDER BY 1`, [study])).map((r) => String(r.u));
  assert.equal(lines.length, uuids.length, 'one cp line per series of the study');
  for (const u of uuids) assert.ok(lines.some((l) => l.includes(`/${u}/`)), `the manifest copies ${u}`);

  // The collections list has the portal's "# series in cart" too.
  const [top] = await s.ctx.engine.rows(`SELECT collection_id AS c, count(*)::INTEGER AS n FROM "index" WHERE Modality = ? GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`, [pair[0]]);
  await b.page.goto(`${s.url}/?tab=collections`);
  await b.page.locator(`[data-view="collections-list"] [data-in-cart="${top!.c}"]:not(:has-text("—"))`).waitFor({ timeout: 20_000 });
  assert.equal(Number((await b.page.locator(`[data-view="collections-list"] [data-in-cart="${top!.c}"]`).textContent())!.replaceAll(',', '')), top!.n);
  assert.deepEqual(await axe(b.page), [], 'axe on the collections list with its cart column');
  assert.deepEqual(b.problems, [], 'no console error or failed request');
});
