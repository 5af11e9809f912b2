// The other answers the cohort index serves, for random filters (unions with
// any_of among them), against SQL written here: the license breakdown of
// /v3/licenses (series, size and order), the totals of /v3/cohort/table at
// every level and its series page in the default order. On the test dataset
// and on the real release.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { filterArb, sampleOf, unionArb, whereOf } from './cohort-index-support.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { pinnedRelease, SKIP_REAL } from './real-releases.ts';


let s: TestServer;
let real: TestServer | undefined;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
  await real?.close();
});

async function post<T>(server: TestServer, path: string, body: unknown): Promise<T> {
  const r = await server.post(path, body);
  const out = (await r.json()) as T;
  assert.equal(r.status, 200, `${path} ${JSON.stringify(body)}: ${JSON.stringify(out).slice(0, 300)}`);
  return out;
}

interface License {
  license_short_name: string | null;
  series: number;
  size_MB: number;
}

const GROUPS: Record<string, string> = {
  collections: 'collection_id',
  patients: 'collection_id, PatientID',
  studies: 'collection_id, PatientID, StudyInstanceUID',
  series: 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID',
};

async function checkAnswers(server: TestServer, runs: number, seed: number): Promise<number> {
  assert.ok(await cohortIndex(server.ctx), 'the index is built');
  const e = server.ctx.engine;
  const sample = await sampleOf(server.ctx);
  // Unions (any_of) too: the index evaluates them.
  const filters = fc.sample(fc.oneof(filterArb(sample, 3), unionArb(sample)), { numRuns: runs, seed });
  let nonEmpty = 0;
  for (const f of filters) {
    const where = whereOf(f);
    const label = JSON.stringify(f);

    const lic = await post<{ licenses: License[] }>(server, '/v3/licenses', f);
    const want = await e.rows(
      `SELECT license_short_name AS l, count(*) AS n, coalesce(sum(series_size_MB), 0) AS mb FROM "index" WHERE ${where} GROUP BY 1 ORDER BY n DESC, l ASC NULLS LAST`,
    );
    assert.deepEqual(
      lic.licenses.map((l) => [l.license_short_name, l.series]),
      want.map((w) => [w.l === null ? null : String(w.l), Number(w.n)]),
      `licenses of ${label}`,
    );
    lic.licenses.forEach((l, i) => assert.ok(Math.abs(l.size_MB - Number(want[i]!.mb)) <= 0.0005 + 1e-12 * Number(want[i]!.mb), `size of ${l.license_short_name} in ${label}`));
    if (want.length > 0) nonEmpty++;

    for (const [level, keys] of Object.entries(GROUPS)) {
      const table = await post<{ total: number; rows: Record<string, unknown>[] }>(server, '/v3/cohort/table', { filters: f, level, page_size: 7, page: 1 });
      const n = await e.one(`SELECT count(*) AS n FROM (SELECT 1 FROM "index" WHERE ${where} GROUP BY ${keys})`);
      assert.equal(table.total, Number(n!.n), `${level} total of ${label}`);
      if (level === 'series') {
        const page = await e.rows(`SELECT SeriesInstanceUID AS u, round(series_size_MB, 3) AS mb FROM "index" WHERE ${where} ORDER BY ${keys} LIMIT 7 OFFSET 7`);
        assert.deepEqual(
          table.rows.map((r) => [r.SeriesInstanceUID, r.series_size_MB]),
          page.map((p) => [p.u, p.mb === null ? null : Number(p.mb)]),
          `series page of ${label}`,
        );
      }
    }
  }
  return nonEmpty;
}

test('licenses and cohort tables from the index equal SQL on the test dataset', async () => {
  const nonEmpty = await checkAnswers(s, 150, 9);
  assert.ok(nonEmpty >= 30, `only ${nonEmpty} non-empty cohorts`);
});

test('licenses and cohort tables from the index equal SQL on the real release', { skip: SKIP_REAL }, async () => {
  real = await startServer({}, (await pinnedRelease()).db);
  const nonEmpty = await checkAnswers(real, 12, 4);
  assert.ok(nonEmpty >= 3, `only ${nonEmpty} non-empty cohorts`);
});
