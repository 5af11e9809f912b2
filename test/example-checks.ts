// What the declared OpenAPI example of each /v3 operation must answer, each
// checked against SQL written here on the served database (never against
// the service's own code). The example tests call every declared example and
// look its operation up here: an operation without a check fails them.

import assert from 'node:assert/strict';
import type { Engine } from '../src/core/engine/engine.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ExampleCall {
  /** The request as sent: path with its parameters filled in, and the query string. */
  url: URL;
  body: Json | undefined;
  /** The answer: parsed JSON, or the text of a text/plain body. */
  json: Json;
  text: string;
}

type Check = (engine: Engine, call: ExampleCall) => Promise<void>;

const ids = (rows: Json[], key: string) => rows.map((r) => r[key]);

/** The WHERE clause of a {terms} filter, written independently of the filter compiler. */
function where(filter: Json | undefined): { sql: string; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  for (const [attr, values] of Object.entries((filter?.terms ?? {}) as Record<string, string[]>)) {
    assert.match(attr, /^[A-Za-z_]+$/);
    clauses.push(`"${attr}" IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  }
  assert.deepEqual(Object.keys(filter?.ranges ?? {}), [], 'the examples filter with terms only');
  return { sql: clauses.length ? clauses.join(' AND ') : 'TRUE', params };
}

async function seriesOf(engine: Engine, filter: Json | undefined): Promise<number> {
  const w = where(filter);
  return Number((await engine.one(`SELECT count(*) AS n FROM "index" WHERE ${w.sql}`, w.params))!.n);
}

const lastSegment = (url: URL, fromEnd = 0) => decodeURIComponent(url.pathname.split('/').at(-1 - fromEnd)!);

export const V3_EXAMPLE_CHECKS: Record<string, Check> = {
  'get /v3': async (_e, { json }) => {
    assert.equal(json.name, 'IDQS');
    assert.equal(json.docs, '/v3/docs');
  },
  'get /v3/health': async (_e, { json }) => assert.deepEqual(json, { status: 'ok' }),
  'get /v3/ready': async (e, { json }) => {
    assert.equal(json.status, 'ready');
    assert.equal(json.checks.database, 'ok');
    assert.deepEqual(Object.keys(json.checks.budgets).sort(), ['curated', 'exports', 'facets', 'sql']);
    // The database it says is readable answers.
    assert.ok(Number((await e.one('SELECT count(*) AS n FROM "index"'))!.n) > 0);
  },
  'get /v3/version': async (e, { json }) => {
    const meta = JSON.parse(String((await e.one(`SELECT value FROM idqs_meta.dataset WHERE key = 'metadata'`))!.value)) as Json;
    assert.equal(json.idc_version, meta.release);
    assert.equal(json.idc_index_data_version, meta.index_version);
  },
  'get /v3/releases': async (e, { json }) => {
    // One database served: one release, the default, with that database's identity and totals.
    const get = async (k: string) => String((await e.one(`SELECT value FROM idqs_meta.dataset WHERE key = ?`, [k]))!.value);
    const meta = JSON.parse(await get('metadata')) as Json;
    const r = (await e.one(`SELECT count(*) AS series, count(DISTINCT PatientID) AS patients FROM "index"`))!;
    assert.equal(json.releases.length, 1);
    const [one] = json.releases as Json[];
    assert.deepEqual(
      [one!.release, one!.idc_version, one!.dataset_identity, one!.default, one!.series, one!.patients],
      [meta.index_version, meta.release, await get('identity'), true, Number(r.series), Number(r.patients)],
    );
  },
  'get /v3/stats': async (e, { json }) => {
    const r = (await e.one(`SELECT count(*) AS series, count(DISTINCT PatientID) AS patients FROM "index"`))!;
    assert.deepEqual([json.series, json.patients], [Number(r.series), Number(r.patients)]);
  },
  'get /v3/collections': async (e, { json }) => {
    assert.deepEqual(ids(json as Json[], 'collection_id'), ids(await e.rows('SELECT collection_id FROM collections_index ORDER BY 1'), 'collection_id'));
  },
  'get /v3/collections/{collection_id}': async (e, { url, json }) => {
    const id = lastSegment(url);
    const r = (await e.one(`SELECT count(*) AS n, list(DISTINCT Modality ORDER BY Modality) AS m FROM "index" WHERE collection_id = ?`, [id]))!;
    assert.equal(json.collection_id, id);
    assert.equal(json.series, Number(r.n));
    assert.deepEqual(json.modalities, r.m);
  },
  'get /v3/analysis_results': async (e, { json }) => {
    assert.deepEqual(ids(json as Json[], 'analysis_result_id'), ids(await e.rows('SELECT analysis_result_id FROM analysis_results_index ORDER BY 1'), 'analysis_result_id'));
  },
  'get /v3/attributes': async (_e, { json }) => {
    assert.equal((json as Json[]).filter((a) => a.table === 'index').length, 19);
    assert.equal((json as Json[]).filter((a) => a.table === 'collections_index').length, 4);
    assert.ok((json as Json[]).some((a) => a.name === 'Modality' && a.kind === 'term'));
  },
  'get /v3/attributes/{attribute}/values': async (e, { url, json }) => {
    const attr = lastSegment(url, 1);
    const limit = Number(url.searchParams.get('limit'));
    assert.match(attr, /^[A-Za-z_]+$/);
    const all = await e.rows(`SELECT "${attr}" AS value, count(*) AS count FROM "index" WHERE "${attr}" IS NOT NULL GROUP BY 1 ORDER BY count DESC, value`);
    assert.deepEqual(
      json.values.map((v: Json) => [v.value, v.count]),
      all.slice(0, limit).map((r) => [r.value, Number(r.count)]),
    );
    assert.equal(json.truncated, all.length > limit);
  },
  'get /v3/tables': async (e, { json }) => {
    const tables = await e.rows(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1`);
    assert.deepEqual(json.tables.map((t: Json) => t.name).sort(), ids(tables, 'table_name'));
  },
  'get /v3/tables/{table}': async (e, { url, json }) => {
    const cols = await e.rows(`SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position`, [lastSegment(url)]);
    assert.deepEqual(ids(json.columns, 'name'), ids(cols, 'column_name'));
  },
  'get /v3/clinical/tables': async (e, { url, json }) => {
    const collection = url.searchParams.get('collection_id');
    const rows = await e.rows(
      `SELECT DISTINCT short_table_name FROM clinical_index WHERE collection_id = ?
         AND short_table_name IN (SELECT table_name FROM information_schema.tables WHERE table_schema = 'clinical') ORDER BY 1`,
      [collection],
    );
    assert.ok(rows.length > 0, `the example collection ${collection} has clinical tables`);
    assert.deepEqual(json.tables.map((t: Json) => t.table_name).sort(), ids(rows, 'short_table_name'));
  },
  'get /v3/clinical/tables/{table}': async (e, { url, json }) => {
    const table = lastSegment(url);
    const cols = await e.rows(`SELECT column_name FROM information_schema.columns WHERE table_schema = 'clinical' AND table_name = ? ORDER BY ordinal_position`, [table]);
    assert.equal(json.name, `clinical.${table}`);
    assert.deepEqual(ids(json.columns, 'name'), ids(cols, 'column_name'));
  },
  'get /v3/clinical/tables/{table}/rows': async (e, { url, json }) => {
    const table = lastSegment(url, 1);
    const maxRows = Number(url.searchParams.get('max_rows'));
    assert.match(table, /^[A-Za-z0-9_]+$/);
    const n = Number((await e.one(`SELECT count(*) AS n FROM clinical."${table}"`))!.n);
    assert.deepEqual([json.row_count, json.truncated], [Math.min(n, maxRows), n > maxRows]);
  },
  'post /v3/cohort/counts': async (e, { body, json }) => {
    assert.equal(json.series, await seriesOf(e, body!.filters ?? body));
  },
  'post /v3/cohort/manifest': async (e, { body, json }) => {
    const total = await seriesOf(e, body!.filters);
    assert.equal(json.total_series, total);
    assert.equal(json.series.length, Math.min(body!.page_size, total));
  },
  'post /v3/cohort/manifest.txt': async (e, { body, text }) => {
    const w = where(body!.filters);
    const urls = await e.rows(
      `SELECT series_cloud1_url AS u FROM "index" WHERE ${w.sql} ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID LIMIT ?`,
      [...w.params, body!.limit],
    );
    assert.equal(body!.source, 'cloud1', 'the example lists the primary store, whose URLs are the index column');
    // URLs only, one per line; a cut list says so in its headers (checked by the route's tests).
    assert.deepEqual(text.split('\n').filter(Boolean), ids(urls, 'u'));
  },
  'post /v3/cohort/facets': async (e, { body, json }) => {
    // Each value's count excludes the attribute's own filter: Modality counts patients under collection_id and instanceCount only.
    const ranges = body!.filters.ranges as Record<string, { gte?: number }>;
    assert.deepEqual(Object.keys(ranges), ['instanceCount']);
    const others = where({ terms: { collection_id: body!.filters.terms.collection_id } });
    const want = await e.rows(
      `SELECT Modality AS value, count(DISTINCT PatientID) AS n FROM "index" WHERE ${others.sql} AND instanceCount >= ? AND Modality IS NOT NULL GROUP BY 1 ORDER BY n DESC, value`,
      [...others.params, ranges.instanceCount!.gte!],
    );
    const got = json.facets.Modality.values as Json[];
    assert.ok(want.length > 0, 'the example selects patients');
    for (const w of want) assert.equal(got.find((v) => v.value === w.value)?.count, Number(w.n), `Modality ${w.value}`);
    const all = where({ terms: body!.filters.terms });
    const totals = (await e.one(`SELECT count(*) AS series, count(DISTINCT PatientID) AS patients FROM "index" WHERE ${all.sql} AND instanceCount >= ?`, [...all.params, ranges.instanceCount!.gte!]))!;
    assert.deepEqual([json.totals.series, json.totals.patients], [Number(totals.series), Number(totals.patients)]);
  },
  'post /v3/cohort/table': async (e, { body, json }) => {
    assert.equal(body!.level, 'studies');
    const w = where(body!.filters);
    const rows = await e.rows(
      `SELECT StudyInstanceUID, count(*) AS series FROM "index" WHERE ${w.sql} GROUP BY collection_id, PatientID, StudyInstanceUID
       ORDER BY series DESC, collection_id, PatientID, StudyInstanceUID LIMIT ?`,
      [...w.params, body!.page_size],
    );
    assert.deepEqual(json.rows.map((r: Json) => [r.StudyInstanceUID, r.series]), rows.map((r) => [r.StudyInstanceUID, Number(r.series)]));
  },
  'post /v3/series/lookup': async (e, { body, json }) => {
    const rows = await e.rows(`SELECT SeriesInstanceUID FROM "index" WHERE crdc_series_uuid = ?`, [body!.crdc_series_uuid[0]]);
    assert.ok(rows.length > 0, 'the example is a series of the served data');
    assert.deepEqual(ids(json.series, 'SeriesInstanceUID'), ids(rows, 'SeriesInstanceUID'));
    assert.deepEqual(json.missing, []);
  },
  'post /v3/series/resolve': async (e, { body, json }) => {
    const lines = String(body!.text).split('\n');
    const uuid = /s3:\/\/[^/]+\/([0-9a-f-]{36})\//.exec(lines[1]!)![1];
    const row = (await e.one(`SELECT SeriesInstanceUID, crdc_series_uuid FROM "index" WHERE crdc_series_uuid = ?`, [uuid!]))!;
    assert.deepEqual(json.totals, { lines: 3, blank: 0, comments: 1, header: 0, current: 1, revised: 0, removed: 0, unknown: 0, invalid: 1 });
    assert.deepEqual([json.lines[0].line, json.lines[0].class, json.lines[0].SeriesInstanceUID, json.lines[0].current.crdc_series_uuid], [2, 'current', row.SeriesInstanceUID, uuid]);
    assert.deepEqual([json.lines[1].line, json.lines[1].class], [3, 'invalid']);
  },
  'post /v3/cohort/changes': async (e, { body, json }) => {
    const w = where(body!.filters);
    const from = Number(String(body!.from).replace('v', ''));
    // The series each release served, as sets written here: index rows revised by then, prior versions whose range covers it.
    const r = (await e.one(
      `WITH a AS (SELECT SeriesInstanceUID AS s, crdc_series_uuid AS u FROM "index" WHERE ${w.sql} AND series_revised_idc_version <= ${from}
                  UNION SELECT SeriesInstanceUID, crdc_series_uuid FROM prior_versions_index WHERE ${w.sql} AND min_idc_version <= ${from} AND max_idc_version >= ${from}),
            b AS (SELECT SeriesInstanceUID AS s, crdc_series_uuid AS u FROM "index" WHERE ${w.sql})
       SELECT (SELECT count(*) FROM b WHERE s NOT IN (SELECT s FROM a)) AS added, (SELECT count(DISTINCT s) FROM a WHERE s NOT IN (SELECT s FROM b)) AS removed,
              (SELECT count(*) FROM b JOIN a USING (s) WHERE a.u <> b.u) AS revised`,
      [...w.params, ...w.params, ...w.params],
    ))!;
    assert.deepEqual([json.counts.added.series, json.counts.removed.series, json.counts.revised.series], [Number(r.added), Number(r.removed), Number(r.revised)]);
    assert.equal(json.returned, Math.min(body!.limit, Number(r.added) + Number(r.removed) + Number(r.revised)));
  },
  'post /v3/sql': async (e, { body, json }) => {
    const all = await e.rows(String(body!.sql).replace(/\bindex\b/, '"index"'));
    assert.deepEqual(ids(json.rows, 'n'), ids(all.slice(0, body!.max_rows), 'n'));
  },
  'get /v3/viewer-url': async (e, { url, json }) => {
    const study = (await e.one(`SELECT StudyInstanceUID FROM "index" WHERE SeriesInstanceUID = ?`, [url.searchParams.get('series_instance_uid')]))!;
    assert.equal(json.study_instance_uid, study.StudyInstanceUID);
    assert.ok(String(json.viewer_url).includes(encodeURIComponent(String(study.StudyInstanceUID))));
  },
  'post /v3/citations': async (e, { body, json }) => {
    const w = where(body!.filters);
    const dois = await e.rows(`SELECT DISTINCT source_DOI AS d FROM "index" WHERE ${w.sql} AND source_DOI IS NOT NULL ORDER BY 1`, w.params);
    assert.deepEqual(json.dois, ids(dois, 'd'));
    assert.equal(json.citations.length, dois.length);
  },
  'post /v3/licenses': async (e, { body, json }) => {
    const total = json.licenses.reduce((s: number, l: Json) => s + l.series, 0);
    assert.equal(total, await seriesOf(e, body!.filters ?? body));
  },
};

