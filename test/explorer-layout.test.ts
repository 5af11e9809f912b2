// The explorer on every screen: at 390, 768, 1024 and 1440 pixels wide the
// page is measured from element boxes (nothing overlaps the results, totals
// and tabs are not clipped, the page is no taller than its content and no
// wider than the screen, tables scroll inside their card), the filter drawer
// of narrow screens opens, counts active filters and closes, charts are
// operable from the keyboard, and axe-core finds no serious or critical
// violation on any view. Screenshots go to .cache/screenshots/.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';
import { WIDTHS, axe, checkLayout, loaded } from './layout-checks.ts';

let s: TestServer;
let b: TestBrowser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  s = await startServer();
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  await s?.close();
});

test('at 390, 768, 1024 and 1440 px: no overlap, no clipping, no blank scroll, no sideways scroll; axe finds nothing serious', async () => {
  for (const [width, height] of WIDTHS) await checkLayout(b, s.url, width, height, 'synthetic');
});

test('at 390 px the drawer opens, counts the filters it holds, closes with Escape; tables scroll inside their card', async () => {
  await b.page.setViewportSize({ width: 390, height: 844 });
  await b.page.goto(`${s.url}/`);
  await loaded(b.page);
  const button = b.page.locator('#open-filters');
  assert.equal(await button.getAttribute('data-active-filters'), '0');
  await button.click();
  const panel = b.page.locator('#filters');
  await panel.waitFor({ state: 'visible' });
  await b.screenshot('layout-synthetic-390-drawer');
  assert.deepEqual(await axe(b.page), [], 'axe with the drawer open');
  await panel.locator('[data-facet="Modality"] li:has([data-value="CT"]) input[type=checkbox]').check();
  await b.page.keyboard.press('Escape');
  await panel.waitFor({ state: 'hidden' });
  await b.page.locator('#open-filters[data-active-filters="1"]').waitFor();
  assert.equal(await b.page.evaluate('document.activeElement && document.activeElement.id'), 'open-filters', 'focus returns to the button');
  const want = (await (await s.post('/v3/cohort/counts', { terms: { Modality: ['CT'] } })).json()) as { patients: number };
  await b.page.locator(`[data-total="patients"][data-value="${want.patients}"]`).waitFor();

  await b.page.getByRole('tab', { name: /Series/ }).click();
  await b.page.locator('[data-table="series"] tbody tr').first().waitFor();
  await b.screenshot('layout-synthetic-390-series');
  const widths = (await b.page.evaluate(`(() => {
    const x = document.querySelector('[data-table="series"] .scroll-x');
    return { inner: x.scrollWidth, card: x.clientWidth, page: document.documentElement.scrollWidth, viewport: innerWidth };
  })()`)) as { inner: number; card: number; page: number; viewport: number };
  assert.ok(widths.inner > widths.card, 'the series table is wider than its card at 390 px, so it scrolls inside it');
  assert.ok(widths.page <= widths.viewport, `the page itself does not scroll sideways (${widths.page} px)`);
  assert.deepEqual(await axe(b.page), [], 'axe on the series table');
});

test('the program → collection tree: the checkbox of a program selects its collections; its count is distinct patients by SQL', async () => {
  await b.page.setViewportSize({ width: 1440, height: 900 });
  await b.page.goto(`${s.url}/`);
  await loaded(b.page);
  // The program with the fewest collections among those with at least two.
  const [p] = await s.ctx.engine.rows(
    `SELECT program_id, list(collection_id ORDER BY collection_id) AS ids FROM collections_index
     WHERE collection_id IN (SELECT collection_id FROM "index") GROUP BY 1 HAVING count(*) >= 2 ORDER BY count(*), 1 LIMIT 1`,
  );
  const program = String(p!.program_id);
  const ids = (p!.ids as string[]).map(String);
  const [n] = await s.ctx.engine.rows(`SELECT count(DISTINCT PatientID)::INTEGER AS n FROM "index" WHERE collection_id IN (SELECT collection_id FROM collections_index WHERE program_id = ?)`, [program]);
  const row = b.page.locator(`[data-facet="collection_id"] li[data-program="${program}"]`);
  assert.equal(Number(await row.locator('[data-program-count]').first().getAttribute('data-program-count')), n!.n, `${program}: patients`);
  await row.locator('.tree-head input[type=checkbox]').check();
  await b.page.locator(`[data-total="patients"][data-value="${n!.n}"]`).waitFor({ timeout: 15_000 });
  const url = new URL(b.page.url());
  assert.deepEqual(url.searchParams.getAll('collection_id').sort(), ids, 'the URL holds every collection of the program');
  await b.screenshot('layout-synthetic-1440-program-tree');
});

test('a chart is operable from the keyboard: arrows then Enter select the value shown', async () => {
  await b.page.setViewportSize({ width: 1440, height: 900 });
  await b.page.goto(`${s.url}/?tab=charts`);
  await loaded(b.page);
  const canvas = b.page.locator('.charts canvas[tabindex="0"]').first();
  await canvas.waitFor();
  const before = b.page.url();
  await canvas.focus();
  await b.page.keyboard.press('ArrowRight');
  await b.page.keyboard.press('Enter');
  await b.page.waitForURL((u) => u.toString() !== before, { timeout: 10_000 });
  assert.ok((await b.page.locator('[data-chip]').count()) === 1, 'one filter chip after Enter on a chart');
  for (const tab of ['Collections', 'Patients', 'Studies', 'Export', 'SQL'] as const) {
    await b.page.getByRole('tab', { name: new RegExp(`^${tab}`) }).click();
    await b.page.waitForTimeout(600);
    assert.deepEqual(await axe(b.page), [], `axe on the ${tab} view`);
  }
  await b.screenshot('layout-synthetic-1440-sql');
  assert.deepEqual(b.problems, []);
});
