// The /v2 preview's totalFound from the cohort index (services/v2/index-count.ts)
// against SQL written here, for random /v2 queries: every string attribute the
// index holds (categorical ones and identifiers), values as stored, in other
// casings, as '%' patterns, with a literal '_', "None", unknown values), the
// collection-level ones (whole cells of collections_index), and filters only
// SQL answers (descriptions) mixed in; at the levels the index counts (series
// keyed, distinct patients, distinct studies) and others. The expected count is the number of distinct field
// combinations of the selected rows of index LEFT JOIN collections_index, with
// matching written as regular expressions over lower(): independent of the
// LIKE the product writes. Queries whose filters are all categorical
// attributes of the index must have been counted by the index, so the test
// cannot pass on SQL alone. On the test dataset (with its /v2 tables hidden,
// so /v2 reads its index) and on the real release.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { request } from 'node:http';
import { startServer, type TestServer } from './fixture.ts';
import { pinnedRelease, SKIP_REAL } from './real-releases.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { indexCount, v2CountStats } from '../src/core/services/v2/index-count.ts';
import { planManifest } from '../src/core/services/v2/plan.ts';
import { requireV2Rows } from '../src/core/services/v2/source.ts';
import { lit } from './sql-text.ts';

let s: TestServer | undefined;
let real: TestServer | undefined;
after(async () => {
  await s?.close();
  await real?.close();
});

/** /v2 filter attribute -> its column in the SQL here (index x, collections_index c). */
const CATEGORICAL: Record<string, string> = {
  collection_id: 'x.collection_id',
  analysis_results_id: 'x.analysis_result_id',
  Modality: 'x.Modality',
  BodyPartExamined: 'x.BodyPartExamined',
  Manufacturer: 'x.Manufacturer',
  ManufacturerModelName: 'x.ManufacturerModelName',
  license_short_name: 'x.license_short_name',
  // Cells of collections_index (whole cells, not their list items).
  CancerType: 'c.cancer_types',
  tcia_species: 'c.species',
  tcia_tumorLocation: 'c.tumor_locations',
};
const IDENTIFIERS: Record<string, string> = { PatientID: 'x.PatientID', StudyInstanceUID: 'x.StudyInstanceUID', SeriesInstanceUID: 'x.SeriesInstanceUID' };
/** Answered by SQL only (not in the index, or collection cells). */
const SQL_ONLY: Record<string, string> = { SeriesDescription: 'x.SeriesDescription', StudyDescription: 'x.StudyDescription' };
const COLUMNS = { ...CATEGORICAL, ...IDENTIFIERS, ...SQL_ONLY };

const FIELD_SETS: string[][] = [
  ['SeriesInstanceUID'],
  ['Modality', 'SeriesInstanceUID'],
  ['crdc_series_uuid'],
  ['PatientID'],
  ['StudyInstanceUID'],
  ['collection_id'],
  ['PatientID', 'StudyInstanceUID'],
];
/** Field sets the index counts: keyed by series, or one patient / study per row. */
const INDEX_LEVELS = new Set([0, 1, 2, 3, 4]);
const FIELD_COLUMNS: Record<string, string> = { SeriesInstanceUID: 'x.SeriesInstanceUID', Modality: 'x.Modality', crdc_series_uuid: 'x.crdc_series_uuid', PatientID: 'x.PatientID', StudyInstanceUID: 'x.StudyInstanceUID', collection_id: 'x.collection_id' };

const FROM = `"index" x LEFT JOIN collections_index c ON c.collection_id = x.collection_id`;
const swapCase = (v: string) => [...v].map((ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase())).join('');

/** One /v2 value as SQL over `col`: '%' any run (RE2, dot matching newlines), the rest literal, compared lowered. */
function valueSql(name: string, col: string, v: string): string {
  const norm = name === 'collection_id' ? v.toLowerCase().replace(/[- ]/g, '_') : v;
  const parts: string[] = [];
  if (norm === 'None') parts.push(`${col} IS NULL`);
  const re = norm
    .toLowerCase()
    .split('%')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  parts.push(`regexp_full_match(lower(${col}::VARCHAR), ${lit(`(?s)${re}`)})`);
  return parts.join(' OR ');
}

/**
 * POST on a fresh connection: the SQL of the test between two requests can
 * outlast the server's keep-alive timeout, and a reused connection the server
 * is closing at that moment fails with ECONNRESET.
 */
function postFresh(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

type Query = { filters: Record<string, string[]>; fields: number; counts: boolean };

async function samples(ctx: TestServer['ctx']): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const [name, col] of Object.entries(COLUMNS)) {
    const rows = await ctx.engine.rows(`SELECT DISTINCT ${col}::VARCHAR AS v FROM ${FROM} WHERE ${col} IS NOT NULL ORDER BY hash(v) LIMIT 30`);
    out.set(name, rows.map((r) => String(r.v)));
  }
  return out;
}

function valueArb(values: string[]): fc.Arbitrary<string> {
  const some = values.length > 0 ? fc.constantFrom(...values) : fc.constant('nothing');
  return fc.oneof(
    some,
    some.map(swapCase),
    some.map((v) => v.toLowerCase()),
    fc.tuple(some, fc.nat(6)).map(([v, k]) => `${v.slice(0, k)}%`),
    fc.tuple(some, fc.nat(4), fc.nat(4)).map(([v, a, b]) => `%${swapCase(v.slice(a, a + b + 1))}%`),
    fc.tuple(some, fc.nat(8)).map(([v, k]) => (v.length > 0 ? v.slice(0, k % v.length) + '_' + v.slice((k % v.length) + 1) : '_')),
    fc.tuple(some, fc.nat(8)).map(([v, k]) => `${v.slice(0, k)}%\\_`),
    fc.constant('None'),
    fc.constantFrom('%', 'none', 'NONE', 'no such value', 'zz%'),
  );
}

