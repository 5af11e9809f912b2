// Manifest pages from the cohort index: for random non-empty filters (unions
// with any_of among them) and random pages, every row of POST
// /v3/cohort/manifest (all its columns, in order), its totals and its download
// preview equal SQL written here, on the test dataset and on the real release.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { filterArb, sampleOf, unionArb, whereOf, type Filter } from './cohort-index-support.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { pinnedRelease, SKIP_REAL } from './real-releases.ts';


const COLUMNS = `collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, SeriesDescription, instanceCount,
  series_size_MB, aws_bucket, crdc_series_uuid, series_cloud1_url, series_cloud1_url AS series_aws_url, license_short_name, analysis_result_id`;
const ORDER = 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID';

let s: TestServer;
let real: TestServer | undefined;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
  await real?.close();
});

interface Page {
  total_series: number;
  total_pages: number;
  returned: number;
  has_more: boolean;
  series: Record<string, unknown>[];
  counts: { series: number };
  download: { manifest_preview: string[] };
}

async function checkPages(server: TestServer, runs: number, seed: number): Promise<number> {
  assert.ok(await cohortIndex(server.ctx), 'the index is built');
  const sample = await sampleOf(server.ctx);
  // Unions (any_of) too: the index evaluates them.
  const nonEmptyFilter = fc
    .oneof(filterArb(sample, 3), unionArb(sample))
    .filter((f) => Object.values(f.terms).some((v) => v.length > 0) || Object.keys(f.ranges).length > 0 || (f.any_of?.length ?? 0) > 0);
  const draws = fc.sample(fc.tuple(nonEmptyFilter, fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, noNaN: true })), { numRuns: runs, seed });
  let withRows = 0;
  for (const [f, size, where] of draws) {
    const total = Number((await server.ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE ${whereOf(f)}`))!.n);
    const pages = Math.ceil(total / size);
    // Mostly a page inside the cohort, sometimes the one past its end.
    const page = where > 0.9 ? pages : Math.min(Math.floor(where * pages), Math.max(0, pages - 1));
    const want = await server.ctx.engine.rows(`SELECT ${COLUMNS} FROM "index" WHERE ${whereOf(f)} ORDER BY ${ORDER} LIMIT ${size} OFFSET ${page * size}`);
    const r = await server.post('/v3/cohort/manifest', { filters: f, page, page_size: size });
    const got = (await r.json()) as Page;
    const label = `${JSON.stringify(f as Filter)} page ${page} of size ${size}`;
    assert.equal(r.status, 200, `${label}: ${JSON.stringify(got).slice(0, 300)}`);
    assert.equal(got.total_series, total, label);
    assert.equal(got.counts.series, total, label);
    assert.equal(got.total_pages, pages, label);
    assert.equal(got.has_more, (page + 1) * size < total, label);
    assert.deepEqual(got.series, want, label);
    const preview = await server.ctx.engine.rows(`SELECT series_cloud1_url AS u FROM "index" WHERE ${whereOf(f)} ORDER BY ${ORDER} LIMIT 5`);
    assert.deepEqual(got.download.manifest_preview, preview.map((p) => String(p.u)), `preview of ${label}`);
    if (want.length > 0) withRows++;
  }
  return withRows;
}

test('random manifest pages from the index equal SQL on the test dataset', async () => {
  const withRows = await checkPages(s, 300, 11);
  assert.ok(withRows >= 60, `only ${withRows} of the pages had rows`);
});

test('random manifest pages from the index equal SQL on the real release', { skip: SKIP_REAL }, async () => {
  real = await startServer({}, (await pinnedRelease()).db);
  const withRows = await checkPages(real, 30, 3);
  assert.ok(withRows >= 6, `only ${withRows} of the pages had rows`);
});
