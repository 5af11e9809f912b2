// The cart, a collection page and SQL over the cart in Chromium on the
// pinned real release (test/real-release.json), their numbers against SQL
// written here over the release's own Parquet file (idc_index.parquet, read
// by a DuckDB of the test's own, never the service's database); axe on each
// view and screenshots at 390, 768, 1024 and 1440 px. IDQS_SKIP_REAL_DATA
// skips it on purpose, with the reason printed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { lit } from '../src/core/data/sql.ts';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';
import { WIDTHS, axe } from './layout-checks.ts';
import { PIN, SKIP_REAL, pinnedRelease } from './real-releases.ts';

let s: TestServer;
let b: TestBrowser;
let raw: DuckDBConnection;

before(async () => {
  if (SKIP_REAL) return;
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  const rel = await pinnedRelease();
  raw = await (await DuckDBInstance.create(':memory:')).connect();
  await raw.run(
    `CREATE TABLE idx AS SELECT collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, BodyPartExamined FROM read_parquet(${lit(join(rel.fetch.folder, 'idc_index.parquet'))})`,
  );
  s = await startServer({}, rel.db);
  b = await openBrowser({ width: 1440, height: 900 });
});
after(async () => {
  await b?.close();
  await s?.close();
  raw?.closeSync();
});

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await raw.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}

async function counts(where: string): Promise<string> {
  const [r] = await rows(`SELECT count(DISTINCT PatientID) AS p, count(DISTINCT StudyInstanceUID) AS st, count(*) AS se FROM idx WHERE ${where}`);
  return `${Number(r!.p)}/${Number(r!.st)}/${Number(r!.se)}`;
}

async function shots(name: string): Promise<void> {
  for (const [w, h] of WIDTHS) {
    await b.page.setViewportSize({ width: w, height: h });
    // The view itself, below the totals.
    await b.page.locator('.tab-panel').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await b.screenshot(`portal-real-${w}-${name}`);
  }
  await b.page.setViewportSize({ width: 1440, height: 900 });
}

test(`the real release ${PIN.release}: a collection page, then a cart of a collection and a page of series, its totals and SQL over it equal SQL over the Parquet file`, { skip: SKIP_REAL }, async () => {
  // Two mid-sized collections, by name (the same on every run of the pinned release).
  const picked = await rows(
    `SELECT collection_id AS c FROM idx GROUP BY 1 HAVING count(DISTINCT PatientID) BETWEEN 20 AND 200 AND count(*) >= 25 ORDER BY 1 LIMIT 2`,
  );
  assert.equal(picked.length, 2);
  const [c1, c2] = picked.map((r) => String(r.c)) as [string, string];

  await b.page.goto(`${s.url}/?tab=collections#collection=${encodeURIComponent(c1)}`);
  const page = b.page.locator(`[data-collection-page="${c1}"]`);
  await page.waitFor({ timeout: 60_000 });
  assert.equal(await page.locator('[data-detail-counts]').getAttribute('data-detail-counts'), await counts(`collection_id = ${lit(c1)}`), `${c1}: patients/studies/series`);
  await page.locator('[data-modality]').first().waitFor({ timeout: 30_000 });
  assert.deepEqual(await axe(b.page), [], 'axe on a real collection page');
  await shots('collection-page');

  // The cart: c1 from the collections list, then the first page of c2's series.
  await b.page.evaluate(`localStorage.removeItem('idqs-cart')`);
  await b.page.goto(`${s.url}/?tab=collections`);
  await b.page.locator('[data-view="collections-list"] tbody tr').first().waitFor({ timeout: 60_000 });
  await b.page.locator('[data-view="collections-list"] input[type=checkbox]').uncheck();
  await b.page.getByRole('searchbox', { name: 'Search collections' }).fill(c1);
  await b.page.locator(`[data-view="collections-list"] [data-cart-toggle="${c1}"]`).click();
  await b.page.goto(`${s.url}/?collection_id=${encodeURIComponent(c2)}&tab=series`);
  await b.page.locator('[data-add-page="series"]').waitFor({ timeout: 60_000 });
  await b.page.locator('[data-add-page="series"]').click();
  const cart = JSON.parse((await b.page.evaluate(`localStorage.getItem('idqs-cart')`)) as string) as { ids: { collections: string[]; series: string[] } };
  assert.deepEqual(cart.ids.collections, [c1]);
  assert.equal(cart.ids.series.length, 25);
  // The series table of c2 now says 1 in the cart for each of those rows.
  await b.page.locator(`[data-table="series"] [data-in-cart="${cart.ids.series[0]}"]:has-text("1")`).waitFor({ timeout: 30_000 });

  const union = `(collection_id = ${lit(c1)} OR SeriesInstanceUID IN (${cart.ids.series.map(lit).join(', ')}))`;
  const want = await counts(union);
  await b.page.goto(`${s.url}/?tab=cart`);
  await b.page.locator(`[data-cart-totals="${want}"]`).waitFor({ timeout: 60_000 });
  assert.deepEqual(await axe(b.page), [], 'axe on a real cart');
  await shots('cart');

  // SQL over the cart: the console's query of the cart adds up to its series.
  await b.page.getByRole('tab', { name: /^SQL/ }).click();
  await b.page.locator('[data-use="cart"]').click();
  await b.page.locator('[data-using="the cart"]').waitFor();
  await b.page.locator('[data-action="run-sql"]').click();
  await b.page.locator('.sql-result table tbody tr').first().waitFor({ timeout: 60_000 });
  const series = await b.page.locator('.sql-result table tbody td[data-col="series"]').allTextContents();
  assert.equal(series.reduce((a, t) => a + Number(t.replaceAll(',', '')), 0), Number(want.split('/')[2]), 'SQL over the cart counts its series');
  assert.deepEqual(await axe(b.page), [], 'axe on SQL over the real cart');
  await shots('sql-cart');
  assert.deepEqual(b.problems, [], 'no console error or failed request');
});

