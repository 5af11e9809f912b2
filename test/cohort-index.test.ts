// One truth: thousands of random filters (every filterable attribute, term
// lists with unknown values, values that exist only in another casing, empty
// selections, ranges inside and outside the data, dates in both forms,
// combinations of up to five attributes, the missing value among terms,
// all_terms, the collection-level attributes, unions of such filters with any_of)
// answered by POST /v3/cohort/counts
// from the in-memory cohort index, each compared with SQL written here, on
// the test dataset and on the real release. Any difference fails.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { filterArb, referenceCounts, sampleOf, unionArb, type Filter, type Reference, type Sample } from './cohort-index-support.ts';
import { compileFilter } from '../src/core/filters/v3.ts';
import { cohortIndex, readyCohortIndex } from '../src/core/services/cohort-index/build.ts';
import { selectRows } from '../src/core/services/cohort-index/evaluate.ts';
import { ATTRIBUTES } from '../src/core/registry/attributes.ts';
import { pinnedRelease, SKIP_REAL } from './real-releases.ts';

// IDQS_PROPERTY_SCALE multiplies the draws for a deeper run (the default keeps the file near a minute on an idle machine).
const SCALE = Number(process.env.IDQS_PROPERTY_SCALE ?? 1);
if (!(SCALE >= 1)) throw new Error(`IDQS_PROPERTY_SCALE must be a number >= 1; got ${process.env.IDQS_PROPERTY_SCALE}`);
const TEST_FILTERS = Math.round(2000 * SCALE);
const REAL_FILTERS = Math.round(200 * SCALE);
const UNION_FILTERS = Math.round(500 * SCALE);
const REAL_UNIONS = Math.round(60 * SCALE);

let s: TestServer;
let off: TestServer;
let real: TestServer | undefined;

before(async () => {
  s = await startServer();
  off = await startServer({ cohortIndex: 'off' });
});
after(async () => {
  await s?.close();
  await off?.close();
  await real?.close();
});

interface Answer {
  patients: number;
  studies: number;
  series: number;
  instances: number;
  size_MB: number;
}

async function counts(server: TestServer, f: Filter): Promise<Answer> {
  const r = await server.post('/v3/cohort/counts', f);
  const body = (await r.json()) as Answer;
  assert.equal(r.status, 200, `${JSON.stringify(f)}: ${JSON.stringify(body)}`);
  return body;
}

function same(got: Answer, want: Reference, f: Filter): void {
  const where = JSON.stringify(f);
  for (const k of ['patients', 'studies', 'series', 'instances'] as const) assert.equal(got[k], want[k], `${k} of ${where}`);
  // The answer is rounded to 3 decimals; the engine's own floating sum may differ from it in its last bits.
  assert.ok(Math.abs(got.size_MB - want.size_MB) <= 0.0005 + 1e-12 * Math.abs(want.size_MB), `size_MB of ${where}: ${got.size_MB} vs ${want.size_MB}`);
}

/** Draws the filters, checks the index evaluates every one of them itself, and compares each answer with SQL. */
async function check(
  server: TestServer,
  n: number,
  seed: number,
  batch: number,
  arb: (s: Sample) => fc.Arbitrary<Filter> = (s) => filterArb(s, 5),
): Promise<{ nonEmpty: number; empty: number; kinds: Set<string> }> {
  const ix = await cohortIndex(server.ctx);
  assert.ok(ix && readyCohortIndex(server.ctx) === ix, 'the index is built and serves the counts');
  const unique = await server.ctx.engine.one(`SELECT count(*) = count(DISTINCT SeriesInstanceUID) AS u FROM "index"`);
  assert.equal(unique!.u, true, 'the reference counts series as rows');
  const sample = await sampleOf(server.ctx);
  const filters = fc.sample(arb(sample), { numRuns: n, seed });
  const want = await referenceCounts(server.ctx, filters, batch);
  let nonEmpty = 0;
  let empty = 0;
  const kinds = new Set<string>();
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i]!;
    // Not a silent fallback: the index itself evaluates this filter.
    const compiled = await compileFilter(server.ctx, f);
    assert.notEqual(selectRows(ix, compiled.filters_applied), null, `the index cannot evaluate ${JSON.stringify(f)}`);
    same(await counts(server, f), want[i]!, f);
    if (want[i]!.series > 0) nonEmpty++;
    else empty++;
    for (const a of [...Object.keys(f.terms), ...Object.keys(f.ranges), ...Object.keys(f.all_terms ?? {})]) kinds.add(a);
    if (Object.values(f.terms).some((vs) => vs.includes(null))) kinds.add('(null)');
    if (Object.keys(f.all_terms ?? {}).length > 0) kinds.add('(all_terms)');
  }
  return { nonEmpty, empty, kinds };
}

