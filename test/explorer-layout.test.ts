// The explorer on every screen: at 390, 768, 1024 and 1440 pixels wide the
// page is measured from element boxes (nothing overlaps the results, totals
// and tabs are not clipped, the page is no taller than its content and no
// wider than the screen, tables scroll inside their card), the filter drawer
// of narrow screens opens, counts active filters and closes, charts are
// operable from the keyboard, and axe-core finds no serious or critical
// violation on any view; from 360 to 2560 px the tables' View and Download
// columns and the collections list's Cart column stay inside their card (from
// 768 px every collections column shown does), chart labels are never cut
// mid-word, a wide screen's width is used and the page never scrolls
// sideways. Screenshots go to .cache/screenshots/.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';
import { TABLE_WIDTHS, WIDTHS, axe, checkLayout, checkTableActions, loaded, measure } from './layout-checks.ts';
import { checkChartLabels, checkCollectionColumns, wholeWords } from './wide-layout-checks.ts';

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

test('at 360 to 2560 px the series and studies tables keep View and Download inside their card, with no sideways page scroll', async () => {
  for (const width of TABLE_WIDTHS) await checkTableActions(b, s.url, width, 'synthetic');
});

test('at 360 to 2560 px: chart labels whole or shortened after a whole word, inside the canvas; the collections columns yield, Cart stays inside its card', async () => {
  for (const width of TABLE_WIDTHS) {
    await checkChartLabels(b, s.url, width);
    await checkCollectionColumns(b, s.url, width);
  }
});

test('the label check itself: a cut after a whole word passes, a cut inside one fails', () => {
  assert.equal(wholeWords('Lung Squamous Cell Carcinoma', ['Lung Squamous', 'Cell Carcinoma']), true);
  assert.equal(wholeWords('Head and Neck Squamous Cell Carcinoma', ['Head and Neck', 'Squamous Cell…']), true);
  assert.equal(wholeWords('breast_cancer_screening_dbt', ['breast_cancer_', 'screening_dbt']), true);
  assert.equal(wholeWords('Lung Squamous Cell Carcinoma', ['Lung Squamous Cell Carci…']), false);
  assert.equal(wholeWords('Head and Neck Squamous Cell Carcinoma', ['ead and Neck Squamous Cell…']), false);
});

