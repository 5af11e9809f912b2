import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './fixture.ts';
import { V3_EXAMPLE_CHECKS } from './example-checks.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.close();
});

type Obj = Record<string, unknown>;
interface ErrorBody {
  error: { code: string; message: string };
}

async function json<T = unknown>(path: string, status = 200): Promise<T> {
  const r = await s.get(path);
  const text = await r.text();
  assert.equal(r.status, status, `${path}: ${text}`);
  return JSON.parse(text) as T;
}

const sorted = (xs: string[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

test('GET /v3/collections lists every collection of collections_index, ordered by collection_id', async () => {
  const body = await json<Obj[]>('/v3/collections');
  assert.ok(Array.isArray(body));
  const ids = body.map((c) => String(c.collection_id));
  const expected = (await s.ctx.engine.rows('SELECT collection_id FROM collections_index ORDER BY collection_id')).map((r) => String(r.collection_id));
  assert.deepEqual(ids, expected);
  assert.deepEqual(ids, sorted(ids));
  assert.ok(ids.includes('rider_pilot'));
  assert.ok(ids.includes('nlst'));

  const nlst = body.find((c) => c.collection_id === 'nlst')!;
  const row = (await s.ctx.engine.one(
    `SELECT collection_name, cancer_types, tumor_locations, species, subjects, supporting_data, description, program_id, status, updated,
       [s.source_doi FOR s IN sources] AS dois, [s.license.license_short_name FOR s IN sources] AS licenses
     FROM collections_index WHERE collection_id = 'nlst'`,
  ))!;
  for (const k of ['collection_name', 'cancer_types', 'tumor_locations', 'species', 'subjects', 'supporting_data', 'description', 'program_id', 'status', 'updated']) {
    assert.deepEqual(nlst[k], row[k], k);
  }
  const sources = nlst.sources as Obj[];
  assert.deepEqual(
    sources.map((x) => x.source_DOI),
    row.dois,
  );
  assert.deepEqual(
    sources.map((x) => x.license_short_name),
    row.licenses,
  );
  for (const src of sources) {
    assert.equal(src.commercial_use_allowed, !/NC/.test(String(src.license_short_name)));
  }
});

test('GET /v3/collections/{id} counts, modalities and licenses equal an independent count', async () => {
  for (const id of ['nlst', 'rider_pilot']) {
    const body = await json<Obj>(`/v3/collections/${id}`);
    assert.equal(body.collection_id, id);
    const c = (await s.ctx.engine.one(
      `SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series,
         sum(instanceCount) AS instances, sum(series_size_MB) AS mb
       FROM "index" WHERE collection_id = ?`,
      [id],
    ))!;
    assert.equal(body.patients, c.patients);
    assert.equal(body.studies, c.studies);
    assert.equal(body.series, c.series);
    assert.equal(body.instances, c.instances);
    assert.ok(Math.abs(Number(body.size_MB) - Number(c.mb)) < 0.01, `size_MB ${body.size_MB} vs ${c.mb}`);
    assert.ok(Math.abs(Number(body.size_TB) - Number(c.mb) / 1e6) < 1e-6);
    assert.ok(Number(body.series) > 0);

    const mods = (await s.ctx.engine.rows(`SELECT DISTINCT Modality AS m FROM "index" WHERE collection_id = ? AND Modality IS NOT NULL`, [id])).map((r) =>
      String(r.m),
    );
    assert.deepEqual(body.modalities, sorted(mods));

    const lic = await s.ctx.engine.rows(
      `SELECT license_short_name AS name, count(*) AS series, sum(series_size_MB) AS mb FROM "index" WHERE collection_id = ? GROUP BY 1`,
      [id],
    );
    const expected = lic
      .map((r) => ({ name: r.name as string | null, series: Number(r.series), mb: Number(r.mb) }))
      .sort((a, b) => b.series - a.series || String(a.name).localeCompare(String(b.name)));
    const licenses = body.licenses as Obj[];
    assert.deepEqual(
      licenses.map((l) => [l.license_short_name, l.series]),
      expected.map((e) => [e.name, e.series]),
    );
    licenses.forEach((l, i) => {
      assert.ok(Math.abs(Number(l.size_MB) - expected[i]!.mb) < 0.01);
      assert.equal(typeof l.size_TB, 'number');
      assert.equal(l.commercial_use_allowed, !/NC/.test(String(l.license_short_name)));
    });
    assert.equal(
      licenses.reduce((n, l) => n + Number(l.series), 0),
      body.series,
    );
  }
});

test('license breakdown ties are ordered by name, and a collection with NC licenses says commercial use is not allowed', async () => {
  const row = await s.ctx.engine.one(
    `SELECT collection_id FROM "index" WHERE license_short_name LIKE '%NC%' GROUP BY 1 ORDER BY 1 LIMIT 1`,
  );
  assert.ok(row, 'the test data has a collection with an NC license');
  const body = await json<{ licenses: Obj[] }>(`/v3/collections/${String(row.collection_id)}`);
  const nc = body.licenses.filter((l) => /NC/.test(String(l.license_short_name)));
  assert.ok(nc.length > 0);
  for (const l of nc) assert.equal(l.commercial_use_allowed, false);
  for (let i = 1; i < body.licenses.length; i++) {
    const a = body.licenses[i - 1]!;
    const b = body.licenses[i]!;
    assert.ok(Number(a.series) > Number(b.series) || (a.series === b.series && String(a.license_short_name) <= String(b.license_short_name)));
  }
});

test('an unknown collection is a 404 naming it and suggesting close ids', async () => {
  const upper = await json<ErrorBody>('/v3/collections/NLST', 404);
  assert.equal(upper.error.code, 'not_found');
  assert.match(upper.error.message, /'NLST'/);
  assert.match(upper.error.message, /Did you mean 'nlst'/);

  const typo = await json<ErrorBody>('/v3/collections/rider_pilto', 404);
  assert.match(typo.error.message, /'rider_pilto'/);
  assert.match(typo.error.message, /'rider_pilot'/);

  const nope = await json<ErrorBody>('/v3/collections/__nope__', 404);
  assert.equal(nope.error.code, 'not_found');
  assert.match(nope.error.message, /__nope__/);
  assert.match(nope.error.message, /GET \/v3\/collections/);
});

test('GET /v3/analysis_results lists every analysis result, ordered by id, with the compatible fields', async () => {
  const body = await json<Obj[]>('/v3/analysis_results');
  const rows = await s.ctx.engine.rows(
    'SELECT analysis_result_id, analysis_result_title, source_DOI, subjects, collections FROM analysis_results_index ORDER BY analysis_result_id',
  );
  assert.ok(rows.length > 0);
  assert.deepEqual(
    body.map((a) => a.analysis_result_id),
    rows.map((r) => r.analysis_result_id),
  );
  for (const [i, a] of body.entries()) {
    assert.deepEqual(Object.keys(a), [
      'analysis_result_id',
      'analysis_result_title',
      'source_DOI',
      'source_url',
      'subjects',
      'collections',
      'modalities',
      'license_short_name',
      'description',
    ]);
    assert.equal(a.analysis_result_title, rows[i]!.analysis_result_title);
    assert.equal(a.source_DOI, rows[i]!.source_DOI);
    assert.equal(a.subjects, rows[i]!.subjects);
    assert.equal(a.collections, rows[i]!.collections);
  }
});

test('GET /v3/attributes lists the 19 series attributes and the 4 collection attributes with type, kind and caveats', async () => {
  const all = await json<Obj[]>('/v3/attributes');
  assert.equal(all.length, 23);
  assert.deepEqual(
    all.filter((a) => a.table === 'collections_index').map((a) => a.name),
    ['program_id', 'cancer_types', 'tumor_locations', 'species'],
  );
  const body = all.filter((a) => a.table !== 'collections_index');
  assert.equal(body.length, 19);
  assert.equal(body.filter((a) => a.kind === 'term').length, 13);
  assert.equal(body.filter((a) => a.kind === 'range').length, 6);
  const live = new Map(
    (await s.ctx.engine.rows(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'index'`)).map((r) => [
      String(r.column_name),
      String(r.data_type),
    ]),
  );
  const bq: Record<string, string> = { VARCHAR: 'STRING', BIGINT: 'INTEGER', DOUBLE: 'FLOAT' };
  for (const a of body) {
    assert.equal(a.table, 'index');
    assert.ok(live.has(String(a.name)), `${a.name} is a column of index`);
    assert.equal(a.data_type, bq[live.get(String(a.name))!], `${a.name}`);
    assert.equal(typeof a.categorical, 'boolean');
    assert.ok(String(a.description).length > 0);
  }
  const by = new Map(body.map((a) => [a.name, a]));
  assert.equal(by.get('Modality')!.kind, 'term');
  assert.equal(by.get('Modality')!.categorical, true);
  assert.equal(by.get('instanceCount')!.data_type, 'INTEGER');
  assert.equal(by.get('series_size_MB')!.data_type, 'FLOAT');
  assert.equal(by.get('StudyDate')!.kind, 'range');
  assert.equal(by.get('StudyDate')!.value_format, 'YYYY-MM-DD');
  assert.equal(by.get('SeriesDate')!.value_format, 'YYYY-MM-DD');
  assert.equal('value_format' in by.get('instanceCount')!, false);
  assert.match(String(by.get('BodyPartExamined')!.description), /list_contains\(seg_index\.SegmentedPropertyType_CodeMeanings/);
  assert.doesNotMatch(String(by.get('Modality')!.description), /list_contains/);
});

test('GET /v3/attributes/Modality/values equals an independent GROUP BY, with an empty note', async () => {
  const body = await json<{ attribute: string; values: { value: unknown; count: number }[]; truncated: boolean; note: string }>(
    '/v3/attributes/Modality/values',
  );
  const rows = await s.ctx.engine.rows(`SELECT Modality AS v, count(*) AS n FROM "index" WHERE Modality IS NOT NULL GROUP BY 1`);
  const expected = rows.map((r) => ({ value: r.v, count: Number(r.n) })).sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)));
  assert.ok(expected.length < s.ctx.config.valuesLimit, 'all Modality values fit in the default limit');
  assert.equal(body.attribute, 'Modality');
  assert.deepEqual(body.values, expected);
  assert.equal(body.truncated, false);
  assert.equal(body.note, '');
  assert.deepEqual(Object.keys(body), ['attribute', 'values', 'truncated', 'note']);
});

test('limit cuts the values and sets truncated exactly when more values exist', async () => {
  const distinct = Number((await s.ctx.engine.one(`SELECT count(DISTINCT Modality) AS n FROM "index"`))!.n);
  assert.ok(distinct > 2);
  const full = await json<{ values: unknown[] }>(`/v3/attributes/Modality/values?limit=${distinct}`);
  const two = await json<{ values: unknown[]; truncated: boolean }>('/v3/attributes/Modality/values?limit=2');
  assert.equal(two.values.length, 2);
  assert.equal(two.truncated, true);
  assert.deepEqual(two.values, full.values.slice(0, 2));
  const exact = await json<{ values: unknown[]; truncated: boolean }>(`/v3/attributes/Modality/values?limit=${distinct}`);
  assert.equal(exact.values.length, distinct);
  assert.equal(exact.truncated, false);
  const oneLess = await json<{ values: unknown[]; truncated: boolean }>(`/v3/attributes/Modality/values?limit=${distinct - 1}`);
  assert.equal(oneLess.values.length, distinct - 1);
  assert.equal(oneLess.truncated, true);
});

test('the default limit is config.valuesLimit and high-cardinality columns are truncated', async () => {
  const body = await json<{ values: unknown[]; truncated: boolean }>('/v3/attributes/SeriesInstanceUID/values');
  assert.equal(body.values.length, s.ctx.config.valuesLimit);
  assert.equal(body.truncated, true);
});

test('BodyPartExamined values carry the non-empty note; NULLs are excluded', async () => {
  const cap = s.ctx.config.valuesLimitCap;
  const body = await json<{ values: { value: unknown; count: number }[]; truncated: boolean; note: string }>(
    `/v3/attributes/BodyPartExamined/values?limit=${cap}`,
  );
  assert.ok(body.note.length > 0);
  assert.match(body.note, /list_contains/);
  assert.equal(body.truncated, false);
  assert.ok(body.values.every((v) => v.value !== null));
  const nonNull = Number((await s.ctx.engine.one(`SELECT count(BodyPartExamined) AS n FROM "index"`))!.n);
  assert.equal(
    body.values.reduce((n, v) => n + v.count, 0),
    nonNull,
  );
});

test('any column of index is accepted and values keep their JSON type; ties are ordered by value', async () => {
  const body = await json<{ values: { value: unknown; count: number }[]; note: string }>('/v3/attributes/instanceCount/values?limit=50');
  assert.ok(body.values.length > 0);
  for (const v of body.values) assert.equal(typeof v.value, 'number');
  for (let i = 1; i < body.values.length; i++) {
    const a = body.values[i - 1]!;
    const b = body.values[i]!;
    assert.ok(a.count > b.count || (a.count === b.count && Number(a.value) < Number(b.value)), `order at ${i}`);
  }
  const desc = await json<{ attribute: string; note: string; values: unknown[] }>('/v3/attributes/SeriesDescription/values?limit=3');
  assert.equal(desc.attribute, 'SeriesDescription');
  assert.equal(desc.note, '');
  assert.ok(desc.values.length > 0);
});

test('limit above the cap is lowered to it with a warning; below 1 or not an integer is a 422 naming limit', async () => {
  const cap = s.ctx.config.valuesLimitCap;
  const want = await s.ctx.engine.rows(`SELECT Modality AS value, count(*)::INTEGER AS count FROM "index" WHERE Modality IS NOT NULL GROUP BY 1 ORDER BY count DESC, value LIMIT ${cap}`);
  const above = await json<{ values: { value: string; count: number }[]; truncated: boolean; warnings: string[] }>(`/v3/attributes/Modality/values?limit=${cap + 5}`);
  assert.deepEqual(above.values, want);
  assert.deepEqual(above.warnings, [`limit ${cap + 5} is above the cap of ${cap}; lowered to ${cap}.`]);
  const within = await json<Record<string, unknown>>('/v3/attributes/Modality/values?limit=3');
  assert.equal('warnings' in within, false);
  for (const q of ['limit=0', 'limit=abc', 'limit=-1']) {
    const body = await json<ErrorBody>(`/v3/attributes/Modality/values?${q}`, 422);
    assert.equal(body.error.code, 'invalid_request');
    assert.match(body.error.message, /limit/, q);
  }
  const unknownParam = await json<ErrorBody>('/v3/attributes/Modality/values?limt=3', 422);
  assert.match(unknownParam.error.message, /limt/);
  assert.match(unknownParam.error.message, /limit/);
});

test('an unknown attribute is a 400 naming it and suggesting the closest columns', async () => {
  const lower = await json<ErrorBody>('/v3/attributes/modality/values', 400);
  assert.equal(lower.error.code, 'invalid_query');
  assert.match(lower.error.message, /'modality'/);
  assert.match(lower.error.message, /Did you mean 'Modality'/);

  const nope = await json<ErrorBody>('/v3/attributes/NoSuchColumn/values', 400);
  assert.equal(nope.error.code, 'invalid_query');
  assert.match(nope.error.message, /'NoSuchColumn'/);
  assert.match(nope.error.message, /GET \/v3\/attributes/);
});

test('discovery routes send an ETag and answer 304 to If-None-Match', async () => {
  for (const path of ['/v3/collections', '/v3/collections/nlst', '/v3/attributes/Modality/values?limit=3']) {
    const r = await s.get(path);
    assert.equal(r.status, 200);
    const etag = r.headers.get('etag');
    assert.ok(etag, `${path} has an ETag`);
    assert.match(r.headers.get('cache-control') ?? '', /max-age=\d+/);
    await r.arrayBuffer();
    const again = await s.get(path, { 'if-none-match': etag });
    assert.equal(again.status, 304, path);
    assert.equal((await again.text()).length, 0);
  }
});

test('declared OpenAPI examples of the discovery routes answer what independent SQL says', async () => {
  const doc = await json<{ paths: Record<string, { get?: { parameters?: { name: string; in: string; example?: unknown }[] } }> }>('/v3/openapi.json');
  for (const path of ['/v3/collections/{collection_id}', '/v3/attributes/{attribute}/values']) {
    const params = doc.paths[path]!.get!.parameters ?? [];
    let url = path;
    const query: string[] = [];
    for (const p of params) {
      assert.ok(p.example !== undefined, `${path} ${p.name} declares an example`);
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
      else query.push(`${p.name}=${encodeURIComponent(String(p.example))}`);
    }
    const target = url + (query.length ? `?${query.join('&')}` : '');
    const r = await s.get(target);
    const text = await r.text();
    assert.equal(r.status, 200, `${url}: ${text}`);
    await V3_EXAMPLE_CHECKS[`get ${path}`]!(s.ctx.engine, { url: new URL(target, s.url), body: undefined, json: JSON.parse(text), text });
  }
});
