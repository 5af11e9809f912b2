// Layout checks shared by the explorer's layout tests: element boxes read in
// the page (nothing overlaps the results, totals and tabs not clipped, the
// page no taller than its content and no wider than the screen) and
// axe-core's serious and critical violations.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { TestBrowser } from './browser.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const WIDTHS = [
  [390, 844],
  [768, 1024],
  [1024, 768],
  [1440, 900],
] as const;

type Box = { x: number; y: number; width: number; height: number };
const right = (r: Box) => r.x + r.width;
const bottom = (r: Box) => r.y + r.height;
/** Two boxes share some area (touching edges do not count). */
const overlap = (a: Box, c: Box) => a.x < right(c) - 0.5 && c.x < right(a) - 0.5 && a.y < bottom(c) - 0.5 && c.y < bottom(a) - 0.5;

export async function loaded(page: Page): Promise<void> {
  await page.locator('[data-total="patients"][data-value]').waitFor({ timeout: 20_000 });
  await page.locator('[data-facet="Modality"] [data-count]').first().waitFor({ state: 'attached', timeout: 20_000 });
}

/** Serious and critical axe-core violations of the page as it is, one line each. */
export async function axe(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol, so the page's Content-Security-Policy (script-src 'self') stays as served.
  await page.evaluate(AXE);
  const { passes, violations: found } = (await page.evaluate(AXE_RUN)) as { passes: number; violations: { id: string; impact: string; help: string; nodes: string[] }[] };
  // A run that checked nothing would pass silently.
  assert.ok(passes >= 10, `axe checked only ${passes} rules`);
  // Headings skipping a level (heading-order, moderate) fail too: screen-reader users navigate by them.
  const failing = (v: { id: string; impact: string }) => v.impact === 'serious' || v.impact === 'critical' || v.id === 'heading-order';
  const minor = found.filter((v) => !failing(v));
  if (minor.length > 0) process.stdout.write(`# axe, minor: ${minor.map((v) => v.id).join(', ')}\n`);
  return found.filter(failing).map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.join('; ')})`);
}

interface Measures {
  viewport: { width: number; height: number };
  scrollHeight: number;
  scrollWidth: number;
  lowest: number;
  main: Box;
  panel: Box | null;
  drawerButton: Box | null;
  stats: Box[];
  tabs: Box[];
  clippedStats: string[];
  clippedTabs: string[];
}

// Scripts run in the page are plain strings: the test runner's transform would otherwise add helpers the page lacks.
const AXE_RUN = `axe.run(document).then((r) => ({
  passes: r.passes.length,
  violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })),
}))`;

/** Boxes and sizes the layout is judged by, read in the page. */
const MEASURE = `(() => {
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return r.width === 0 && r.height === 0 ? null : { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height };
  };
  // The content's extent: the lowest bottom of any rendered element (fixed ones and visually hidden ones excluded).
  let lowest = 0;
  for (const el of document.body.querySelectorAll('*')) {
    const st = getComputedStyle(el);
    if (st.position === 'fixed' || st.display === 'none' || el.closest('.offscreen')) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) lowest = Math.max(lowest, r.bottom + scrollY);
  }
  const clipped = (sel) => [...document.querySelectorAll(sel)].filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent);
  return {
    viewport: { width: innerWidth, height: innerHeight },
    scrollHeight: document.documentElement.scrollHeight,
    scrollWidth: document.documentElement.scrollWidth,
    lowest,
    main: box(document.querySelector('main')),
    panel: box(document.querySelector('#filters')),
    drawerButton: box(document.querySelector('#open-filters')),
    stats: [...document.querySelectorAll('.stat')].map(box),
    tabs: [...document.querySelectorAll('[role=tab]')].map(box),
    clippedStats: clipped('.stat-value'),
    clippedTabs: clipped('[role=tab]'),
  };
})()`;

export async function measure(page: Page): Promise<Measures> {
  return (await page.evaluate(MEASURE)) as Measures;
}

/** The widths of the table check: phones, tablets, laptops and a wide screen. */
export const TABLE_WIDTHS = [360, 390, 768, 960, 1280, 1440, 2560] as const;

/**
 * The series and studies tables at a width: their View and Download columns (found by heading)
 * lie inside their card without a sideways scroll, and the page does not scroll sideways.
 */
export async function checkTableActions(b: TestBrowser, url: string, width: number, name: string): Promise<void> {
  await b.page.setViewportSize({ width, height: 900 });
  for (const level of ['series', 'studies']) {
    await b.page.goto(`${url}/?tab=${level}`);
    await b.page.locator('table.data tbody tr').first().waitFor({ timeout: 20_000 });
    if (width === 1280 || width === 390) await b.screenshot(`layout-${name}-${width}-${level}`);
    const m = (await b.page.evaluate(`(() => {
      const table = document.querySelector('table.data');
      const card = table.closest('.scroll-x').getBoundingClientRect();
      const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
      const cells = [...table.querySelector('tbody tr').children];
      const actions = heads.flatMap((h, i) => (h === 'View' || h === 'Download' ? [{ h, x: cells[i].getBoundingClientRect().left, r: cells[i].getBoundingClientRect().right }] : []));
      return { page: document.documentElement.scrollWidth, viewport: innerWidth, card: { x: card.left, r: card.right }, actions };
    })()`)) as { page: number; viewport: number; card: { x: number; r: number }; actions: { h: string; x: number; r: number }[] };
    const at = `${level} at ${width} px`;
    assert.ok(m.page <= m.viewport, `${at}: the page is ${m.page} px wide in a ${m.viewport} px window`);
    assert.deepEqual(m.actions.map((a) => a.h).sort(), ['Download', 'View'], `${at}: View and Download columns`);
    for (const a of m.actions) assert.ok(a.x >= m.card.x - 0.5 && a.r <= m.card.r + 0.5, `${at}: ${a.h} at ${Math.round(a.x)}-${Math.round(a.r)} px, outside its card (${Math.round(m.card.x)}-${Math.round(m.card.r)} px)`);
  }
}

/** Load the charts view at a size, screenshot it, and check the layout and axe. */
export async function checkLayout(b: TestBrowser, url: string, width: number, height: number, name: string): Promise<void> {
  {
    await b.page.setViewportSize({ width, height });
    await b.page.goto(`${url}/?tab=charts`);
    await loaded(b.page);
    await b.page.locator('.charts canvas').first().waitFor();
    await b.screenshot(`layout-${name}-${width}-charts`);
    const m = await measure(b.page);
    const at = `at ${width} px`;
    assert.ok(m.scrollWidth <= m.viewport.width, `${at}: the page is ${m.scrollWidth} px wide`);
    assert.ok(m.scrollHeight <= Math.max(m.viewport.height, Math.ceil(m.lowest)) + 2, `${at}: page ${m.scrollHeight} px tall, content ends at ${m.lowest}`);
    assert.deepEqual(m.clippedStats, [], `${at}: totals clipped`);
    assert.deepEqual(m.clippedTabs, [], `${at}: tabs clipped`);
    for (const r of [...m.stats, ...m.tabs]) assert.ok(r.x >= m.main.x - 0.5 && right(r) <= right(m.main) + 0.5, `${at}: a total or tab leaves the results column`);
    if (width < 1000) {
      // Filters are a closed drawer: nothing of them on the page, a button that counts them.
      assert.equal(m.panel, null, `${at}: the closed drawer takes no space`);
      assert.ok(m.drawerButton, `${at}: a Filters button`);
    } else {
      assert.ok(m.panel && m.drawerButton === null, `${at}: the filters are a column`);
      assert.ok(!overlap(m.panel, m.main) && right(m.panel) <= m.main.x + 0.5, `${at}: the filters overlap the results`);
    }
    assert.deepEqual(await axe(b.page), [], `${at}: axe on the charts view`);
  }
}

