// A cart's share link in fresh browsers: it carries the cohort on screen
// (its filters, shown with totals equal to SQL) and the tab with the cart,
// and it never touches the recipient's own cart before they choose: keep
// theirs (kept across a reload), replace it, or merge the two (the merged
// cart's totals equal SQL over the union); with an empty cart it offers to
// open the shared one.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';

let s: TestServer;
const browsers: TestBrowser[] = [];

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  s = await startServer();
});
after(async () => {
  for (const b of browsers) await b.close();
  await s?.close();
});

async function fresh(): Promise<TestBrowser> {
  const b = await openBrowser({ width: 1280, height: 900 });
  browsers.push(b);
  return b;
}

interface StoredCart {
  release: string | null;
  cohorts: { terms: Record<string, (string | null)[]>; ranges: Record<string, unknown> }[];
  ids: Record<'collections' | 'patients' | 'studies' | 'series', string[]>;
}

async function stored(b: TestBrowser): Promise<StoredCart | null> {
  return JSON.parse((await b.page.evaluate(`localStorage.getItem('idqs-cart')`)) as string) as StoredCart | null;
}

async function totalsOf(where: string, params: string[] = []): Promise<string> {
  const [r] = await s.ctx.engine.rows(
    `SELECT count(DISTINCT PatientID)::INTEGER AS p, count(DISTINCT StudyInstanceUID)::INTEGER AS st, count(*)::INTEGER AS se FROM "index" WHERE ${where}`,
    params,
  );
  return `${r!.p}/${r!.st}/${r!.se}`;
}

/** The totals the explorer shows for the cohort on screen, as patients/studies/series once counted. */
async function shownTotals(b: TestBrowser, want: string): Promise<void> {
  const [p, st, se] = want.split('/');
  await b.page.locator(`[data-total="patients"][data-value="${p}"]`).waitFor({ timeout: 20_000 });
  await b.page.locator(`[data-total="studies"][data-value="${st}"]`).waitFor();
  await b.page.locator(`[data-total="series"][data-value="${se}"]`).waitFor();
}

test('a share link carries the cohort and the cart, and asks before it touches the recipient’s cart', async () => {
  const colls = (await s.ctx.engine.rows(`SELECT collection_id AS c FROM "index" GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 2`)).map((r) => String(r.c));
  assert.equal(colls.length, 2, 'two collections for the recipient’s own cart');

  // The sender: a cohort of female patients in the cart, then a CT cohort on screen while the link is copied.
  const sender = await fresh();
  await sender.page.goto(`${s.url}/?PatientSex=F`);
  await sender.page.locator('[data-add-cohort]:not([disabled])').click();
  await sender.page.goto(`${s.url}/?Modality=CT&tab=cart`);
  const link = (await sender.page.locator('[data-share-link]').inputValue()).trim();
  const url = new URL(link);
  assert.deepEqual(url.searchParams.getAll('Modality'), ['CT'], `the link carries the cohort on screen: ${link}`);
  assert.equal(url.searchParams.get('tab'), 'cart');
  assert.match(url.hash, /^#cart=[A-Za-z0-9_-]+$/);
  const shared = await stored(sender);
  assert.equal(shared?.cohorts.length, 1);

  const ct = await totalsOf(`Modality = 'CT'`);
  const sharedTotals = await totalsOf(`PatientSex = 'F'`);

  // A recipient with no cart: the cohort is the link's at once; the cart waits for a choice.
  const empty = await fresh();
  await empty.page.goto(link);
  await shownTotals(empty, ct);
  await empty.page.locator('[data-shared-cart="1"]').waitFor();
  assert.equal(await stored(empty), null, 'nothing stored before the recipient chooses');
  await empty.screenshot('share-offer-empty-1280');
  await empty.page.locator('[data-shared="replace"]').click();
  assert.deepEqual(await stored(empty), shared);
  await empty.page.locator(`[data-cart-totals="${sharedTotals}"]`).waitFor({ timeout: 15_000 });
  assert.equal(new URL(empty.page.url()).hash, '', 'the spent hash leaves the address');
  await shownTotals(empty, ct);

  // A recipient with a cart of two collections of their own.
  const mine: StoredCart = { release: shared!.release, cohorts: [], ids: { collections: colls, patients: [], studies: [], series: [] } };
  const owner = await fresh();
  await owner.page.goto(`${s.url}/`);
  await owner.page.evaluate(`localStorage.setItem('idqs-cart', ${JSON.stringify(JSON.stringify(mine))})`);
  await owner.page.goto(link);
  await shownTotals(owner, ct);
  await owner.page.locator('[data-shared-cart="1"]', { hasText: 'Your own cart holds 2 items' }).waitFor();
  assert.deepEqual(await stored(owner), mine, 'the link alone leaves the own cart as it was');
  await owner.screenshot('share-offer-own-1280');
  await owner.page.reload();
  await owner.page.locator('[data-shared-cart="1"]').waitFor();
  assert.deepEqual(await stored(owner), mine, 'and so does a reload');
  await owner.page.locator('[data-shared="keep"]').click();
  assert.deepEqual(await stored(owner), mine, 'keep mine');
  await owner.page.reload();
  await owner.page.locator(`[data-cart-items="2"]`).waitFor({ timeout: 15_000 });
  assert.equal(await owner.page.locator('[data-shared-cart]').count(), 0, 'a kept cart is not asked about again after a reload');

  await owner.page.goto(link);
  await owner.page.locator('[data-shared="merge"]').click();
  const merged = await stored(owner);
  assert.deepEqual(merged?.ids.collections, colls);
  assert.deepEqual(merged?.cohorts, shared!.cohorts);
  const union = await totalsOf(`(collection_id IN (?, ?) OR PatientSex = 'F')`, colls);
  await owner.page.locator(`[data-cart-totals="${union}"]`).waitFor({ timeout: 15_000 });

  await owner.page.goto(link);
  await owner.page.locator('[data-shared-cart="1"]', { hasText: 'Your own cart holds 3 items' }).waitFor();
  await owner.page.locator('[data-shared="replace"]').click();
  assert.deepEqual(await stored(owner), shared, 'replace mine');
  await owner.page.locator(`[data-cart-totals="${sharedTotals}"]`).waitFor({ timeout: 15_000 });
  for (const b of browsers) assert.deepEqual(b.problems, []);
});
