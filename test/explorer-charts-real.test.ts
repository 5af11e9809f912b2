// The charts of the pinned real release add up: a multi-valued attribute's
// "others" bar counts each patient once (it summed the values' counts, about
// 158,000 of 86,362 patients on v25), spellings that differ only in case
// ("Breast", "breast") are one bar counting each patient once, and no bar
// exceeds the release's total, each bar equal to SQL over the collections
// listing its values; a collection page (TCGA-LUAD) cites the collection
// first and analysis results after under their names, and reflows its
// description. IDQS_SKIP_REAL_DATA skips it on purpose, said.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { defaultCacheDir } from '../src/config.ts';
import { ensureRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';
import { startServer, type TestServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';

const PIN = JSON.parse(readFileSync(new URL('./real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const skipReal = process.env.IDQS_SKIP_REAL_DATA ? `IDQS_SKIP_REAL_DATA is set: the real release ${PIN.release} is skipped on purpose` : false;
if (skipReal) process.stdout.write(`# ${skipReal}\n`);

let b: TestBrowser;
let s: TestServer;
before(async () => {
  if (skipReal) return;
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  const rel = await ensureRelease({ release: PIN.release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  s = await startServer({}, rel.db);
  b = await openBrowser({ width: 1280, height: 900 });
});
after(async () => {
  await b?.close();
  await s?.close();
});

type Bars = [string[] | null, number][];

/** Patients of the series whose collection lists one of the values (a list column split at commas; a value holding a comma, 'X, NOS', matched as written); `negate`: lists a value other than these. */
async function patientsListing(column: string, values: string[], negate = false): Promise<number> {
  const match = values.map(() => `(list_contains(list_transform(string_split(${column}, ','), x -> trim(x)), ?) OR (contains(?, ',') AND contains(${column}, ?)))`).join(' OR ');
  const params = values.flatMap((v) => [v, v, v]);
  const colls = negate
    ? `SELECT collection_id FROM collections_index, unnest(list_transform(string_split(${column}, ','), x -> trim(x))) AS t(piece)
       WHERE piece <> '' AND lower(piece) NOT IN ('nos', 'not otherwise specified') AND NOT (${values.map(() => `(piece = ? OR starts_with(?, piece || ','))`).join(' OR ')})`
    : `SELECT collection_id FROM collections_index WHERE ${match}`;
  const [r] = await s.ctx.engine.rows(`SELECT count(DISTINCT PatientID)::INTEGER AS n FROM "index" WHERE collection_id IN (${colls})`, negate ? values.flatMap((v) => [v, v]) : params);
  return Number(r!.n);
}

async function barsOf(attr: string): Promise<Bars> {
  // The "others" bar is drawn once the service has counted it.
  const card = b.page.locator(`[data-chart="${attr}"][data-bars*="[null,"]`);
  await card.waitFor({ timeout: 60_000 });
  return JSON.parse((await card.getAttribute('data-bars'))!) as Bars;
}

test(`the real release ${PIN.release}: chart bars count patients once and never exceed the total`, { skip: skipReal }, async () => {
  const [t] = await s.ctx.engine.rows(`SELECT count(DISTINCT PatientID)::INTEGER AS n FROM "index"`);
  const total = Number(t!.n);
  await b.page.goto(`${s.url}/`);
  for (const [attr, column] of [
    ['cancer_types', 'cancer_types'],
    ['tumor_locations', 'tumor_locations'],
  ] as const) {
    // What the chart draws (its hidden table, as a screen reader reads it): no bar above the total.
    const rows = b.page.locator(`[data-chart="${attr}"] .chart table tbody tr`);
    await rows.filter({ has: b.page.locator("th", { hasText: / others$/ }) }).waitFor({ timeout: 60_000 });
    for (const row of await rows.all()) {
      const n = Number(await row.locator('td').first().textContent());
      assert.ok(n <= total, `${attr} ${await row.locator('th').textContent()}: ${n} patients, more than the release's ${total}`);
    }
    const bars = await barsOf(attr);
    const shown = bars.flatMap(([v]) => v ?? []);
    const others = bars.find(([v]) => v === null)![1];
    // Others: the patients of collections listing a value outside the shown bars (a piece matched by any shown value is not outside).
    assert.equal(others, await patientsListing(column, shown, true), `${attr}: the others bar`);
    for (const [values, n] of bars) if (values) assert.equal(n, await patientsListing(column, values), `${attr}: ${values.join(' / ')}`);
  }
  const locations = await barsOf('tumor_locations');
  const breast = locations.find(([v]) => v?.includes('Breast'));
  assert.deepEqual(new Set(breast?.[0]), new Set(['Breast', 'breast']), 'Breast and breast are one bar');
  await b.page.locator('[data-chart="tumor_locations"] [data-merged]').waitFor();
  await b.page.locator('[data-chart="cancer_types"]').scrollIntoViewIfNeeded();
  await b.screenshot('charts-real-1280');
  assert.deepEqual(b.problems, []);
});

test(`the real release ${PIN.release}: a collection page cites the collection first, analysis results after under their names; its description reflowed`, { skip: skipReal }, async () => {
  const id = 'tcga_luad';
  const analyses = (await s.ctx.engine.rows(`SELECT source_DOI AS doi, analysis_result_title AS title FROM analysis_results_index WHERE source_DOI IS NOT NULL`)).map((r) => ({
    doi: String(r.doi).toLowerCase(),
    title: String(r.title),
  }));
  const [d] = await s.ctx.engine.rows(`SELECT description FROM collections_index WHERE collection_id = ?`, [id]);
  await b.page.goto(`${s.url}/?tab=collections#collection=${id}`);
  const cites = b.page.locator(`[data-collection-page="${id}"] p.cite`);
  await cites.first().waitFor({ timeout: 30_000 });
  const texts = (await cites.allTextContents()).map((t) => t.toLowerCase());
  const cited = (t: string) => analyses.find((a) => t.includes(a.doi));
  assert.ok(texts.length >= 2, `${id} has its own citation and analysis results'`);
  assert.equal(cited(texts[0]!), undefined, `the first citation is the collection's own, not an analysis result's: ${texts[0]}`);
  const firstAnalysis = texts.findIndex((t) => cited(t));
  assert.ok(firstAnalysis > 0 && texts.slice(firstAnalysis).every((t) => cited(t)), 'analysis results are cited after the collection');
  const labels = await b.page.locator(`[data-collection-page="${id}"] [data-cite-label]`).evaluateAll((els) => els.map((e) => e.getAttribute('data-cite-label')));
  assert.match(labels[0]!, /^This collection: /);
  for (const [i, t] of texts.entries()) if (cited(t)) assert.equal(labels[i], `Analysis result: ${cited(t)!.title}`);
  // The description: paragraphs of whole sentences, not the source's one-word lines.
  const paras = await b.page.locator(`[data-collection-page="${id}"] .description p`).allInnerTexts();
  const sourceLines = String(d!.description).split('\n').filter((l) => l.trim() !== '').length;
  assert.ok(paras.length >= 1 && paras.length < sourceLines, `${paras.length} paragraphs from ${sourceLines} source lines`);
  for (const p of paras) assert.ok(!p.includes('\n'), `a paragraph keeps a source line break: ${p.slice(0, 80)}`);
  const words = (x: string) => x.replace(/<[^>]+>/g, ' ').replace(/&nbsp;/g, ' ').split(/\s+/).filter((w) => w !== '' && !w.startsWith('&'));
  assert.equal(words(paras.join(' ')).length, words(String(d!.description)).length, 'every word of the description is shown');
  await b.page.locator(`[data-collection-page="${id}"] .description`).scrollIntoViewIfNeeded();
  await b.screenshot('collection-real-1280');
  assert.deepEqual(b.problems, []);
});