/** The series of the nextPage examples: the page after the first two SeriesInstanceUIDs, as long as the page size asked. */
async function nextSeries(e: Engine, json: Json, pageSize: number): Promise<void> {
  const want = await e.rows(`SELECT DISTINCT SeriesInstanceUID AS s FROM v2.dicom_series ORDER BY 1 LIMIT ? OFFSET 2`, [pageSize]);
  assert.deepEqual(
    json.manifest.manifest_data.map((r: Json) => r.SeriesInstanceUID),
    ids(want, 's'),
  );
}

/** The /v2 examples; the nextPage ones carry the token of a first page of two SeriesInstanceUIDs. */
export const V2_EXAMPLE_CHECKS: Record<string, Check> = {
  'get /v2/about': async (_e, { json }) => assert.match(json.documentation, /\/v2\/swagger\//),
  'get /v2/versions': async (e, { json }) => {
    assert.equal(json.versions.length, Number((await e.one('SELECT count(*) AS n FROM version_metadata_index'))!.n));
  },
  'get /v2/collections': async (e, { json }) => {
    assert.deepEqual(ids(json.collections, 'collection_id'), ids(await e.rows('SELECT collection_id FROM collections_index ORDER BY 1'), 'collection_id'));
  },
  'get /v2/analysis_results': async (e, { json }) => {
    assert.deepEqual(
      ids(json.analysisResults, 'analysis_result_id').sort(),
      ids(await e.rows('SELECT analysis_result_id FROM analysis_results_index ORDER BY 1'), 'analysis_result_id'),
    );
  },
  'get /v2/filters': async (_e, { json }) => {
    const names = json.data_sources.flatMap((d: Json) => d.filters.map((f: Json) => f.name));
    for (const n of ['collection_id', 'Modality', 'SliceThickness_gte']) assert.ok(names.includes(n), n);
  },
  'get /v2/filters/values/{filter}': async (e, { url, json }) => {
    assert.equal(lastSegment(url), 'Modality');
    const mods = await e.rows(`SELECT DISTINCT Modality AS m FROM "index" WHERE Modality IS NOT NULL ORDER BY 1`);
    assert.deepEqual(json.values.filter((v: unknown) => v !== null), ids(mods, 'm'));
  },
  'get /v2/fields': async (e, { json }) => {
    const meta = JSON.parse(String((await e.one(`SELECT value FROM idqs_meta.dataset WHERE key = 'metadata'`))!.value)) as Json;
    assert.equal(json.idc_data_version, `${String(meta.release).replace(/^v/, '')}.0`);
    assert.ok(json.data_sources.some((d: Json) => d.fields.includes('SeriesInstanceUID')));
  },
  'get /v2/fields/{version}': async (e, call) => V2_EXAMPLE_CHECKS['get /v2/fields']!(e, call),
  'post /v2/cohorts/manifest/preview': async (e, { body, json }) => {
    const f = body!.cohort_def.filters as Record<string, string[]>;
    assert.deepEqual(Object.keys(f), ['collection_id', 'Modality']);
    // collection_id is normalized (TCGA-LUAD → tcga_luad); strings match in any casing.
    const r = (await e.one(
      `SELECT count(*) AS n FROM (SELECT DISTINCT collection_id, PatientID, StudyInstanceUID FROM "index"
       WHERE collection_id = lower(replace(?, '-', '_')) AND lower(Modality) = lower(?))`,
      [f.collection_id![0]!, f.Modality![0]!],
    ))!;
    assert.equal(json.manifest.totalFound, Number(r.n));
    assert.equal(json.manifest.rowsReturned, Math.min(body!.page_size, Number(r.n)));
  },
  'post /v2/cohorts/manifest/preview/nextPage': async (e, { body, json }) => nextSeries(e, json, body!.page_size),
  'get /v2/cohorts/manifest/preview/nextPage': async (e, { url, json }) => nextSeries(e, json, Number(url.searchParams.get('page_size') ?? 2)),
};