test(`${TEST_FILTERS} random filters: the index's counts equal SQL on the test dataset`, async () => {
  const { nonEmpty, empty, kinds } = await check(s, TEST_FILTERS, 22, 1);
  // The draw is not degenerate: both outcomes occur, and every attribute the dataset holds was filtered.
  assert.ok(nonEmpty >= TEST_FILTERS / 10 && empty >= TEST_FILTERS / 10, `${nonEmpty} non-empty, ${empty} empty cohorts`);
  const held = new Set((s.ctx.catalog.columns.get('index') ?? []).map((c) => c.name));
  const perCollection = new Set((s.ctx.catalog.columns.get('collections_index') ?? []).map((c) => c.name));
  const attrs = ATTRIBUTES.filter((a) => (a.collection ? perCollection.has(a.collection.column) : held.has(a.name))).map((a) => a.name);
  assert.ok(attrs.includes('program_id') && attrs.includes('cancer_types'), 'the test dataset has collection-level attributes');
  assert.deepEqual([...kinds].sort(), [...attrs, '(all_terms)', '(null)'].sort());
});

test(`${UNION_FILTERS} random unions (any_of): the index's counts equal SQL on the test dataset`, async () => {
  const { nonEmpty, empty } = await check(s, UNION_FILTERS, 23, 1, unionArb);
  assert.ok(nonEmpty >= UNION_FILTERS / 10 && empty >= UNION_FILTERS / 20, `${nonEmpty} non-empty, ${empty} empty cohorts`);
});

test('with IDQS_COHORT_INDEX=off the same counts come from SQL', async () => {
  assert.equal(await cohortIndex(off.ctx), null);
  const sample = await sampleOf(s.ctx);
  const filters = fc.sample(filterArb(sample, 3), { numRuns: 60, seed: 5 });
  const want = await referenceCounts(s.ctx, filters, 1);
  for (let i = 0; i < filters.length; i++) same(await counts(off, filters[i]!), want[i]!, filters[i]!);
});

test(`${REAL_FILTERS} random filters: the index's counts equal SQL on the real release`, { skip: SKIP_REAL }, async () => {
  real = await startServer({}, (await pinnedRelease()).db);
  const whole = await counts(real, { terms: {}, ranges: {} });
  const [all] = await referenceCounts(real.ctx, [{ terms: {}, ranges: {} }], 1);
  same(whole, all!, { terms: {}, ranges: {} });
  const { nonEmpty, empty } = await check(real, REAL_FILTERS, 2025, 10);
  assert.ok(nonEmpty >= REAL_FILTERS / 10 && empty >= REAL_FILTERS / 10, `${nonEmpty} non-empty, ${empty} empty cohorts`);
});

test(`${REAL_UNIONS} random unions (any_of): the index's counts equal SQL on the real release`, { skip: SKIP_REAL }, async () => {
  real ??= await startServer({}, (await pinnedRelease()).db);
  const { nonEmpty } = await check(real, REAL_UNIONS, 2026, 10, unionArb);
  assert.ok(nonEmpty >= REAL_UNIONS / 10, `only ${nonEmpty} non-empty cohorts`);
});
