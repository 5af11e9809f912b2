// /v2 discovery routes against the test database: shapes of the earlier
// interface, values checked against independent SQL.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, withoutRequestId, type TestServer } from './fixture.ts';
import { V2_EXAMPLE_CHECKS } from './example-checks.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.close();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function json(path: string, status = 200): Promise<Json> {
  const r = await s.get(path);
  const body = (await r.json()) as Json;
  assert.equal(r.status, status, `${path}: ${JSON.stringify(body)}`);
  assert.equal(body.code, status, 'the envelope mirrors the status');
  return body;
}

test('versions: "N.0" in order, one per release, exactly one active (the current)', async () => {
  const { versions } = await json('/v2/versions');
  const rows = await s.ctx.engine.rows('SELECT idc_version AS v FROM version_metadata_index ORDER BY 1');
  assert.deepEqual(
    versions.map((v: Json) => v.idc_data_version),
    rows.map((r) => `${r.v}.0`),
  );
  const active = versions.filter((v: Json) => v.active === true);
  assert.equal(active.length, 1);
  assert.equal(active[0].idc_data_version, `${s.ctx.dataset.release.replace(/^v/, '')}.0`);
  assert.equal(versions.at(-1).active, true);
  for (const v of versions) assert.match(v.date_active, /^\d{4}-\d{2}-\d{2}$/);
  const dates = versions.map((v: Json) => v.date_active);
  assert.deepEqual([...dates].sort(), dates, 'releases are dated in order');
});