function queryArb(sample: Map<string, string[]>): fc.Arbitrary<Query> {
  const names = Object.keys(COLUMNS);
  const filters = (most: number, among = names) =>
    fc.uniqueArray(fc.constantFrom(...among), { minLength: 0, maxLength: most }).chain((chosen) =>
      fc.tuple(...chosen.map((n) => fc.array(valueArb(sample.get(n)!), { minLength: 1, maxLength: 3 }))).map((vs) => Object.fromEntries(chosen.map((n, i) => [n, vs[i]!]))),
    );
  // One filter alone half the time: combined ones are often empty, which would hide a wrong match.
  // Identifiers on their own a third of the time: their dictionaries are searched unlike the others.
  const filter = fc.oneof(filters(1), filters(3), filters(2, Object.keys(IDENTIFIERS)));
  return fc.record({ filters: filter, fields: fc.nat(FIELD_SETS.length - 1), counts: fc.boolean() });
}

async function expected(server: TestServer, q: Query): Promise<number> {
  const where = Object.entries(q.filters).map(([name, vs]) => `(${vs.map((v) => valueSql(name, COLUMNS[name]!, v)).join(' OR ')})`);
  const cols = FIELD_SETS[q.fields]!.map((f) => FIELD_COLUMNS[f]!).join(', ');
  const r = await server.ctx.engine.one(`SELECT count(*) AS n FROM (SELECT DISTINCT ${cols} FROM ${FROM}${where.length ? ` WHERE ${where.join(' AND ')}` : ''})`);
  return Number(r!.n);
}

/** Whether the index must count it: index fields, filters on categorical attributes only, ASCII values. */
const mustUseIndex = (q: Query) =>
  INDEX_LEVELS.has(q.fields) && Object.entries(q.filters).every(([name, vs]) => name in CATEGORICAL && vs.every((v) => /^[\x20-\x7e]*$/.test(v)));

async function check(server: TestServer, runs: number, seed: number): Promise<{ viaIndex: number; identifiersViaIndex: number; nonEmpty: number }> {
  assert.ok(await cohortIndex(server.ctx), 'the index is built');
  const sample = await samples(server.ctx);
  const queries = fc.sample(queryArb(sample), { numRuns: runs, seed });
  const stats = v2CountStats(server.ctx);
  let viaIndex = 0;
  let identifiersViaIndex = 0;
  let nonEmpty = 0;
  for (const q of queries) {
    const fields = FIELD_SETS[q.fields]!;
    const label = JSON.stringify({ ...q, fields });
    const want = await expected(server, q);
    if (want > 0) nonEmpty++;
    // The index's own count, where it gives one.
    const plan = planManifest({ filters: q.filters, fields, counts: q.counts, group_size: false }, requireV2Rows(server.ctx));
    const direct = plan.countOf ? await indexCount(server.ctx, plan.countOf) : null;
    if (direct !== null) assert.equal(direct, want, `index count of ${label}`);
    // And through the HTTP route.
    const before = stats.index;
    const r = await postFresh(`${server.url}/v2/cohorts/manifest/preview`, { cohort_def: { name: 't', description: 't', filters: q.filters }, fields, counts: q.counts, page_size: 1 });
    const j = r.json as { manifest: { totalFound: number; rowsReturned: number } };
    assert.equal(r.status, 200, `${label}: ${JSON.stringify(j).slice(0, 300)}`);
    assert.equal(j.manifest.totalFound, want, `totalFound of ${label}`);
    assert.equal(j.manifest.rowsReturned, Math.min(1, want), `rows of ${label}`);
    const used = stats.index - before;
    if (mustUseIndex(q)) assert.equal(used, 1, `the index counted ${label}`);
    if (direct === null) assert.equal(used, 0, `SQL counted ${label}`);
    viaIndex += used;
    if (Object.keys(q.filters).some((n) => n in IDENTIFIERS)) identifiersViaIndex += used;
  }
  process.stdout.write(`# ${runs} queries: ${viaIndex} counted by the index (${identifiersViaIndex} with an identifier filter), ${nonEmpty} non-empty\n`);
  return { viaIndex, identifiersViaIndex, nonEmpty };
}

before(async () => {
  s = await startServer();
  // Without its /v2 tables the test database's /v2 reads its index, as on a real release.
  s.ctx.catalog.v2Tables = [];
});

test('/v2 preview counts from the cohort index equal SQL on the test dataset', async () => {
  const { viaIndex, identifiersViaIndex, nonEmpty } = await check(s!, 250, 22);
  assert.ok(identifiersViaIndex >= 10, `only ${identifiersViaIndex} queries with an identifier filter counted by the index`);
  assert.ok(viaIndex >= 90, `only ${viaIndex} of 250 counted by the index`);
  assert.ok(nonEmpty >= 60, `only ${nonEmpty} non-empty`);
});

test('/v2 preview counts from the cohort index equal SQL on the real release', { skip: SKIP_REAL }, async () => {
  real = await startServer({}, (await pinnedRelease()).db);
  const { viaIndex, nonEmpty } = await check(real, 30, 5);
  assert.ok(viaIndex >= 9, `only ${viaIndex} of 30 counted by the index`);
  assert.ok(nonEmpty >= 8, `only ${nonEmpty} non-empty`);
});
