// The cart in a real browser: series of a table page, a collection and a
// whole cohort added, the cart's totals equal to SQL over the union of what
// it holds, kept across a reload, carried by its share link into an emptied
// browser (once asked to), and a link made on another release saying so; axe on the cart.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';
import { axe } from './layout-checks.ts';

let s: TestServer;
let b: TestBrowser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  s = await startServer();
  b = await openBrowser({ width: 1440, height: 900 });
});
after(async () => {
  await b?.close();
  await s?.close();
});

interface StoredCart {
  release: string | null;
  cohorts: { terms: Record<string, string[]>; ranges: Record<string, unknown> }[];
  ids: Record<'collections' | 'patients' | 'studies' | 'series', string[]>;
}

async function stored(): Promise<StoredCart> {
  return JSON.parse((await b.page.evaluate(`localStorage.getItem('idqs-cart')`)) as string) as StoredCart;
}

test('series, a collection and a cohort in the cart: totals equal SQL over their union; kept across a reload; shared by link', async () => {
  const [mr] = await s.ctx.engine.rows(`SELECT collection_id AS c FROM "index" WHERE Modality = 'MR' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
  const coll = String(mr!.c);
  await b.page.goto(`${s.url}/?Modality=CT&tab=series`);
  const add = b.page.locator('[data-add-page="series"]');
  await add.waitFor({ timeout: 20_000 });
  await add.click();
  const page1 = (await stored()).ids.series;
  assert.equal(page1.length, 25, 'one page of 25 series');
  // A collection from the list, then a whole cohort (PatientSex F) from the bar.
  await b.page.getByRole('tab', { name: /^Collections/ }).click();
  await b.page.locator('[data-view="collections-list"] input[type=checkbox]').uncheck();
  await b.page.getByRole('searchbox', { name: 'Search collections' }).fill(coll);
  await b.page.locator(`[data-cart-toggle="${coll}"]`).first().click();
  await b.page.goto(`${s.url}/?PatientSex=F`);
  await b.page.locator('[data-add-cohort]:not([disabled])').click();
  const cart = await stored();
  assert.deepEqual(cart.ids.collections, [coll]);
  assert.equal(cart.cohorts.length, 1);
  const release = (await (await s.get('/v3/version')).json()) as { idc_version: string };
  assert.equal(cart.release, release.idc_version);

  const where = `(SeriesInstanceUID IN (${page1.map(() => '?').join(', ')}) OR collection_id = ? OR PatientSex = 'F')`;
  const [want] = await s.ctx.engine.rows(
    `SELECT count(DISTINCT PatientID)::INTEGER AS p, count(DISTINCT StudyInstanceUID)::INTEGER AS st, count(*)::INTEGER AS se FROM "index" WHERE ${where}`,
    [...page1, coll],
  );
  const totals = `${want!.p}/${want!.st}/${want!.se}`;
  await b.page.goto(`${s.url}/?tab=cart`);
  await b.page.locator(`[data-cart-totals="${totals}"]`).waitFor({ timeout: 15_000 });
  assert.equal(await b.page.locator('[role=tab][id="tab-cart"] .tab-count').textContent(), '27', '25 series, a collection and a cohort');
  await b.screenshot('cart-1440');
  assert.deepEqual(await axe(b.page), [], 'axe on the cart');
  // The export panel is the cart's: its download commands count the cart's series.
  await b.page.reload();
  await b.page.locator(`[data-cart-totals="${totals}"]`).waitFor({ timeout: 15_000 });

  // The SQL console takes the cart as the table cohort: its series add up to the cart's.
  await b.page.getByRole('tab', { name: /^SQL/ }).click();
  await b.page.locator('[data-use="cart"]').click();
  await b.page.locator('[data-using="the cart"]').waitFor();
  await b.page.locator('[data-action="run-sql"]').click();
  await b.page.locator('.sql-result table tbody tr').first().waitFor({ timeout: 20_000 });
  const series = await b.page.locator('.sql-result table tbody td[data-col="series"]').allTextContents();
  assert.equal(series.reduce((a, t) => a + Number(t.replaceAll(',', '')), 0), want!.se, 'SQL over the cart counts its series');
  await b.screenshot('cart-sql-1440');
  await b.page.getByRole('tab', { name: /^Cart/ }).click();
  await b.page.locator(`[data-cart-totals="${totals}"]`).waitFor({ timeout: 15_000 });

  const link = (await b.page.locator('[data-share-link]').inputValue()).trim();
  assert.match(link, /#cart=[A-Za-z0-9_-]+$/);
  await b.page.getByRole('button', { name: 'Empty the cart' }).click();
  assert.equal((await stored()).cohorts.length, 0);
  await b.page.goto(link);
  // The emptied cart is not filled until asked to.
  await b.page.locator('[data-shared-cart="27"]').waitFor();
  assert.equal((await stored()).cohorts.length, 0);
  await b.page.locator('[data-shared="replace"]').click();
  await b.page.getByRole('tab', { name: /^Cart/ }).click();
  await b.page.locator(`[data-cart-totals="${totals}"]`).waitFor({ timeout: 15_000 });

  // A link made on another release: the same cart marked v1 (packed in the page as the explorer packs it).
  const other = (await b.page.evaluate(`(async () => {
    const c = JSON.parse(localStorage.getItem('idqs-cart'));
    c.release = 'v1';
    const packed = new Uint8Array(await new Response(new Blob([JSON.stringify(c)]).stream().pipeThrough(new CompressionStream('deflate-raw'))).arrayBuffer());
    let bin = '';
    for (const x of packed) bin += String.fromCharCode(x);
    return location.origin + '/#cart=' + btoa(bin).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  })()`)) as string;
  await b.page.goto(other);
  await b.page.locator('[data-shared-cart]', { hasText: `made on data release v1` }).filter({ hasText: `This service serves ${release.idc_version}` }).waitFor();
  assert.deepEqual(b.problems, []);
});