test('collections: every original collection, sorted, with the record fields and image types from the series', async () => {
  const { collections } = await json('/v2/collections');
  const ids = (await s.ctx.engine.rows('SELECT collection_id FROM collections_index ORDER BY 1')).map((r) => r.collection_id);
  assert.deepEqual(
    collections.map((c: Json) => c.collection_id),
    ids,
  );
  const keys = ['cancer_type', 'collection_id', 'date_updated', 'description', 'doi', 'image_types', 'location', 'species', 'subject_count', 'supporting_data', 'source_doi', 'source_url'];
  for (const c of collections) {
    assert.deepEqual(Object.keys(c).sort(), [...keys].sort());
    assert.ok(Number.isInteger(c.subject_count), `${c.collection_id}: subject_count is an integer`);
  }
  const nlst = collections.find((c: Json) => c.collection_id === 'nlst');
  const mods = await s.ctx.engine.rows(`SELECT DISTINCT Modality AS m FROM "index" WHERE collection_id = 'nlst' ORDER BY 1`);
  assert.equal(nlst.image_types, mods.map((r) => r.m).join(', '));
  const subjects = await s.ctx.engine.one(`SELECT subjects FROM collections_index WHERE collection_id = 'nlst'`);
  assert.equal(nlst.subject_count, Number(subjects!.subjects));
  assert.match(nlst.source_url, /^https:\/\/doi\.org\//);
  assert.ok(nlst.source_doi.split(' ').includes(nlst.doi));
});

test('analysis_results: every analysis result with its artifacts, collections and DOI', async () => {
  const { analysisResults } = await json('/v2/analysis_results');
  const rows = await s.ctx.engine.rows('SELECT analysis_result_id AS id, modalities, source_DOI FROM analysis_results_index ORDER BY 1');
  assert.equal(analysisResults.length, rows.length);
  for (const r of rows) {
    const a = analysisResults.find((x: Json) => x.analysis_result_id === r.id);
    assert.ok(a, String(r.id));
    assert.equal(a.analysisArtifacts, r.modalities);
    assert.equal(a.doi, r.source_DOI);
    assert.ok(Number.isInteger(a.subjects));
  }
});

test('filters: 157 names over three sources; each ranged attribute with its nine suffixes; the spec labels', async () => {
  const { data_sources } = await json('/v2/filters');
  assert.deepEqual(
    data_sources.map((d: Json) => d.data_source),
    ['v2.tcga_biospecimen_rel9', 'v2.tcga_clinical_rel9', 'v2.dicom_pivot'],
  );
  const all = data_sources.flatMap((d: Json) => d.filters);
  assert.equal(all.length, 157);
  const labels = new Set(all.map((f: Json) => f.data_type));
  assert.deepEqual([...labels].sort(), ['Categorical Numeric', 'Categorical String', 'Ranged Integer', 'Ranged Number', 'String']);
  for (const f of all) assert.deepEqual(Object.keys(f).sort(), ['data_type', 'name', 'units']);
  const ranged = all.filter((f: Json) => f.data_type.startsWith('Ranged'));
  const bases = new Set(ranged.map((f: Json) => f.name.replace(/_[a-z]+$/, '')));
  assert.equal(bases.size, 12);
  for (const b of bases) {
    assert.deepEqual(
      ranged.filter((f: Json) => f.name.startsWith(`${b}_`) && f.name.slice(String(b).length + 1).match(/^[a-z]+$/)).map((f: Json) => f.name.slice(String(b).length + 1)),
      ['btw', 'ebtw', 'btwe', 'ebtwe', 'gte', 'lte', 'gt', 'lt', 'eq'],
    );
  }
  const byName = new Map(all.map((f: Json) => [f.name, f.data_type]));
  assert.equal(byName.get('Modality'), 'Categorical String');
  assert.equal(byName.get('PatientID'), 'String');
  assert.equal(byName.get('ObjectiveLensPower'), 'Categorical Numeric');
  assert.equal(byName.get('age_at_diagnosis_eq'), 'Ranged Integer');
  assert.equal(byName.get('SliceThickness_btw'), 'Ranged Number');
});

test('filters/values: name in any casing; distinct values null first; numbers for Categorical Numeric', async () => {
  const { values } = await json('/v2/filters/values/mODALITY');
  const expected = await s.ctx.engine.rows('SELECT DISTINCT Modality AS v FROM v2.dicom_pivot ORDER BY v NULLS FIRST');
  assert.deepEqual(
    values,
    expected.map((r) => r.v),
  );
  const race = (await json('/v2/filters/values/race')).values;
  const raceSql = await s.ctx.engine.rows('SELECT DISTINCT race AS v FROM v2.tcga_clinical_rel9 ORDER BY v NULLS FIRST');
  assert.deepEqual(
    race,
    raceSql.map((r) => r.v),
  );
  assert.equal(race[0], null, 'a missing value is listed first');
  const power = (await json('/v2/filters/values/ObjectiveLensPower')).values;
  assert.ok(power.length > 0 && power.every((v: unknown) => v === null || typeof v === 'number'));
});

test('filters/values errors: unknown, ranged and String filters are 400 with the public messages', async () => {
  assert.equal((await json('/v2/filters/values/no_such_filter', 400)).message, 'Invalid filter ID');
  assert.equal((await json('/v2/filters/values/Volume_eq', 400)).message, 'Filter data type is Ranged Number not Categorical String or Categorical Numeric');
  assert.equal((await json('/v2/filters/values/age_at_diagnosis_eq', 400)).message, 'Filter data type is Ranged Integer not Categorical String or Categorical Numeric');
  assert.equal((await json('/v2/filters/values/PatientID', 400)).message, 'Filter data type is String not Categorical String or Categorical Numeric');
  // A ranged attribute is only found with a suffix.
  assert.equal((await json('/v2/filters/values/Volume', 400)).message, 'Invalid filter ID');
});

test('fields: /fields, /fields/current and /fields/<current> agree; 73 distinct names; unknown versions are 400', async () => {
  const a = await json('/v2/fields');
  const b = await json('/v2/fields/current');
  const current = a.idc_data_version;
  const c = await json(`/v2/fields/${current}`);
  assert.deepEqual(a, b);
  assert.deepEqual(a, c);
  const names = a.data_sources.flatMap((d: Json) => d.fields);
  assert.equal(new Set(names).size, 73);
  for (const d of a.data_sources) {
    assert.deepEqual(d.fields, [...d.fields].sort((x: string, y: string) => x.toLowerCase().localeCompare(y.toLowerCase())));
  }
  assert.ok(names.includes('cloud1_url') && names.includes('cloud2_url'));
  for (const bad of ['14', 'foo', '99.0']) {
    assert.equal(
      (await json(`/v2/fields/${bad}`, 400)).message,
      `Supplied idc_data_version '${bad}' is invalid. Query the /versions endpoint for defined versions.`,
    );
  }
  // An older version answers too (with the fields this service knows).
  assert.equal((await json('/v2/fields/1.0')).idc_data_version, '1.0');
});

test('about, swagger and the two OpenAPI documents: each lists only its own interface', async () => {
  const about = await json('/v2/about');
  assert.match(about.message, /NCI IDC API/);
  assert.match(about.documentation, /\/v2\/swagger\//);
  const ui = await s.get('/v2/swagger');
  assert.equal(ui.status, 200);
  assert.match(await ui.text(), /swagger-ui/i);
  const v2 = (await (await s.get('/v2/openapi.json')).json()) as Json;
  const v2paths = Object.keys(v2.paths);
  assert.ok(v2paths.includes('/v2/cohorts/manifest/preview'));
  assert.ok(v2paths.includes('/v2/filters/values/{filter}'));
  assert.ok(v2paths.every((p) => p.startsWith('/v2/')), v2paths.join(' '));
  const v3 = (await (await s.get('/v3/openapi.json')).json()) as Json;
  assert.ok(Object.keys(v3.paths).every((p) => p.startsWith('/v3')), 'no /v2 route in the /v3 document');
  for (const [path, ops] of Object.entries(v2.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) {
      assert.ok(op.summary && op.description, `${method} ${path} has a summary and a description`);
    }
  }
});

test('errors keep the /v2 envelope: unknown route, wrong method, malformed JSON, wrong content type', async () => {
  assert.deepEqual(withoutRequestId(await json('/v2/nothing/here', 404)), { code: 404, message: 'Method does not exist.' });
  const r405 = await s.post('/v2/versions', {});
  assert.equal(r405.status, 405);
  assert.equal(((await r405.json()) as Json).code, 405);
  const bad = await s.post('/v2/cohorts/manifest/preview', '{"cohort_def": ');
  assert.equal(bad.status, 400);
  assert.deepEqual(withoutRequestId(await bad.json()), { code: 400, message: 'The browser (or proxy) sent a request that this server could not understand.' });
  const text = await fetch(`${s.url}/v2/cohorts/manifest/preview`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
  assert.equal(text.status, 415);
  assert.equal(((await text.json()) as Json).code, 415);
  // The /v3 envelope is unchanged.
  const v3 = await s.get('/v3/nothing');
  assert.equal(((await v3.json()) as Json).error.code, 'not_found');
});

test('discovery answers are cacheable: ETag and 304', async () => {
  const r = await s.get('/v2/filters');
  const etag = r.headers.get('etag');
  assert.ok(etag);
  assert.equal(((await r.json()) as Json).code, 200);
  const again = await s.get('/v2/filters', { 'if-none-match': etag });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
});

test('a database without the /v2 tables answers from its index at series level and above; instance and TCGA names are a 400 saying why', async () => {
  const other = await startServer();
  try {
    other.ctx.catalog.v2Tables = [];
    const r = await other.post('/v2/cohorts/manifest/preview', { cohort_def: { filters: { Modality: ['CT'] } }, fields: ['PatientID'], counts: true, page_size: 5000 });
    const j = (await r.json()) as Json;
    assert.equal(r.status, 200, JSON.stringify(j).slice(0, 300));
    const want = await s.ctx.engine.rows(
      `SELECT PatientID, sum(instanceCount)::BIGINT AS instance_count, count(*)::BIGINT AS series_count, count(DISTINCT StudyInstanceUID)::BIGINT AS study_count
       FROM "index" WHERE Modality = 'CT' GROUP BY 1 ORDER BY 1 NULLS FIRST`,
    );
    assert.ok(want.length > 0);
    assert.deepEqual(j.manifest.manifest_data, want.map((w) => ({ ...w, instance_count: Number(w.instance_count), series_count: Number(w.series_count), study_count: Number(w.study_count) })));
    for (const [body, name] of [
      [{ cohort_def: {}, fields: ['SOPInstanceUID'] }, 'SOPInstanceUID'],
      [{ cohort_def: { filters: { race: ['WHITE'] } }, fields: ['PatientID'] }, 'race'],
    ] as const) {
      const bad = await other.post('/v2/cohorts/manifest/preview', body);
      const e = (await bad.json()) as Json;
      assert.equal(bad.status, 400);
      assert.match(e.message, new RegExp(`^${name} is a valid (field|filter), but this server cannot answer it: `));
    }
    // Discovery lists what this database answers: no TCGA sources, no instance fields.
    const fields = ((await (await other.get('/v2/fields')).json()) as Json).data_sources as { data_source: string; fields: string[] }[];
    assert.deepEqual(fields.map((d) => d.data_source), ['v2.dicom_pivot']);
    assert.ok(!fields[0]!.fields.includes('SOPInstanceUID') && fields[0]!.fields.includes('SeriesInstanceUID'));
    const filters = ((await (await other.get('/v2/filters')).json()) as Json).data_sources as { data_source: string }[];
    assert.deepEqual(filters.map((d) => d.data_source), ['v2.dicom_pivot']);
    const collections = await other.get('/v2/collections');
    assert.equal(collections.status, 200);
    const ids = (await s.ctx.engine.rows('SELECT collection_id FROM collections_index ORDER BY 1')).map((row) => row.collection_id);
    assert.deepEqual(((await collections.json()) as Json).collections.map((c: Json) => c.collection_id), ids);
  } finally {
    await other.close();
  }
});

test('every operation of the /v2 document declares V2Error for its errors, and its examples answer what independent SQL says', async () => {
  type Op = {
    parameters?: { name: string; in: string; required?: boolean; example?: unknown; schema?: { examples?: unknown[] } }[];
    requestBody?: { content: Record<string, { example?: unknown; schema?: { examples?: unknown[] } }> };
    responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  };
  const doc = (await (await s.get('/v2/openapi.json')).json()) as { paths: Record<string, Record<string, Op>> };
  // A real token for the nextPage examples.
  const first = (await (await s.post('/v2/cohorts/manifest/preview', { cohort_def: {}, fields: ['SeriesInstanceUID'], page_size: 2 })).json()) as Json;
  let fired = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [code, r] of Object.entries(op.responses)) {
        if (Number(code) >= 400) assert.equal(r.content?.['application/json']?.schema?.$ref, '#/components/schemas/V2Error', `${method} ${path} ${code}`);
      }
      let url = path;
      const query = new URLSearchParams();
      for (const p of op.parameters ?? []) {
        const ex = p.name === 'next_page' ? first.next_page : (p.example ?? p.schema?.examples?.[0]);
        if (ex === undefined) {
          assert.ok(!p.required, `${method} ${path}: required ${p.name} has an example`);
          continue;
        }
        if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(ex)));
        else query.set(p.name, String(ex));
      }
      const qs = query.size ? `?${query}` : '';
      let r: Response;
      let body: Json | undefined;
      if (method === 'post') {
        const media = op.requestBody?.content['application/json'];
        const ex = (media?.example ?? media?.schema?.examples?.[0]) as Json | undefined;
        assert.ok(ex, `${method} ${path} has a body example`);
        body = path.endsWith('nextPage') ? { ...ex, next_page: first.next_page } : ex;
        r = await s.post(url, body);
      } else {
        r = await s.get(url + qs);
      }
      const text = await r.text();
      assert.equal(r.status, 200, `${method} ${path}${qs} -> ${r.status} ${text.slice(0, 300)}`);
      const json = JSON.parse(text) as Json;
      assert.equal(json.code, 200);
      const check = V2_EXAMPLE_CHECKS[`${method} ${path}`];
      assert.ok(check, `${method} ${path} has a check in test/example-checks.ts`);
      await check(s.ctx.engine, { url: new URL(url + qs, s.url), body, json, text });
      fired++;
    }
  }
  assert.equal(fired, Object.keys(V2_EXAMPLE_CHECKS).length, 'every check ran');
});
