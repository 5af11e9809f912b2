// Answers that cost nothing twice (issue 39), on the test dataset against SQL
// written here: a repeated manifest page answers the same rows as SQL and reads
// nothing from the engine (curated queries counted at /metrics); rows handed
// out are copies; the immutable answers are sent pre-serialised and
// pre-compressed, their bytes equal to the computed ones; the facet and row
// caches stay within their budgets under a loop of distinct requests.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startServer, type TestServer } from './fixture.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { rowCacheOf } from '../src/core/services/cohort-index/row-cache.ts';
import { facetCacheOf } from '../src/core/services/facets/cohort-facets.ts';
import { listCollections } from '../src/core/services/collections.ts';

const COLUMNS = `collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, SeriesDescription, instanceCount,
  series_size_MB, aws_bucket, crdc_series_uuid, series_cloud1_url, series_cloud1_url AS series_aws_url, license_short_name, analysis_result_id`;

let s: TestServer;
before(async () => {
  s = await startServer({ rowCacheMb: 1, facetCacheMb: 1 });
});
after(async () => s?.close());

/** Curated engine queries since start, as /metrics reports them. */
async function engineQueries(): Promise<number> {
  const text = await (await s.get('/metrics')).text();
  const m = /^idqs_budget\{budget="curated",field="admitted"\} (\d+)/m.exec(text);
  assert.ok(m, 'the curated budget is on /metrics');
  return Number(m[1]);
}

test('a repeated manifest page answers the rows SQL gives and reads nothing from the engine; rows handed out are copies', async () => {
  const ix = await cohortIndex(s.ctx);
  assert.ok(ix, 'the index is built');
  const coll = String((await s.ctx.engine.one(`SELECT collection_id FROM "index" GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`))!.collection_id);
  const body = { filters: { terms: { collection_id: [coll] } }, page: 1, page_size: 7 };
  const want = await s.ctx.engine.rows(`SELECT ${COLUMNS} FROM "index" WHERE collection_id = ? ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID LIMIT 7 OFFSET 7`, [coll]);
  assert.equal(want.length, 7, 'the collection has two pages of 7');
  const first = (await (await s.post('/v3/cohort/manifest', body)).json()) as { series: Record<string, unknown>[] };
  assert.deepEqual(first.series, want);
  const before = await engineQueries();
  const again = (await (await s.post('/v3/cohort/manifest', body)).json()) as { series: Record<string, unknown>[] };
  assert.deepEqual(again.series, want);
  // /metrics itself asks no query; the repeated page (rows, counts, preview) none either.
  assert.equal(await engineQueries(), before, 'the repeated page read nothing from the engine');
  const cache = rowCacheOf(s.ctx, ix)!;
  const kept = cache.get([...cache.keys()][0]!)!;
  const copy = { ...kept };
  // What a caller gets is not what is kept: change a page's rows, ask again.
  const { rowsAt, pagePositions } = await import('../src/core/services/cohort-index/page.ts');
  const got = await rowsAt(s.ctx, ix, pagePositions(ix, 'all', 0, 3), COLUMNS);
  for (const r of got) r.collection_id = 'changed';
  const fresh = await rowsAt(s.ctx, ix, pagePositions(ix, 'all', 0, 3), COLUMNS);
  assert.ok(fresh.every((r) => r.collection_id !== 'changed'));
  assert.deepEqual(kept, copy);
});

test('collections, attributes and tables are sent pre-compressed by Accept-Encoding, byte-equal to the computed answer, with the ETag', async () => {
  for (const path of ['/v3/collections', '/v3/attributes', '/v3/tables']) {
    const plain = await s.get(path, { 'accept-encoding': 'identity' });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-encoding'), null, path);
    const bytes = Buffer.from(await plain.arrayBuffer());
    for (const enc of ['gzip', 'br'] as const) {
      // fetch decodes bodies itself: read the raw bytes through node's http instead.
      const raw = await rawGet(s.url + path, enc);
      assert.equal(raw.encoding, enc, `${path} ${enc}`);
      assert.ok(raw.etag && raw.etag === plain.headers.get('etag'), `${path} carries the release's ETag`);
      assert.deepEqual(enc === 'gzip' ? gunzipSync(raw.body) : brotliDecompressSync(raw.body), bytes, `${path} ${enc} decodes to the same bytes`);
    }
    const notModified = await s.get(path, { 'if-none-match': plain.headers.get('etag')! });
    assert.equal(notModified.status, 304);
  }
  // The collections' bytes are those of the service's own answer, and as many as collections_index has.
  const body = Buffer.from(await (await s.get('/v3/collections')).arrayBuffer()).toString('utf8');
  assert.deepEqual(JSON.parse(body), JSON.parse(JSON.stringify(await listCollections(s.ctx))));
  const n = Number((await s.ctx.engine.one(`SELECT count(*) AS n FROM collections_index WHERE collection_id IS NOT NULL`))!.n);
  assert.equal((JSON.parse(body) as unknown[]).length, n);
});

test('the facet and row caches stay within their budgets under a loop of distinct requests', async () => {
  const ix = (await cohortIndex(s.ctx))!;
  const rows = Number((await s.ctx.engine.one(`SELECT count(*) AS n FROM "index"`))!.n);
  for (let i = 0; i < 40; i++) {
    const f = await s.post('/v3/cohort/facets', { filters: { ranges: { instanceCount: { gte: i + 1 } } } });
    assert.equal(f.status, 200);
    const page = await s.post('/v3/cohort/manifest', { filters: {}, page: i, page_size: Math.ceil(rows / 40) });
    assert.equal(page.status, 200);
  }
  const facets = facetCacheOf(s.ctx).stats();
  assert.ok(facets.bytes <= facets.maxBytes, `facets ${facets.bytes} <= ${facets.maxBytes}`);
  assert.ok(facets.entries > 0 && facets.bytes > facets.entries * 1024, `facet answers are counted by their size (${facets.entries} kept, ${facets.bytes} bytes)`);
  const r = rowCacheOf(s.ctx, ix)!;
  assert.ok(r.calculatedSize <= 1024 * 1024, `rows ${r.calculatedSize} <= 1 MB`);
  assert.ok(r.size < rows, `rows evicted some of the ${rows} read (${r.size} kept)`);
});

function rawGet(url: string, encoding: string): Promise<{ encoding: string | undefined; etag: string | undefined; body: Buffer }> {
  return import('node:http').then(
    (http) =>
      new Promise((resolve, reject) => {
        http.get(url, { headers: { 'accept-encoding': encoding } }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], etag: res.headers.etag, body: Buffer.concat(parts) }));
          res.on('error', reject);
        }).on('error', reject);
      }),
  );
}
