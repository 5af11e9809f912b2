// npm run bench:facets — POST /v3/cohort/facets against a server process over
// a scale-1.0 database (the one bench:api builds), on loopback:
//   * all facets for distinct three-attribute filters (never cached): p50 <= 150 ms, p99 <= 400 ms;
//   * the same filter again, answered from the cache: p50 <= 5 ms;
//   * for comparison, the engine computing the same facets with count(DISTINCT) per attribute,
//     for those filters and for the whole release;
//   * first render of the explorer (navigation -> first facet counts visible) in Chromium: <= 1.5 s
//     (skipped with a note when /usr/bin/chromium is missing).
// Options: --scale S (default 1.0), --filters N distinct filters (default 60).

import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/core/context.ts';
import { compileFilter } from '../src/core/filters/v3.ts';
import { ATTRIBUTES } from '../src/core/registry/attributes.ts';
import { ensureBenchDb, spawnServer } from './server.ts';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const scale = arg('scale', 1.0);
const nFilters = arg('filters', 60);
const CHROMIUM = '/usr/bin/chromium';

/** POST JSON with node:http; resolves with the elapsed milliseconds once the whole body has arrived. */
function timedPost(url: string, body: unknown): Promise<number> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${url} ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(text);
  });
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Seeded pseudo-random numbers, so every run times the same filters. */
function rng(seed: number) {
  let x = seed;
  return () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

async function firstRender(base: string): Promise<number[] | string> {
  if (!existsSync(CHROMIUM)) return `skipped: ${CHROMIUM} is missing (apt-get install chromium)`;
  const { openBrowser } = await import('../test/browser.ts');
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const b = await openBrowser();
    try {
      const page = b.page;
      // Each run asks for another count, so the facets are computed, not read from the cache.
      const t0 = performance.now();
      await page.goto(`${base}/?count=${['patients', 'studies', 'series'][i % 3]}&instanceCount_gte=${i + 1}`);
      await page.locator('[data-facet="Modality"] [data-count]').first().waitFor({ state: 'visible', timeout: 30_000 });
      times.push(performance.now() - t0);
    } finally {
      await b.close();
    }
  }
  return times;
}

async function main() {
  const db = await ensureBenchDb(scale);
  const { base, proc } = await spawnServer(db);
  try {
    const url = `${base}/v3/cohort/facets`;
    // The facet table loads in the background from start-up; the first answer waits for it.
    const warm = await timedPost(url, { filters: {}, count: 'series' });

    const ctx = await createContext({ ...loadConfig(), connections: 2 }, db);
    const colls = (await ctx.engine.rows(`SELECT collection_id AS v FROM "index" GROUP BY 1 ORDER BY count(*) DESC LIMIT 30`)).map((r) => String(r.v));
    const mods = (await ctx.engine.rows(`SELECT Modality AS v FROM "index" GROUP BY 1 ORDER BY count(*) DESC LIMIT 8`)).map((r) => String(r.v));
    const random = rng(42);
    const pick = <T>(xs: T[], n: number) => [...new Set(Array.from({ length: n }, () => xs[Math.floor(random() * xs.length)]!))];
    const filters = Array.from({ length: nFilters }, (_, i) => ({
      terms: { collection_id: pick(colls, 1 + Math.floor(random() * 3)), Modality: pick(mods, 1 + Math.floor(random() * 2)) },
      ranges: i % 2 === 0 ? { instanceCount: { gte: 1 + Math.floor(random() * 100) } } : { StudyDate: { gte: `${1998 + Math.floor(random() * 15)}-01-01` } },
    }));

    const uncached: number[] = [];
    for (const f of filters) uncached.push(await timedPost(url, { filters: f }));
    const cached: number[] = [];
    for (let i = 0; i < 200; i++) cached.push(await timedPost(url, { filters: filters[0] }));

    // The engine's way, for comparison: one GROUP BY with count(DISTINCT PatientID) per attribute, own filter left out.
    const engine: number[] = [];
    for (const f of filters.slice(0, 3)) {
      const t0 = performance.now();
      await Promise.all(
        ATTRIBUTES.filter((a) => a.categorical || a.kind === 'range').map(async (a) => {
          const others = { terms: { ...f.terms }, ranges: { ...f.ranges } } as { terms: Record<string, string[]>; ranges: Record<string, unknown> };
          delete others.terms[a.name];
          delete others.ranges[a.name];
          const c = await compileFilter(ctx, others as never);
          return ctx.engine.rows(`SELECT "${a.name}", count(DISTINCT PatientID) FROM "index" WHERE ${c.where} GROUP BY 1`, c.params);
        }),
      );
      engine.push(performance.now() - t0);
    }
    // The whole release (no filter), the page's first state: the engine's way once, and ours (never cached: count=studies).
    const t0 = performance.now();
    await Promise.all(
      ATTRIBUTES.filter((a) => a.categorical || a.kind === 'range').map((a) => ctx.engine.rows(`SELECT "${a.name}", count(DISTINCT PatientID) FROM "index" GROUP BY 1`)),
    );
    const engineAll = performance.now() - t0;
    const oursAll = await timedPost(url, { filters: {}, count: 'studies' });
    const series = Number((await ctx.engine.one('SELECT count(*) AS n FROM "index"'))!.n);
    ctx.engine.close();

    const render = await firstRender(base);

    console.log(`\nbench:facets at scale ${scale} (${series.toLocaleString('en-US')} series), loopback, one request at a time\n`);
    console.log('| measure | p50 ms | p99 ms | n | target |');
    console.log('|---|---|---|---|---|');
    console.log(`| all facets, 3-attribute filter, not cached | ${pct(uncached, 50).toFixed(1)} | ${pct(uncached, 99).toFixed(1)} | ${uncached.length} | p50 <= 150, p99 <= 400 |`);
    console.log(`| all facets, same filter again (cache) | ${pct(cached, 50).toFixed(2)} | ${pct(cached, 99).toFixed(2)} | ${cached.length} | <= 5 |`);
    console.log(`| engine: count(DISTINCT) GROUP BY per attribute (comparison) | ${pct(engine, 50).toFixed(0)} | ${pct(engine, 99).toFixed(0)} | ${engine.length} | |`);
    console.log(`| all facets, no filter (whole release), not cached | ${oursAll.toFixed(0)} | | 1 | |`);
    console.log(`| engine: the same, no filter (comparison) | ${engineAll.toFixed(0)} | | 1 | |`);
    console.log(`| first facets answer after start (includes the table load) | ${warm.toFixed(0)} | | 1 | |`);
    if (typeof render === 'string') console.log(`| explorer first render | ${render} | | | <= 1500 |`);
    else console.log(`| explorer first render (navigation -> facet counts visible) | ${pct(render, 50).toFixed(0)} | ${Math.max(...render).toFixed(0)} (max) | ${render.length} | <= 1500 |`);
  } finally {
    proc.kill('SIGTERM');
  }
}

await main();
process.exit(0);