test('at 390 px the drawer opens as a modal (Tab and Shift+Tab stay in it), counts the filters it holds, closes with Escape; tables scroll inside their card', async () => {
  await b.page.setViewportSize({ width: 390, height: 844 });
  await b.page.goto(`${s.url}/`);
  await loaded(b.page);
  const button = b.page.locator('#open-filters');
  assert.equal(await button.getAttribute('data-active-filters'), '0');
  // The page says once, not twice (the drawer's bar and the chips both said it), that nothing is filtered.
  const said = (await b.page.evaluate(`document.querySelector('#main').innerText.split('No filter').length - 1`)) as number;
  assert.equal(said, 1, 'the page says "No filter" once at 390 px');
  await button.click();
  const panel = b.page.locator('#filters');
  await panel.waitFor({ state: 'visible' });
  await b.screenshot('layout-synthetic-390-drawer');
  assert.deepEqual(await axe(b.page), [], 'axe with the drawer open');
  // The drawer is modal: Shift+Tab from its first control, and Tab from its last, stay in it.
  const inDrawer = `!!(document.activeElement && document.activeElement.closest('#filters'))`;
  assert.equal(await b.page.evaluate(`document.activeElement && document.activeElement.textContent`), 'Show results', 'the drawer opens on its close button');
  await b.page.keyboard.press('Shift+Tab');
  assert.equal(await b.page.evaluate(inDrawer), true, 'Shift+Tab from the first control stays in the drawer');
  await b.page.keyboard.press('Tab');
  assert.equal(await b.page.evaluate(inDrawer), true, 'Tab from the last control stays in the drawer');
  await panel.locator('[data-facet="Modality"] li:has([data-value="CT"]) input[type=checkbox]').check();
  await b.page.keyboard.press('Escape');
  await panel.waitFor({ state: 'hidden' });
  await b.page.locator('#open-filters[data-active-filters="1"]').waitFor();
  assert.match(await b.page.locator('.drawer-bar').innerText(), /\b1 active filter\b/, 'the bar counts the filter');
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

test('the collections list: in-cohort and release counts by SQL, search; a collection page with its counts and modalities by SQL, opened as the cohort', async () => {
  await b.page.setViewportSize({ width: 1440, height: 900 });
  await b.page.goto(`${s.url}/?Modality=CT&tab=collections`);
  await b.page.locator('[data-view="collections-list"] tbody tr').first().waitFor({ timeout: 20_000 });
  const cohort = new Map(
    (await s.ctx.engine.rows(`SELECT collection_id AS c, count(DISTINCT PatientID)::INTEGER AS n FROM "index" WHERE Modality = 'CT' GROUP BY 1`)).map((r) => [String(r.c), r.n as number]),
  );
  const release = new Map((await s.ctx.engine.rows(`SELECT collection_id AS c, count(DISTINCT PatientID)::INTEGER AS n FROM "index" GROUP BY 1`)).map((r) => [String(r.c), r.n as number]));
  const rows = b.page.locator('[data-view="collections-list"] tbody tr');
  await b.page.locator('[data-view="collections-list"] tbody tr:first-child [data-in-release]:not([data-in-release=""])').waitFor();
  assert.equal(await rows.count(), cohort.size, 'one row per collection with CT');
  for (const row of (await rows.all()).slice(0, 5)) {
    const id = (await row.getAttribute('data-collection'))!;
    assert.equal(Number(await row.locator('[data-in-cohort]').getAttribute('data-in-cohort')), cohort.get(id), `${id} in cohort`);
    assert.equal(Number(await row.locator('[data-in-release]').getAttribute('data-in-release')), release.get(id), `${id} in release`);
  }
  await b.screenshot('layout-synthetic-1440-collections');
  assert.deepEqual(await axe(b.page), [], 'axe on the collections list');
  const first = (await rows.first().getAttribute('data-collection'))!;
  await b.page.getByRole('searchbox', { name: 'Search collections' }).fill(first);
  assert.ok((await rows.count()) >= 1 && (await rows.count()) < cohort.size, 'the search narrows the list');

  await rows.first().locator('a').click();
  const page = b.page.locator(`[data-collection-page="${first}"]`);
  await page.waitFor();
  const [want] = await s.ctx.engine.rows(
    `SELECT count(DISTINCT PatientID)::INTEGER AS p, count(DISTINCT StudyInstanceUID)::INTEGER AS st, count(*)::INTEGER AS se FROM "index" WHERE collection_id = ?`,
    [first],
  );
  assert.equal(await page.locator('[data-detail-counts]').getAttribute('data-detail-counts'), `${want!.p}/${want!.st}/${want!.se}`);
  const mods = await s.ctx.engine.rows(`SELECT Modality AS m, count(DISTINCT PatientID)::INTEGER AS n FROM "index" WHERE collection_id = ? AND Modality IS NOT NULL GROUP BY 1`, [first]);
  await page.locator('[data-modality]').first().waitFor();
  for (const m of mods) assert.equal(Number(await page.locator(`[data-modality="${m.m}"] [data-count]`).getAttribute('data-count')), m.n, `${first} ${m.m}`);
  await page.locator('p.cite').first().waitFor();
  assert.deepEqual(await axe(b.page), [], 'axe on a collection page');
  await b.page.setViewportSize({ width: 390, height: 844 });
  await b.screenshot('layout-synthetic-390-collection-page');
  const m = await measure(b.page);
  assert.ok(m.scrollWidth <= m.viewport.width, `the collection page is ${m.scrollWidth} px wide at 390 px`);
  await b.page.setViewportSize({ width: 1440, height: 900 });
  await page.locator(`[data-open-cohort="${first}"]`).click();
  await b.page.locator(`[data-total="patients"][data-value="${want!.p}"]`).waitFor({ timeout: 15_000 });
  assert.deepEqual(new URL(b.page.url()).searchParams.getAll('collection_id'), [first]);
});

test('an analysis result: its patients in the list and its page counts equal SQL; axe on the page', async () => {
  await b.page.setViewportSize({ width: 1440, height: 900 });
  const [top] = await s.ctx.engine.rows(
    `SELECT analysis_result_id AS a, count(DISTINCT PatientID)::INTEGER AS p, count(DISTINCT StudyInstanceUID)::INTEGER AS st, count(*)::INTEGER AS se
     FROM "index" WHERE analysis_result_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
  );
  const id = String(top!.a);
  await b.page.goto(`${s.url}/?tab=collections`);
  const row = b.page.locator(`[data-view="analysis-list"] tr[data-analysis="${id}"]`);
  await row.locator(`[data-in-cohort="${top!.p}"]`).waitFor({ timeout: 20_000 });
  await row.locator('a').click();
  const page = b.page.locator(`[data-analysis-page="${id}"]`);
  await page.locator(`[data-detail-counts="${top!.p}/${top!.st}/${top!.se}"]`).waitFor({ timeout: 15_000 });
  await page.locator('p.cite').first().waitFor();
  await b.screenshot('layout-synthetic-1440-analysis-page');
  assert.deepEqual(await axe(b.page), [], 'axe on an analysis-result page');
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
