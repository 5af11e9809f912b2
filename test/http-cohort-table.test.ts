// POST /v3/cohort/table against SQL written here: each level's rows, totals,
// sort order and paging for a filter, viewer links as /v3/viewer-url gives
// them, and refusals that say what to fix.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './fixture.ts';

let s: TestServer;
let coll: string;
before(async () => {
  s = await startServer();
  coll = String((await s.ctx.engine.one(`SELECT collection_id FROM "index" GROUP BY 1 ORDER BY count(DISTINCT StudyInstanceUID) DESC, 1 LIMIT 1`))!.collection_id);
});
after(async () => {
  await s.close();
});

interface Page {
  level: string;
  columns: string[];
  rows: Record<string, unknown>[];
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
  warnings: string[];
}

async function table(body: unknown): Promise<Page> {
  const r = await s.post('/v3/cohort/table', body);
  const json = (await r.json()) as Page;
  assert.equal(r.status, 200, JSON.stringify(json));
  return json;
}

test('each level groups the cohort as SQL does, with totals and the default order', async () => {
  const filters = { terms: { collection_id: [coll] } };
  const levels: [string, string, string][] = [
    ['collections', 'collection_id', 'collection_id'],
    ['patients', 'collection_id, PatientID', 'PatientID'],
    ['studies', 'collection_id, PatientID, StudyInstanceUID', 'StudyInstanceUID'],
    ['series', 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID', 'SeriesInstanceUID'],
  ];
  for (const [level, keys, key] of levels) {
    // Collections over the whole release (one collection would make a one-row table).
    const all = level === 'collections';
    const where = all ? 'TRUE' : 'collection_id = ?';
    const params = all ? [] : [coll];
    const grouped = level === 'series' ? '' : `GROUP BY ${keys}`;
    const want = await s.ctx.engine.rows(
      `SELECT ${key} AS k, ${grouped ? 'count(*)' : '1'} AS series FROM "index" WHERE ${where} ${grouped} ORDER BY ${keys} LIMIT 10 OFFSET 10`,
      params,
    );
    assert.ok(want.length > 0, `${level}: a second page exists`);
    const [n] = await s.ctx.engine.rows(`SELECT count(*) AS n FROM (SELECT 1 FROM "index" WHERE ${where} ${grouped})`, params);
    const got = await table({ filters: all ? {} : filters, level, page: 1, page_size: 10 });
    assert.equal(got.total, Number(n!.n), level);
    assert.equal(got.total_pages, Math.ceil(Number(n!.n) / 10), level);
    assert.deepEqual(got.rows.map((r) => r[key]), want.map((r) => r.k), level);
    if (level !== 'series') assert.deepEqual(got.rows.map((r) => r.series), want.map((r) => Number(r.series)), `${level} series counts`);
  }
});

test('sorting by a column, descending, with missing values last and a stable tail', async () => {
  const got = await table({ filters: { terms: { collection_id: [coll] } }, level: 'studies', sort: 'series', order: 'desc', page: 0, page_size: 15 });
  const want = await s.ctx.engine.rows(
    `SELECT StudyInstanceUID AS k, count(*) AS n FROM "index" WHERE collection_id = ? GROUP BY collection_id, PatientID, StudyInstanceUID
     ORDER BY n DESC, collection_id, PatientID, StudyInstanceUID LIMIT 15`,
    [coll],
  );
  assert.deepEqual(got.rows.map((r) => [r.StudyInstanceUID, r.series]), want.map((r) => [r.k, Number(r.n)]));
  // Each study links to the viewer /v3/viewer-url picks for it.
  for (const r of got.rows.slice(0, 3)) {
    const v = (await (await s.get(`/v3/viewer-url?study_instance_uid=${encodeURIComponent(String(r.StudyInstanceUID))}`)).json()) as { viewer_url: string };
    assert.equal(r.viewer_url, v.viewer_url);
  }
});

test('a slide-microscopy series opens in Slim, as /v3/viewer-url says', async () => {
  const sm = await s.ctx.engine.one(`SELECT SeriesInstanceUID AS u FROM "index" WHERE Modality = 'SM' ORDER BY 1 LIMIT 1`);
  assert.ok(sm, 'the test dataset has slide microscopy');
  const got = await table({ filters: { terms: { SeriesInstanceUID: [String(sm.u)] } }, level: 'series' });
  assert.equal(got.total, 1);
  const v = (await (await s.get(`/v3/viewer-url?series_instance_uid=${encodeURIComponent(String(sm.u))}`)).json()) as { viewer_url: string; viewer: string };
  assert.equal(v.viewer, 'slim');
  assert.equal(got.rows[0]!.viewer_url, v.viewer_url);
});

test('bad requests say what to fix', async () => {
  const cases: [unknown, number, RegExp][] = [
    [{ level: 'serie' }, 400, /level must be one of collections, patients, studies, series; got "serie". Did you mean 'series'/],
    [{ level: 'series', sort: 'instancecount' }, 400, /sort must be a column of the series table: .*Did you mean 'instanceCount'/],
    [{ level: 'patients', sort: 'modalities' }, 400, /sort must be a column of the patients table/],
    [{ order: 'up' }, 400, /order must be asc or desc/],
    [{ page: -1 }, 422, /page/],
  ];
  for (const [body, status, re] of cases) {
    const r = await s.post('/v3/cohort/table', body);
    assert.equal(r.status, status, JSON.stringify(body));
    assert.match(((await r.json()) as { error: { message: string } }).error.message, re, JSON.stringify(body));
  }
  const clamped = await table({ page_size: 10_000_000 });
  assert.equal(clamped.page_size, s.ctx.config.maxPageSize);
  const cap = s.ctx.config.maxPageSize;
  assert.ok(clamped.warnings.includes(`page_size 10000000 is above the cap of ${cap}; lowered to ${cap}.`), JSON.stringify(clamped.warnings));
});
