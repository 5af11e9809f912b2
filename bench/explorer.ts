// npm run bench:explorer — the explorer in Chromium on the pinned real
// release (test/real-release.json, from the shared cache), against `idqs
// serve` as a separate process; p50 of 5 runs each of:
//   * first render: navigation to / until the facet counts are visible (target <= 1,000 ms);
//   * a filter click whose counts were never asked for (uncached, target <= 300 ms)
//     and a click back to a filter already counted (cached, target <= 100 ms),
//     each until the totals show the counts of /v3/cohort/counts;
//   * opening a collection page until its counts and modalities are shown;
//   * adding 1,000 series of a table page to the cart, and the cart's totals shown.
// The host is shared and noisy: figures vary run to run; say so with them.

import { existsSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { defaultCacheDir } from '../src/config.ts';
import { ensureRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';
import { spawnServer } from './server.ts';

const CHROMIUM = '/usr/bin/chromium';
const RUNS = 5;
const PIN = JSON.parse(readFileSync(new URL('../test/real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => `p50 ${p50(xs).toFixed(0)} ms (runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`;

async function post<T>(base: string, path: string, body: unknown): Promise<T> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

async function main() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
  const rel = await ensureRelease({ release: PIN.release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  const { base, proc } = await spawnServer(rel.db);
  const { openBrowser } = await import('../test/browser.ts');
  const b = await openBrowser({ width: 1440, height: 900 });
  try {
    // Start-up: the facet table loads in the background; the first answer waits for it (reported, not counted).
    const t0 = performance.now();
    await post(base, '/v3/cohort/facets', { filters: {} });
    process.stdout.write(`server warm-up (facet table of ${PIN.release}): ${(performance.now() - t0).toFixed(0)} ms\n`);

    const colls = (await post<{ facets: { collection_id: { values: { value: string; count: number }[] } } }>(base, '/v3/cohort/facets', { filters: { terms: { Modality: ['CT'] } }, attributes: ['collection_id'] }))
      .facets.collection_id.values.filter((v) => v.count >= 20)
      .slice(0, RUNS * 2)
      .map((v) => v.value);

    const first: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const page = await b.context.newPage();
      const s = performance.now();
      await page.goto(`${base}/`);
      await page.locator('[data-facet="Modality"] [data-count]').first().waitFor({ timeout: 60_000 });
      await page.locator('[data-total="patients"][data-value]').waitFor({ timeout: 60_000 });
      first.push(performance.now() - s);
      await page.close();
    }

    const uncached: number[] = [];
    const cached: number[] = [];
    const page = b.page;
    for (let i = 0; i < RUNS; i++) {
      const c = colls[i]!;
      await page.goto(`${base}/?collection_id=${encodeURIComponent(c)}`);
      const before = await post<{ series: number }>(base, '/v3/cohort/counts', { terms: { collection_id: [c] } });
      await page.locator(`[data-total="series"][data-value="${before.series}"]`).waitFor({ timeout: 60_000 });
      const want = await post<{ series: number }>(base, '/v3/cohort/counts', { terms: { collection_id: [c], Modality: ['CT'] } });
      const box = page.locator('[data-facet="Modality"] li:not([data-program]):has([data-value="CT"]) input[type=checkbox]');
      let s = performance.now();
      await box.check();
      await page.locator(`[data-total="series"][data-value="${want.series}"]`).waitFor({ timeout: 60_000 });
      uncached.push(performance.now() - s);
      await page.waitForTimeout(300);
      s = performance.now();
      await box.uncheck();
      await page.locator(`[data-total="series"][data-value="${before.series}"]`).waitFor({ timeout: 60_000 });
      cached.push(performance.now() - s);
    }

    const collectionPage: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const c = colls[RUNS + i] ?? colls[i]!;
      await page.goto(`${base}/?tab=collections`);
      await page.locator('[data-view="collections-list"] tbody tr').first().waitFor({ timeout: 60_000 });
      const s = performance.now();
      await page.evaluate(`location.hash = 'collection=${c}'`);
      await page.locator(`[data-collection-page="${c}"] [data-detail-counts]`).waitFor({ timeout: 60_000 });
      await page.locator(`[data-collection-page="${c}"] [data-modality]`).first().waitFor({ timeout: 60_000 });
      collectionPage.push(performance.now() - s);
    }

    const add: number[] = [];
    const summary: number[] = [];
    const big = colls[0]!;
    for (let i = 0; i < RUNS; i++) {
      await page.goto(`${base}/?collection_id=${encodeURIComponent(big)}&tab=series`);
      await page.evaluate(`localStorage.removeItem('idqs-cart')`);
      await page.reload();
      await page.locator('[data-table="series"] select').selectOption('1000');
      await page.locator('[data-add-page="series"]', { hasText: '1,000' }).waitFor({ timeout: 60_000 });
      let s = performance.now();
      await page.locator('[data-add-page="series"]').click();
      await page.locator('#tab-cart .tab-count', { hasText: '1,000' }).waitFor({ timeout: 60_000 });
      add.push(performance.now() - s);
      s = performance.now();
      await page.locator('#tab-cart').click();
      await page.locator('[data-cart-totals]:not([data-cart-totals=""])').waitFor({ timeout: 60_000 });
      summary.push(performance.now() - s);
    }

    process.stdout.write(`release ${PIN.release}, Chromium, ${RUNS} runs each; shared noisy host: figures vary between runs\n`);
    process.stdout.write(`first render with counts:       ${fmt(first)}  target <= 1000 ms\n`);
    process.stdout.write(`filter click, uncached:         ${fmt(uncached)}  target <= 300 ms\n`);
    process.stdout.write(`filter click, cached:           ${fmt(cached)}  target <= 100 ms\n`);
    process.stdout.write(`collection page opened:         ${fmt(collectionPage)}\n`);
    process.stdout.write(`1,000 series added to the cart: ${fmt(add)}\n`);
    process.stdout.write(`cart totals of those 1,000:     ${fmt(summary)}\n`);
  } finally {
    await b.close();
    proc.kill('SIGTERM');
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