test(`the real release ${PIN.release}: Modality ALL from a link, then the None bucket of Body part examined, totals by SQL over the Parquet file`, { skip: SKIP_REAL }, async () => {
  const both = await counts(`StudyInstanceUID IN (SELECT StudyInstanceUID FROM idx WHERE Modality = 'CT' INTERSECT SELECT StudyInstanceUID FROM idx WHERE Modality = 'PT')`);
  await b.page.goto(`${s.url}/?Modality=CT&Modality=PT&Modality_op=AND`);
  await b.page.locator(`[data-total="series"][data-value="${both.split('/')[2]}"]`).waitFor({ timeout: 60_000 });
  assert.equal(await b.page.locator('[data-total="patients"]').getAttribute('data-value'), both.split('/')[0]);
  const facet = b.page.locator('#filters [data-facet="Modality"]');
  await facet.scrollIntoViewIfNeeded();
  await b.screenshot('portal-real-1440-modality-all');
  assert.deepEqual(await axe(b.page), [], 'axe with ALL on the real release');

  const none = await counts(`BodyPartExamined IS NULL`);
  await b.page.goto(`${s.url}/?BodyPartExamined_none=1`);
  await b.page.locator(`[data-total="series"][data-value="${none.split('/')[2]}"]`).waitFor({ timeout: 60_000 });
  assert.equal(await b.page.locator('[data-total="patients"]').getAttribute('data-value'), none.split('/')[0]);
  await b.page.locator('#filters [data-facet="BodyPartExamined"] [data-none-bucket]').scrollIntoViewIfNeeded();
  await b.screenshot('portal-real-1440-none-bucket');
  assert.deepEqual(b.problems, [], 'no console error or failed request');
});

test(`the real release ${PIN.release}: the Export tab's series file holds every series of a cohort larger than one export request, as SQL lists them`, { skip: SKIP_REAL }, async () => {
  // A collection of 12,000 to 40,000 series: the explorer fetches it in several requests of 5,000 rows.
  const [pick] = await rows(`SELECT collection_id AS c, count(*) AS n FROM idx GROUP BY 1 HAVING count(*) BETWEEN 12000 AND 40000 ORDER BY 2, 1 LIMIT 1`);
  assert.ok(pick, 'the release has a collection of that size');
  const c = String(pick.c);
  const want = (await rows(`SELECT SeriesInstanceUID AS s FROM idx WHERE collection_id = ${lit(c)}`)).map((r) => String(r.s));
  await b.page.goto(`${s.url}/?collection_id=${encodeURIComponent(c)}&tab=export`);
  const button = b.page.getByRole('button', { name: 'Download JSON (one object per line)' });
  await button.waitFor({ timeout: 60_000 });
  // The button needs the cohort's totals (how many requests it will make): wait for them to show.
  await b.page.getByText(/fetched in \d+ requests of 5,000 rows/).waitFor({ timeout: 60_000 });
  const [download] = await Promise.all([b.page.waitForEvent('download', { timeout: 180_000 }), button.click()]);
  const got = readFileSync((await download.path())!, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => String((JSON.parse(l) as { SeriesInstanceUID: unknown }).SeriesInstanceUID));
  assert.equal(got.length, want.length, `${c}: one line per series`);
  assert.equal(new Set(got).size, got.length, 'no series twice');
  assert.deepEqual(new Set(got), new Set(want), `${c}: exactly the collection's series`);
  await b.page.getByRole('status').filter({ hasText: `Saved ${want.length.toLocaleString('en-US')} rows` }).waitFor({ timeout: 10_000 });
});
