// Layout checks of the widths (360 to 2560 px): chart labels drawn
// whole or shortened after a whole word, each line inside the canvas (its
// width measured here, in the page, with the axis's font); the collections
// list's Cart column inside its card and, from 768 px, no column outside
// it; wide screens using their width; no sideways page scroll.

import assert from 'node:assert/strict';
import type { TestBrowser } from './browser.ts';
import { loaded } from './layout-checks.ts';

interface DrawnChart {
  chart: string;
  right: number;
  full: string[];
  lines: string[][];
  widths: number[][];
}

// Reads each category chart's drawn labels (data-axis, left by the chart after drawing) and the
// full labels of its screen-reader table, and measures every drawn line with the axis's font.
const READ_CHARTS = `(() => {
  const ctx = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('.chart-card')].flatMap((card) => {
    const canvas = card.querySelector('canvas[data-axis]');
    if (!canvas) return [];
    const axis = JSON.parse(canvas.dataset.axis);
    ctx.font = axis.font;
    return [{
      chart: card.dataset.chart,
      right: axis.right,
      full: [...card.querySelectorAll('.offscreen th[scope=row]')].map((th) => th.textContent),
      lines: axis.lines,
      widths: axis.lines.map((ls) => ls.map((l) => ctx.measureText(l).width)),
    }];
  });
})()`;

/** The drawn text is the whole label, or a part of it ending at a word's end followed by "…". */
export function wholeWords(full: string, lines: string[]): boolean {
  const drawn = lines.join(' ').replace(/\s+/g, ' ');
  const flat = full.replace(/\s+/g, ' ');
  const squash = (x: string) => x.replace(/\s/g, '');
  if (squash(drawn) === squash(flat)) return true;
  if (!drawn.endsWith('…')) return false;
  const head = squash(drawn.slice(0, -1));
  // Walk the full label to where the drawn part ends (spaces do not count).
  let seen = 0;
  let at = 0;
  while (at < flat.length && seen < head.length) {
    if (flat[at] !== ' ') {
      if (flat[at] !== head[seen]) return false;
      seen++;
    }
    at++;
  }
  if (seen < head.length) return false;
  return at === flat.length || flat[at] === ' ' || /[_\-/]/.test(flat[at - 1]!);
}

/** The charts view at a width: every category label whole or cut after a word, inside the canvas; no sideways page scroll. */
export async function checkChartLabels(b: TestBrowser, url: string, width: number): Promise<void> {
  await b.page.setViewportSize({ width, height: 1000 });
  await b.page.goto(`${url}/?tab=charts`);
  await loaded(b.page);
  await b.page.locator('.chart-card canvas[data-axis]').first().waitFor({ timeout: 20_000 });
  // Let the "others" counts and any resize redraw settle.
  await b.page.waitForTimeout(800);
  const charts = (await b.page.evaluate(READ_CHARTS)) as DrawnChart[];
  const at = `at ${width} px`;
  assert.ok(charts.length >= 3, `${at}: ${charts.length} category charts drawn`);
  for (const c of charts) {
    assert.equal(c.lines.length, c.full.length, `${at}: ${c.chart} draws one label per bar`);
    c.lines.forEach((lines, i) => {
      const full = c.full[i]!;
      assert.ok(wholeWords(full, lines), `${at}: ${c.chart} label "${full}" drawn as ${JSON.stringify(lines)}: cut mid-word`);
      // Chart.js draws a side axis's labels right-aligned 3 px (its tick padding) left of the axis's right edge.
      for (const w of c.widths[i]!) assert.ok(w + 3 <= c.right + 0.5, `${at}: ${c.chart} label "${full}" is ${Math.round(w)} px in a ${Math.round(c.right)} px axis: cut by the canvas`);
    });
  }
  const page = (await b.page.evaluate(`[document.documentElement.scrollWidth, innerWidth]`)) as [number, number];
  assert.ok(page[0] <= page[1], `${at}: the page is ${page[0]} px wide`);
  if (width >= 1800) {
    // A wide screen is used: the charts' row and the totals reach the results column's right edge.
    const reach = (await b.page.evaluate(`(() => {
      const main = document.querySelector('main');
      const inner = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
      const right = (sel) => Math.max(...[...document.querySelectorAll(sel)].map((e) => e.getBoundingClientRect().right));
      return { inner, charts: right('.chart-card'), totals: right('.stat') };
    })()`)) as { inner: number; charts: number; totals: number };
    assert.ok(reach.charts >= reach.inner - 2, `${at}: the charts stop at ${Math.round(reach.charts)} px of ${Math.round(reach.inner)}`);
    assert.ok(reach.totals >= reach.inner - 2, `${at}: the totals stop at ${Math.round(reach.totals)} px of ${Math.round(reach.inner)}`);
  }
}

/** The collections list at a width: the Cart column inside its card; from 768 px every column shown is. */
export async function checkCollectionColumns(b: TestBrowser, url: string, width: number): Promise<void> {
  await b.page.setViewportSize({ width, height: 900 });
  await b.page.goto(`${url}/?tab=collections`);
  await b.page.locator('[data-view="collections-list"] tbody tr').first().waitFor({ timeout: 20_000 });
  const m = (await b.page.evaluate(`(() => {
    const card = document.querySelector('[data-view="collections-list"] .scroll-x').getBoundingClientRect();
    const cols = [...document.querySelectorAll('[data-view="collections-list"] thead th')]
      .filter((th) => getComputedStyle(th).display !== 'none')
      .map((th) => ({ h: th.textContent.replace(/[↕▲▼]/g, '').trim(), x: th.getBoundingClientRect().left, r: th.getBoundingClientRect().right }));
    return { page: document.documentElement.scrollWidth, viewport: innerWidth, card: { x: card.left, r: card.right }, cols };
  })()`)) as { page: number; viewport: number; card: { x: number; r: number }; cols: { h: string; x: number; r: number }[] };
  const at = `collections at ${width} px`;
  assert.ok(m.page <= m.viewport, `${at}: the page is ${m.page} px wide in a ${m.viewport} px window`);
  const inside = (c: { x: number; r: number }) => c.x >= m.card.x - 0.5 && c.r <= m.card.r + 0.5;
  const cart = m.cols.find((c) => c.h === 'Cart');
  assert.ok(cart && inside(cart), `${at}: the Cart column is outside its card`);
  const names = m.cols.map((c) => c.h);
  assert.ok(names.includes('Collection'), `${at}: the Collection column is shown`);
  if (width >= 768) {
    const out = m.cols.filter((c) => !inside(c)).map((c) => `${c.h} (${Math.round(c.x)}-${Math.round(c.r)} px)`);
    assert.deepEqual(out, [], `${at}: columns outside the card (${Math.round(m.card.x)}-${Math.round(m.card.r)} px)`);
  }
  if (width >= 2560) assert.equal(names.length, 12, `${at}: every column shown on a wide screen (${names.join(', ')})`);
}
