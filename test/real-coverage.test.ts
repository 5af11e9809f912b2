// Every capability on the pinned real release (test/real-release.json): each
// /v3 and /v2 route of the served OpenAPI documents, each tool a real MCP
// client lists, each command of `idqs --help`, and each call of the web
// explorer's API client (web/src) has a case in the tables below, run here on
// the real release and checked against SQL written here over the release's
// Parquet files (or, where the release has no data, against the documented
// refusal). A route, tool, command or explorer call without a case fails with
// its name, so a new one cannot go unchecked. One server, one MCP client; the
// CLI commands run as real processes, offline.

import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defaultCacheDir } from '../src/config.ts';
import { lit } from '../src/core/data/sql.ts';
import type { EnsuredRelease } from '../src/core/release/fetch.ts';
import { jsonReads, sqlReads, type Row } from './real-reads.ts';
import { startServer, type TestServer } from './fixture.ts';
import { PIN, pinnedRelease, SKIP_REAL as skip } from './real-releases.ts';
import { events, runCli, type CliResult } from './s3.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin', 'idqs.cjs');

type Case = () => Promise<void>;

let rel: EnsuredRelease;
let s: TestServer;
let mcp: Client;
let inst: DuckDBInstance;
let raw: DuckDBConnection;
let tmp: string;
/** A collection of a few hundred to a few thousand series, and one series of it never revised. */
let coll: string;
let one: { SeriesInstanceUID: string; StudyInstanceUID: string; crdc_series_uuid: string; series_aws_url: string; Modality: string };

async function tool<T = Row>(name: string, args: Record<string, unknown> = {}, isError = false): Promise<T> {
  const r = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(Boolean(r.isError), isError, `${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  return r.structuredContent as T;
}
const { rows, scalar, list } = sqlReads(() => raw);
const { get, post } = jsonReads(() => s);
const sorted = <T>(a: T[]) => [...a].sort();
const where = () => `collection_id = ${lit(coll)}`;
const collFilter = () => ({ terms: { collection_id: [coll] } });
/** Non-empty, so an equality with SQL cannot pass on two empty answers. */
function nonEmpty<T>(xs: T[], what: string): T[] {
  assert.ok(xs.length > 0, `${what} is empty`);
  return xs;
}

before(async () => {
  if (skip) return;
  rel = await pinnedRelease();
  s = await startServer({}, rel.db);
  mcp = new Client({ name: 'real-coverage-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  inst = await DuckDBInstance.create(':memory:');
  raw = await inst.connect();
  for (const [view, file] of [['p_index', 'idc_index'], ['p_collections', 'collections_index'], ['p_analysis', 'analysis_results_index'], ['p_versions', 'version_metadata_index'], ['p_prior', 'prior_versions_index']]) {
    await raw.run(`CREATE VIEW ${view} AS SELECT * FROM read_parquet(${lit(join(rel.fetch.folder, `${file}.parquet`))})`);
  }
  // The index read once into a table: the cases' SQL would otherwise scan the file each time.
  await raw.run(`CREATE TABLE t_index AS SELECT collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, crdc_series_uuid, series_aws_url, aws_bucket, Modality,
    instanceCount, series_size_MB, license_short_name, source_DOI, series_init_idc_version, series_revised_idc_version FROM p_index`);
  await raw.run('CREATE OR REPLACE VIEW p_index AS SELECT * FROM t_index');
  coll = String((await rows(`SELECT collection_id FROM p_index GROUP BY 1 HAVING count(*) BETWEEN 300 AND 3000 ORDER BY count(*) DESC, 1 LIMIT 1`))[0]!.collection_id);
  one = (await rows(
    `SELECT SeriesInstanceUID, StudyInstanceUID, crdc_series_uuid, series_aws_url, Modality FROM p_index WHERE ${where()} AND series_init_idc_version = series_revised_idc_version
     AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM p_prior) ORDER BY SeriesInstanceUID LIMIT 1`,
  ))[0] as typeof one;
  tmp = mkdtempSync(join(tmpdir(), 'idqs-real-coverage-'));
  // The slow commands start now and run while the routes and tools are checked.
  serving = startServe();
  calibrating = cli(['data', 'calibrate', '--real', rel.fetch.folder, '--out', join(tmp, 'profile.json')]);
  generated = cli(['data', 'generate', '--out', join(tmp, 'generated'), '--scale', '0.0005', '--seed', '3', '--no-instances']);
});
after(async () => {
  serving?.child.kill('SIGKILL');
  await Promise.all([calibrating, generated]);
  await mcp?.close();
  await s?.close();
  raw?.closeSync();
  inst?.closeSync();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// ---- SQL of the answers several cases compare with ----

const countsSql = (w: string) =>
  rows(`SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series, sum(instanceCount) AS instances FROM p_index WHERE ${w}`).then((r) => {
    const x = r[0]!;
    return [Number(x.patients), Number(x.studies), Number(x.series), Number(x.instances)];
  });
const urlsSql = (w: string) => list(`SELECT series_aws_url FROM p_index WHERE ${w} ORDER BY PatientID, StudyInstanceUID, SeriesInstanceUID`);
const doisSql = (w: string) => list(`SELECT DISTINCT lower(source_DOI) FROM p_index WHERE ${w} AND source_DOI IS NOT NULL ORDER BY 1`);
const licensesSql = (w: string) => rows(`SELECT license_short_name AS l, count(*) AS n FROM p_index WHERE ${w} GROUP BY 1`).then((r) => r.map((x) => [x.l, Number(x.n)]).sort());
const modalitySql = (w: string, count: string) =>
  rows(`SELECT Modality AS value, ${count} AS n FROM p_index WHERE ${w} AND Modality IS NOT NULL GROUP BY 1 ORDER BY 1`).then((r) => r.map((x) => [x.value, Number(x.n)]));
const statsSql = async () => ({
  collections: await scalar('SELECT count(*) FROM p_collections'),
  analysis_results: await scalar('SELECT count(*) FROM p_analysis'),
  patients: await scalar('SELECT count(DISTINCT PatientID) FROM p_index'),
  studies: await scalar('SELECT count(DISTINCT StudyInstanceUID) FROM p_index'),
  series: await scalar('SELECT count(*) FROM p_index'),
  instances: await scalar('SELECT sum(instanceCount) FROM p_index'),
});
const pickStats = (x: Row) => ({ collections: x.collections, analysis_results: x.analysis_results, patients: x.patients, studies: x.studies, series: x.series, instances: x.instances });
const indexVersion = async () =>
  String((await list(`SELECT decode(value) FROM parquet_kv_metadata(${lit(join(rel.fetch.folder, 'idc_index.parquet'))}) WHERE decode(key) = 'idc_index_data_version'`))[0]).replace(/-\d+-g[0-9a-f]+$/, '');
/** The release's own files of the five tables /v3/tables serves (index is idc_index.parquet). */
const TABLE_FILES: Record<string, string> = { index: 'p_index', collections_index: 'p_collections', analysis_results_index: 'p_analysis', version_metadata_index: 'p_versions', prior_versions_index: 'p_prior' };
const fileColumns = async (table: string) => {
  const src = table === 'index' ? `read_parquet(${lit(join(rel.fetch.folder, 'idc_index.parquet'))})` : TABLE_FILES[table];
  return list(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${src})`);
};
/** The refusal every clinical route and tool gives on a release without clinical tables, naming the command that fetches them. */
const CLINICAL_REFUSAL = new RegExp(`no clinical tables[\\s\\S]*idqs data fetch --release ${PIN.release.replaceAll('.', '\\.')} --source ${PIN.source} --tables clinical fetches them`);
function assertNoClinicalFiles(): void {
  // The refusal is the right answer only because the release folder has none.
  assert.ok(!existsSync(join(rel.fetch.folder, 'clinical')) && !existsSync(join(rel.fetch.folder, 'clinical_index.parquet')), 'the release has clinical tables: the clinical cases must read them');
}

// ---- /v3 and /v2 routes (keys: METHOD path as the OpenAPI documents write them) ----

const ROUTES: Record<string, Case> = {
  'GET /v3': async () => {
    const root = await get('/v3');
    assert.equal(root.server_version, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    assert.equal(root.openapi, '/v3/openapi.json');
  },
  'GET /v3/health': async () => assert.deepEqual(await get('/v3/health'), { status: 'ok' }),
  'GET /v3/ready': async () => {
    const r = await get<{ status: string; checks: { database: string } }>('/v3/ready');
    assert.deepEqual([r.status, r.checks.database], ['ready', 'ok']);
  },
  'GET /v3/version': async () => {
    const v = await get('/v3/version');
    assert.deepEqual([v.idc_index_data_version, v.idc_version, v.synthetic], [await indexVersion(), `v${PIN.release.split('.')[0]}`, false]);
  },
  'GET /v3/stats': async () => assert.deepEqual(pickStats(await get('/v3/stats')), await statsSql()),
  'GET /v3/releases': async () => {
    const r = await get<{ releases: Row[] }>('/v3/releases');
    assert.equal(r.releases.length, 1);
    assert.deepEqual([r.releases[0]!.idc_index_data_version, r.releases[0]!.default], [await indexVersion(), true]);
    assert.deepEqual(pickStats(r.releases[0]!), await statsSql());
  },
  'GET /v3/collections': async () => {
    const c = await get<Row[]>('/v3/collections');
    assert.deepEqual(nonEmpty(c, 'collections').map((x) => x.collection_id), await list('SELECT collection_id FROM p_collections ORDER BY 1'));
    const mine = c.find((x) => x.collection_id === coll)!;
    const want = (await rows(`SELECT cancer_types, subjects FROM p_collections WHERE ${where()}`))[0]!;
    assert.deepEqual([mine.cancer_types, mine.subjects], [want.cancer_types, Number(want.subjects)]);
  },
  'GET /v3/collections/{collection_id}': async () => {
    const c = await get<Row & { modalities: string[] }>(`/v3/collections/${coll}`);
    assert.deepEqual([c.patients, c.studies, c.series], (await countsSql(where())).slice(0, 3));
    assert.deepEqual(c.modalities, await list(`SELECT DISTINCT Modality FROM p_index WHERE ${where()} AND Modality IS NOT NULL ORDER BY 1`));
    assert.match((await get<{ error: { message: string } }>('/v3/collections/no_such_collection', 404)).error.message, /not found/);
  },
  'GET /v3/analysis_results': async () => {
    const a = await get<Row[]>('/v3/analysis_results');
    assert.deepEqual(nonEmpty(a, 'analysis results').map((x) => x.analysis_result_id), await list('SELECT analysis_result_id FROM p_analysis ORDER BY 1'));
  },
  'GET /v3/attributes': async () => {
    const attrs = nonEmpty(await get<{ name: string; table: string }[]>('/v3/attributes'), 'attributes');
    const cols: Record<string, unknown[]> = { index: await fileColumns('index'), collections_index: await fileColumns('collections_index') };
    for (const a of attrs) assert.ok(cols[a.table]?.includes(a.name), `${a.name} is a column of ${a.table}`);
  },
  'GET /v3/attributes/{attribute}/values': async () => {
    const v = await get<{ values: { value: string; count: number }[] }>('/v3/attributes/Modality/values?limit=5');
    assert.deepEqual(
      nonEmpty(v.values, 'Modality values').map((x) => [x.value, x.count]),
      (await rows('SELECT Modality AS v, count(*) AS n FROM p_index WHERE Modality IS NOT NULL GROUP BY 1 ORDER BY n DESC LIMIT 5')).map((r) => [r.v, Number(r.n)]),
    );
  },
  'GET /v3/tables': async () => {
    const t = await get<{ tables: { name: string }[] }>('/v3/tables');
    assert.deepEqual(t.tables.map((x) => x.name), Object.keys(TABLE_FILES));
  },
  'GET /v3/tables/{table}': async () => {
    for (const table of Object.keys(TABLE_FILES)) {
      const t = await get<{ columns: { name: string }[] }>(`/v3/tables/${table}`);
      const file = await fileColumns(table);
      const served = t.columns.map((c) => c.name);
      assert.deepEqual(file.filter((c) => !served.includes(String(c))), [], `${table}: every column of the file is served`);
      // index also carries series_cloud1_url, the store-neutral name of series_aws_url.
      assert.deepEqual(served.filter((c) => !file.includes(c)), table === 'index' ? ['series_cloud1_url'] : [], `${table}: columns not in the file`);
    }
    // A table the wheel does not carry: 503 naming the command that fetches it.
    const seg = await get<{ error: { code: string; message: string } }>('/v3/tables/seg_index', 503);
    assert.match(seg.error.message, new RegExp(`idqs data fetch --release ${PIN.release.replaceAll('.', '\\.')} --source gcs --tables seg_index`));
  },
  'GET /v3/clinical/tables': async () => {
    assertNoClinicalFiles();
    const e = await get<{ error: { code: string; message: string } }>('/v3/clinical/tables', 404);
    assert.equal(e.error.code, 'not_found');
    assert.match(e.error.message, CLINICAL_REFUSAL);
  },
  'GET /v3/clinical/tables/{table}': async () => {
    assertNoClinicalFiles();
    assert.match((await get<{ error: { message: string } }>('/v3/clinical/tables/nlst_canc', 404)).error.message, CLINICAL_REFUSAL);
  },
  'GET /v3/clinical/tables/{table}/rows': async () => {
    assertNoClinicalFiles();
    assert.match((await get<{ error: { message: string } }>('/v3/clinical/tables/nlst_canc/rows', 404)).error.message, CLINICAL_REFUSAL);
  },
  'POST /v3/cohort/counts': async () => {
    const mod = one.Modality;
    const c = await post('/v3/cohort/counts', { terms: { collection_id: [coll], Modality: [mod] } });
    const want = await countsSql(`${where()} AND Modality = ${lit(mod)}`);
    assert.ok(want[2]! > 0);
    assert.deepEqual([c.patients, c.studies, c.series, c.instances], want);
  },
  'POST /v3/cohort/manifest': async () => {
    const m = await post<{ series: Row[]; total_series: number; download: { idc_commands: string[] } }>('/v3/cohort/manifest', { filters: collFilter(), page_size: 5 });
    assert.deepEqual(m.series.map((r) => r.series_aws_url), (await urlsSql(where())).slice(0, 5));
    assert.equal(m.total_series, await scalar(`SELECT count(*) FROM p_index WHERE ${where()}`));
    assert.equal(m.download.idc_commands[0], `idc download ${coll} --download-dir ./idc-data`);
  },
  'POST /v3/cohort/manifest.txt': async () => {
    const r = await s.post('/v3/cohort/manifest.txt', { filters: collFilter() });
    assert.equal(r.status, 200);
    const lines = (await r.text()).split('\n');
    assert.equal(lines.pop(), '');
    assert.deepEqual(lines, nonEmpty(await urlsSql(where()), 'manifest'));
    assert.equal(r.headers.get('x-total-count'), String(lines.length));
  },
  'POST /v3/licenses': async () => {
    const l = await post<{ licenses: { license_short_name: string; series: number }[] }>('/v3/licenses', collFilter());
    assert.deepEqual(l.licenses.map((x) => [x.license_short_name, x.series]).sort(), nonEmpty(await licensesSql(where()), 'licenses'));
  },
  'POST /v3/series/lookup': async () => {
    const want = await rows(`SELECT crdc_series_uuid, SeriesInstanceUID, StudyInstanceUID, PatientID, series_aws_url FROM p_index WHERE ${where()} ORDER BY crdc_series_uuid LIMIT 3`);
    const r = await post<{ series: Row[] }>('/v3/series/lookup', { crdc_series_uuid: want.map((w) => w.crdc_series_uuid) });
    const got = r.series.map((x) => ({ crdc_series_uuid: x.crdc_series_uuid, SeriesInstanceUID: x.SeriesInstanceUID, StudyInstanceUID: x.StudyInstanceUID, PatientID: x.PatientID, series_aws_url: x.series_aws_url }));
    assert.deepEqual(sorted(got.map((g) => JSON.stringify(g))), sorted(want.map((w) => JSON.stringify(w))));
  },
  'POST /v3/cohort/facets': async () => {
    const f = await post<{ totals: Row; facets: { Modality: { values: { value: string; count: number }[] } } }>('/v3/cohort/facets', { filters: collFilter(), attributes: ['Modality'], count: 'patients' });
    const got = f.facets.Modality.values.filter((v) => v.count > 0).map((v) => [v.value, v.count]).sort();
    assert.deepEqual(got, nonEmpty(await modalitySql(where(), 'count(DISTINCT PatientID)'), 'modalities'));
    assert.deepEqual([f.totals.patients, f.totals.studies, f.totals.series, f.totals.instances], await countsSql(where()));
  },
  'POST /v3/cohort/table': async () => {
    const t = await post<{ rows: Row[]; total: number }>('/v3/cohort/table', { filters: collFilter(), level: 'studies', page_size: 5000 });
    const want = await rows(`SELECT StudyInstanceUID AS u, count(*) AS n FROM p_index WHERE ${where()} GROUP BY 1`);
    assert.equal(t.total, nonEmpty(want, 'studies').length);
    assert.deepEqual(sorted(t.rows.map((r) => `${r.StudyInstanceUID} ${r.series}`)), sorted(want.map((w) => `${w.u} ${w.n}`)));
  },
  'POST /v3/sql': async () => {
    const q = await post<{ rows: Row[] }>('/v3/sql', { sql: `SELECT Modality, count(*) AS n FROM index WHERE ${where()} GROUP BY 1 ORDER BY 1` });
    assert.deepEqual(q.rows.map((r) => [r.Modality, Number(r.n)]), nonEmpty(await modalitySql(where(), 'count(*)'), 'modalities'));
  },
  'GET /v3/viewer-url': async () => {
    const v = await get(`/v3/viewer-url?series_instance_uid=${one.SeriesInstanceUID}`);
    assert.equal(v.study_instance_uid, one.StudyInstanceUID);
    assert.ok(String(v.viewer_url).includes(one.StudyInstanceUID), String(v.viewer_url));
  },
  'POST /v3/citations': async () => {
    const c = await post<{ dois: string[]; citations: string[]; missing_metadata: string[] }>('/v3/citations', { filters: collFilter() });
    assert.deepEqual(sorted(c.dois.map((d) => d.toLowerCase())), nonEmpty(await doisSql(where()), 'DOIs'));
    assert.deepEqual(c.missing_metadata, []);
    for (const [i, d] of c.dois.entries()) {
      assert.ok(c.citations[i]!.toLowerCase().includes(`https://doi.org/${d.toLowerCase()}`), d);
      assert.doesNotMatch(c.citations[i]!, /not available offline/);
    }
  },
  'POST /v3/series/resolve': async () => {
    const r = await post<{ lines: { class: string; current?: { crdc_series_uuid: string } }[] }>('/v3/series/resolve', {
      text: `${one.SeriesInstanceUID}\n${one.series_aws_url}\n1.2.3.4.5.6.7.8.9`,
    });
    assert.deepEqual(r.lines.map((l) => l.class), ['current', 'current', 'unknown']);
    assert.deepEqual(r.lines.slice(0, 2).map((l) => l.current?.crdc_series_uuid), [one.crdc_series_uuid, one.crdc_series_uuid]);
  },
  'POST /v3/cohort/changes': async () => {
    const prev = Number(PIN.previous.split('.')[0]);
    const c = await post<{ counts: { added: { series: number }; revised: { series: number }; unchanged: number } }>('/v3/cohort/changes', { from: PIN.previous, filters: collFilter() });
    // Added since the earlier release: first seen after it; revised: an earlier series with a new version since.
    const want = (
      await rows(
        `SELECT count(*) FILTER (WHERE series_init_idc_version > ${prev}) AS added, count(*) FILTER (WHERE series_init_idc_version <= ${prev} AND series_revised_idc_version > ${prev}) AS revised,
         count(*) FILTER (WHERE series_revised_idc_version <= ${prev}) AS unchanged FROM p_index WHERE ${where()}`,
      )
    )[0]!;
    assert.deepEqual([c.counts.added.series, c.counts.revised.series, c.counts.unchanged], [Number(want.added), Number(want.revised), Number(want.unchanged)]);
  },

  'GET /v2/about': async () => {
    const a = await get<{ code: number; message: string }>('/v2/about');
    assert.equal(a.code, 200);
    assert.match(a.message, /Version 2/);
  },
  'GET /v2/versions': async () => {
    const v = await get<{ versions: { idc_data_version: string; active: boolean }[] }>('/v2/versions');
    assert.deepEqual(v.versions.filter((x) => x.active).map((x) => x.idc_data_version), [`${await scalar('SELECT max(idc_version) FROM p_versions')}.0`]);
  },
  'GET /v2/collections': async () => {
    const c = await get<{ collections: Row[] }>('/v2/collections');
    assert.deepEqual(sorted(c.collections.map((x) => x.collection_id)), await list('SELECT collection_id FROM p_collections ORDER BY 1'));
  },
  'GET /v2/analysis_results': async () => {
    const a = await get<{ analysisResults: Row[] }>('/v2/analysis_results');
    assert.deepEqual(sorted(a.analysisResults.map((x) => x.analysis_result_id)), await list('SELECT analysis_result_id FROM p_analysis ORDER BY 1'));
  },
  'GET /v2/filters': async () => {
    const f = (await get<{ data_sources: { data_source: string; filters: { name: string }[] }[] }>('/v2/filters')).data_sources;
    assert.deepEqual(f.map((d) => d.data_source), ['v2.dicom_pivot']);
    for (const n of ['Modality', 'collection_id', 'PatientID']) assert.ok(f[0]!.filters.some((x) => x.name === n), n);
  },
  'GET /v2/filters/values/{filter}': async () => {
    const m = await get<{ values: unknown[] }>('/v2/filters/values/Modality');
    assert.deepEqual(m.values, await list('SELECT DISTINCT Modality FROM p_index ORDER BY 1 NULLS FIRST'));
  },
  'GET /v2/fields': async () => {
    const f = (await get<{ data_sources: { data_source: string; fields: string[] }[] }>('/v2/fields')).data_sources;
    assert.deepEqual(f.map((d) => d.data_source), ['v2.dicom_pivot']);
    for (const n of ['SeriesInstanceUID', 'StudyInstanceUID', 'PatientID']) assert.ok(f[0]!.fields.includes(n), n);
    assert.ok(!f[0]!.fields.includes('SOPInstanceUID'), 'an instance-level field is not listed');
  },
  'GET /v2/fields/{version}': async () => {
    const version = `${await scalar('SELECT max(idc_version) FROM p_versions')}.0`;
    const f = await get<{ idc_data_version: string; data_sources: { fields: string[] }[] }>(`/v2/fields/${version}`);
    const all = await get<{ data_sources: { fields: string[] }[] }>('/v2/fields');
    assert.equal(f.idc_data_version, version);
    assert.deepEqual(f.data_sources[0]!.fields, all.data_sources[0]!.fields);
  },
  'POST /v2/cohorts/manifest/preview': async () => {
    const p = await post<{ manifest: { manifest_data: Row[]; totalFound: number } }>('/v2/cohorts/manifest/preview', {
      cohort_def: { filters: { collection_id: [coll] } }, fields: ['PatientID'], counts: true, page_size: 50000,
    });
    const want = await rows(`SELECT PatientID, sum(instanceCount) AS i, count(*) AS se, count(DISTINCT StudyInstanceUID) AS st FROM p_index WHERE ${where()} GROUP BY 1 ORDER BY 1`);
    assert.deepEqual(
      p.manifest.manifest_data.map((r) => [r.PatientID, Number(r.instance_count), Number(r.series_count), Number(r.study_count)]),
      nonEmpty(want, 'patients').map((w) => [w.PatientID, Number(w.i), Number(w.se), Number(w.st)]),
    );
    assert.equal(p.manifest.totalFound, want.length);
    v2Note.push(`patients of ${coll}: ${p.manifest.manifest_data.length} rows, SQL ${want.length}`);
    const st = await post<{ manifest: { manifest_data: Row[] } }>('/v2/cohorts/manifest/preview', {
      cohort_def: { filters: { collection_id: [coll] } }, fields: ['StudyInstanceUID'], counts: true, page_size: 50000,
    });
    const wantSt = await rows(`SELECT StudyInstanceUID, count(*) AS se FROM p_index WHERE ${where()} GROUP BY 1 ORDER BY 1`);
    assert.deepEqual(st.manifest.manifest_data.map((r) => [r.StudyInstanceUID, Number(r.series_count)]), nonEmpty(wantSt, 'studies').map((w) => [w.StudyInstanceUID, Number(w.se)]));
    v2Note.push(`studies: ${st.manifest.manifest_data.length} rows, SQL ${wantSt.length}`);
  },
  'POST /v2/cohorts/manifest/preview/nextPage': async () => v2SeriesPaged('POST'),
  'GET /v2/cohorts/manifest/preview/nextPage': async () => v2SeriesPaged('GET'),
};
const v2Note: string[] = [];

/** Series level of a collection paged to the end through nextPage (POST body, or GET query). */
async function v2SeriesPaged(method: 'GET' | 'POST'): Promise<void> {
  type Page = { manifest: { manifest_data: Row[] }; next_page: string };
  const got: Row[] = [];
  let page = await post<Page>('/v2/cohorts/manifest/preview', { cohort_def: { filters: { collection_id: [coll] } }, fields: ['SeriesInstanceUID', 'StudyInstanceUID'], page_size: 250 });
  got.push(...page.manifest.manifest_data);
  let pages = 1;
  while (page.next_page) {
    page = method === 'POST' ? await post<Page>('/v2/cohorts/manifest/preview/nextPage', { next_page: page.next_page }) : await get<Page>(`/v2/cohorts/manifest/preview/nextPage?next_page=${encodeURIComponent(page.next_page)}`);
    got.push(...page.manifest.manifest_data);
    pages++;
  }
  const want = await rows(`SELECT SeriesInstanceUID, StudyInstanceUID FROM p_index WHERE ${where()} ORDER BY 1, 2`);
  assert.ok(pages > 1, 'paged');
  assert.deepEqual(got.map((r) => `${r.SeriesInstanceUID} ${r.StudyInstanceUID}`), nonEmpty(want, 'series').map((w) => `${w.SeriesInstanceUID} ${w.StudyInstanceUID}`));
  if (method === 'POST') v2Note.push(`series of ${coll}: ${got.length} rows in ${pages} pages, SQL ${want.length}`);
}

// ---- MCP tools ----

const TOOLS: Record<string, Case> = {
  get_idc_version: async () => assert.equal((await tool('get_idc_version')).idc_index_data_version, await indexVersion()),
  get_stats: async () => assert.deepEqual(pickStats(await tool('get_stats')), await statsSql()),
  list_collections: async () =>
    assert.deepEqual((await tool<{ result: Row[] }>('list_collections')).result.map((c) => c.collection_id), await list('SELECT collection_id FROM p_collections ORDER BY 1')),
  get_collection: async () => {
    const c = await tool('get_collection', { collection_id: coll });
    assert.deepEqual([c.patients, c.studies, c.series], (await countsSql(where())).slice(0, 3));
  },
  list_analysis_results: async () =>
    assert.deepEqual((await tool<{ result: Row[] }>('list_analysis_results')).result.map((a) => a.analysis_result_id), await list('SELECT analysis_result_id FROM p_analysis ORDER BY 1')),
  list_attributes: async () => {
    const cols = await fileColumns('index');
    const attrs = (await tool<{ result: { name: string; table: string }[] }>('list_attributes')).result.filter((a) => a.table === 'index');
    for (const a of nonEmpty(attrs, 'attributes')) assert.ok(cols.includes(a.name), a.name);
  },
  get_attribute_values: async () => {
    const v = await tool<{ values: { value: string; count: number }[] }>('get_attribute_values', { attribute: 'Modality', limit: 5 });
    assert.deepEqual(v.values.map((x) => [x.value, x.count]), (await rows('SELECT Modality AS v, count(*) AS n FROM p_index WHERE Modality IS NOT NULL GROUP BY 1 ORDER BY n DESC LIMIT 5')).map((r) => [r.v, Number(r.n)]));
  },
  list_tables: async () => assert.deepEqual((await tool<{ tables: { name: string }[] }>('list_tables')).tables.map((t) => t.name), Object.keys(TABLE_FILES)),
  get_table_schema: async () => {
    const t = await tool<{ columns: { name: string }[] }>('get_table_schema', { table: 'collections_index' });
    assert.deepEqual(sorted(t.columns.map((c) => c.name)), sorted(await fileColumns('collections_index')));
  },
  list_clinical_tables: async () => {
    assertNoClinicalFiles();
    assert.match(JSON.stringify(await tool('list_clinical_tables', {}, true)), /no clinical tables[\s\S]*--tables clinical fetches them/);
  },
  get_clinical_table_schema: async () => {
    assertNoClinicalFiles();
    assert.match(JSON.stringify(await tool('get_clinical_table_schema', { table: 'nlst_canc' }, true)), /no clinical tables[\s\S]*--tables clinical fetches them/);
  },
  get_clinical_table: async () => {
    assertNoClinicalFiles();
    assert.match(JSON.stringify(await tool('get_clinical_table', { table: 'nlst_canc' }, true)), /no clinical tables[\s\S]*--tables clinical fetches them/);
  },
  get_cohort_counts: async () => {
    const c = await tool('get_cohort_counts', collFilter());
    assert.deepEqual([c.patients, c.studies, c.series, c.instances], await countsSql(where()));
  },
  build_cohort: async () => {
    const b = await tool<{ total_series: number; series: Row[] }>('build_cohort', { ...collFilter(), page_size: 3 });
    assert.equal(b.total_series, await scalar(`SELECT count(*) FROM p_index WHERE ${where()}`));
    assert.deepEqual(b.series.map((r) => r.series_aws_url), (await urlsSql(where())).slice(0, 3));
  },
  get_cohort_urls: async () => {
    const u = await tool<{ urls: string[] }>('get_cohort_urls', { ...collFilter(), limit: 200 });
    assert.deepEqual(u.urls, nonEmpty(await urlsSql(where()), 'urls').slice(0, 200));
  },
  get_cohort_facets: async () => {
    const f = await tool<{ facets: { Modality: { values: { value: string; count: number }[] } } }>('get_cohort_facets', { ...collFilter(), attributes: ['Modality'], count: 'series' });
    assert.deepEqual(f.facets.Modality.values.filter((v) => v.count > 0).map((v) => [v.value, v.count]).sort(), await modalitySql(where(), 'count(*)'));
  },
  run_sql: async () => {
    const q = await tool<{ rows: Row[] }>('run_sql', { sql: `SELECT count(*) AS n FROM index WHERE ${where()}` });
    assert.equal(Number(q.rows[0]!.n), await scalar(`SELECT count(*) FROM p_index WHERE ${where()}`));
  },
  get_viewer_url: async () => {
    const v = await tool('get_viewer_url', { series_instance_uid: one.SeriesInstanceUID });
    assert.equal(v.study_instance_uid, one.StudyInstanceUID);
  },
  get_citations: async () => {
    const c = await tool<{ dois: string[]; citations: string[] }>('get_citations', collFilter());
    assert.deepEqual(sorted(c.dois.map((d) => d.toLowerCase())), nonEmpty(await doisSql(where()), 'DOIs'));
    for (const t of c.citations) assert.doesNotMatch(t, /not available offline/);
  },
  get_licenses: async () => {
    const l = await tool<{ licenses: { license_short_name: string; series: number }[] }>('get_licenses', collFilter());
    assert.deepEqual(l.licenses.map((x) => [x.license_short_name, x.series]).sort(), await licensesSql(where()));
  },
  resolve_series: async () => {
    const r = await tool<{ lines: { class: string; current?: { crdc_series_uuid: string } }[] }>('resolve_series', { text: one.SeriesInstanceUID });
    assert.deepEqual(r.lines.map((l) => [l.class, l.current?.crdc_series_uuid]), [['current', one.crdc_series_uuid]]);
  },
  get_cohort_changes: async () => {
    const prev = Number(PIN.previous.split('.')[0]);
    const c = await tool<{ counts: { added: { series: number } } }>('get_cohort_changes', { from: PIN.previous, ...collFilter() });
    assert.equal(c.counts.added.series, await scalar(`SELECT count(*) FROM p_index WHERE ${where()} AND series_init_idc_version > ${prev}`));
  },
};

// ---- CLI commands (real processes, offline) ----

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { env: { IDQS_CACHE_DIR: defaultCacheDir(), ...env } });
}
/** Wait for a line on a child's stderr. */
function waitFor(child: ReturnType<typeof spawn>, re: RegExp, ms: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${re} within ${ms} ms: ${text}`)), ms);
    child.stderr!.on('data', (c: Buffer) => {
      text += c.toString();
      const m = re.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before ${re}: ${text}`)));
  });
}
/** No network: every source the fetch code could use points at a closed local port. */
const OFFLINE = {
  IDQS_PYPI_INDEX: 'http://127.0.0.1:9/simple',
  PIP_INDEX_URL: 'http://127.0.0.1:9/simple',
  IDQS_RELEASE_GCS_URL: 'http://127.0.0.1:9/gcs',
  IDQS_RELEASE_GITHUB_URL: 'http://127.0.0.1:9/github',
  IDQS_METADATA_S3_ENDPOINT: 'http://127.0.0.1:9',
};
let calibrating: Promise<CliResult> | undefined;
let generated: Promise<CliResult> | undefined;
let serving: { child: ReturnType<typeof spawn>; url: Promise<string> } | undefined;

/** idqs serve on a free port; its URL from the banner. */
function startServe(): { child: ReturnType<typeof spawn>; url: Promise<string> } {
  const child = spawn(process.execPath, [CLI, 'serve', '--db', rel.db, '--port', '0'], { env: { ...process.env, ...OFFLINE }, stdio: ['ignore', 'ignore', 'pipe'] });
  const url = waitFor(child, /serving data release \S+ at (http:\/\/\S+) /, 120_000).then((m) => m[1]!);
  url.catch(() => {}); // awaited by the serve case, which reports the failure
  return { child, url };
}

const COMMANDS: Record<string, Case> = {
  serve: async () => {
    const { child } = serving!;
    try {
      const url = await serving!.url;
      const ready = (await (await fetch(`${url}/v3/ready`)).json()) as { status: string };
      assert.equal(ready.status, 'ready');
      const stats = (await (await fetch(`${url}/v3/stats`)).json()) as Row;
      assert.equal(stats.series, await scalar('SELECT count(*) FROM p_index'));
      const exited = new Promise<number | null>((res) => child.once('exit', res));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
    }
  },
  mcp: async () => {
    const client = new Client({ name: 'real-coverage-stdio', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--db', rel.db], env: { ...(process.env as Record<string, string>), ...OFFLINE }, stderr: 'ignore' }));
    try {
      const r = (await client.callTool({ name: 'get_cohort_counts', arguments: collFilter() })) as CallToolResult;
      const c = r.structuredContent as Row;
      assert.deepEqual([c.patients, c.studies, c.series, c.instances], await countsSql(where()));
    } finally {
      await client.close();
    }
  },
  'data fetch': async () => {
    // The pinned release is in the cache: a no-op that names it, with every source unreachable.
    const r = await cli(['data', 'fetch', '--source', PIN.source, '--release', PIN.release], OFFLINE);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { db: string; fetch: { downloaded: string[]; bytes: number }; build: { rebuilt: boolean; index_version: string } };
    assert.deepEqual([out.db, out.fetch.downloaded, out.fetch.bytes, out.build.rebuilt, out.build.index_version], [rel.db, [], 0, false, PIN.release]);
    assert.match(r.stderr, new RegExp(`release v\\d+ \\(${PIN.release.replaceAll('.', '\\.')}\\) ready`));
    // A release not in the cache with its source unreachable: it fails at once, naming the source and
    // how to use a mirror, leaves no folder behind and the served release as it was.
    const before = readFileSync(join(rel.fetch.folder, 'dataset.json'), 'utf8');
    const out2 = join(tmp, 'gcs-release');
    const started = Date.now();
    const g = await cli(['data', 'fetch', '--release', PIN.release, '--source', 'gcs', '--tables', 'clinical', '--out', out2], OFFLINE);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(g.code, 1, g.stderr);
    assert.match(g.stderr, /error: cannot reach the gcs source at http:\/\/127\.0\.0\.1:9\/gcs \(.*\); nothing served was changed\. .*--mirror URL \(or IDQS_RELEASE_GCS_URL\)/);
    assert.ok(!existsSync(out2), 'no empty release folder is left');
    assert.equal(readFileSync(join(rel.fetch.folder, 'dataset.json'), 'utf8'), before);
    process.stdout.write(`# data fetch --source gcs --tables clinical, source unreachable: failed in ${seconds.toFixed(1)} s\n`);
  },
  'data generate': async () => {
    const r = await generated!;
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { out: string; totals: { series: number; patients: number } };
    const file = lit(join(out.out, 'idc_index.parquet'));
    assert.deepEqual([out.totals.series, out.totals.patients], [await scalar(`SELECT count(*) FROM read_parquet(${file})`), await scalar(`SELECT count(DISTINCT PatientID) FROM read_parquet(${file})`)]);
    assert.ok(out.totals.series > 0);
  },
  'data build': async () => {
    // Built from the generated dataset (the real release's build is what `data fetch` reused above); then read back by idqs sql.
    const data = join(tmp, 'generated');
    assert.equal((await generated!).code, 0);
    const db = join(tmp, 'built.duckdb');
    const r = await cli(['data', 'build', '--from', data, '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    const built = JSON.parse(r.stdout) as { tables: { name: string; rows: number }[] };
    assert.equal(built.tables.find((t) => t.name === 'index')!.rows, await scalar(`SELECT count(*) FROM read_parquet(${lit(join(data, 'idc_index.parquet'))})`));
    const q = await cli(['sql', '--db', db, '--format', 'json', 'SELECT count(DISTINCT PatientID) AS n FROM index']);
    assert.equal((JSON.parse(q.stdout) as { rows: Row[] }).rows[0]!.n, await scalar(`SELECT count(DISTINCT PatientID) FROM read_parquet(${lit(join(data, 'idc_index.parquet'))})`));
  },
  'data compare': async () => {
    const r = await cli(['data', 'compare', '--real', rel.fetch.folder, '--from', join(tmp, 'generated'), '--json']);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout) as { real: { distributions: { totals: Row } } };
    const t = c.real.distributions.totals;
    const want = await statsSql();
    assert.deepEqual([t.collections, t.patients, t.studies, t.series, t.instances], [want.collections, want.patients, want.studies, want.series, want.instances]);
  },
  'data calibrate': async () => {
    const r = await calibrating!;
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { totals: Row };
    const want = await statsSql();
    assert.deepEqual([out.totals.patients, out.totals.studies, out.totals.series, out.totals.instances], [want.patients, want.studies, want.series, want.instances]);
    assert.ok(existsSync(join(tmp, 'profile.json')));
  },
  sql: async () => {
    const r = await cli(['sql', '--db', rel.db, '--format', 'csv', `SELECT Modality, count(*) AS n FROM index WHERE ${where()} GROUP BY 1 ORDER BY 1`]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n').slice(1), (await modalitySql(where(), 'count(*)')).map(([m, n]) => `${m},${n}`));
  },
  resolve: async () => {
    const r = await cli(['resolve', '--db', rel.db, '--format', 'json', one.SeriesInstanceUID, one.crdc_series_uuid]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { lines: { class: string; current?: { crdc_series_uuid: string } }[] };
    assert.deepEqual(out.lines.map((l) => [l.class, l.current?.crdc_series_uuid]), [['current', one.crdc_series_uuid], ['current', one.crdc_series_uuid]]);
  },
  download: async () => {
    // The cohort is resolved by the real server; the object store is unreachable here, so the dry run
    // stops at listing it, saying how to choose another store or endpoint.
    const r = await cli(['download', '--collection', coll, '--dry-run', '--json', '--api', s.url, '--endpoint', 'http://127.0.0.1:9', '--retries', '0', '--out', join(tmp, 'dl')]);
    const ev = events(r.stdout);
    const cohort = ev.find((e) => e.event === 'cohort')!;
    assert.equal(cohort.series, await scalar(`SELECT count(*) FROM p_index WHERE ${where()}`));
    assert.equal(cohort.index_bytes, await scalar(`SELECT round(sum(series_size_MB), 3) * 1e6 FROM p_index WHERE ${where()}`));
    assert.match(String(ev.find((e) => e.event === 'error')?.message), /unreachable[\s\S]*--endpoint URL/);
    assert.notEqual(r.code, 0);
    assert.ok(!existsSync(join(tmp, 'dl')) || readdirSync(join(tmp, 'dl')).length === 0, 'a dry run writes nothing');
  },
};

// ---- the explorer's data calls (keys: METHOD path, a path segment written from a variable as {}) ----

const EXPLORER: Record<string, Case> = {
  'GET /v3/version': async () => assert.equal((await get('/v3/version')).idc_index_data_version, await indexVersion()),
  'GET /v3/attributes': ROUTES['GET /v3/attributes']!,
  'GET /v3/collections': ROUTES['GET /v3/collections']!,
  'GET /v3/collections/{}': ROUTES['GET /v3/collections/{collection_id}']!,
  'GET /v3/analysis_results': ROUTES['GET /v3/analysis_results']!,
  'GET /v3/tables': ROUTES['GET /v3/tables']!,
  'GET /v3/tables/{}': ROUTES['GET /v3/tables/{table}']!,
  'POST /v3/cohort/facets': async () => {
    // The collections list: one count per collection in the whole release, in each count mode.
    for (const [mode, count] of [['patients', 'count(DISTINCT PatientID)'], ['series', 'count(*)']] as const) {
      const f = await post<{ facets: { collection_id: { values: { value: string; count: number }[] } } }>('/v3/cohort/facets', { filters: {}, attributes: ['collection_id'], count: mode, limit: 10000 });
      assert.deepEqual(
        f.facets.collection_id.values.filter((v) => v.count > 0).map((v) => [v.value, v.count]).sort(),
        (await rows(`SELECT collection_id, ${count} AS n FROM p_index GROUP BY 1 ORDER BY 1`)).map((r) => [r.collection_id, Number(r.n)]),
      );
    }
    // The main page: every facet of a filter; its totals.
    const f = await post<{ totals: Row; facets: Record<string, unknown> }>('/v3/cohort/facets', { filters: { terms: { collection_id: [coll] }, ranges: {} }, count: 'studies', limit: 50 });
    assert.ok(Object.keys(f.facets).length > 3);
    assert.deepEqual([f.totals.patients, f.totals.studies, f.totals.series, f.totals.instances], await countsSql(where()));
  },
  'POST /v3/cohort/counts': async () => {
    // The cart: a union of filters.
    const cart = { terms: {}, ranges: {}, any_of: [{ terms: { collection_id: [coll] }, ranges: {} }, { terms: { SeriesInstanceUID: [one.SeriesInstanceUID] }, ranges: {} }] };
    const c = await post('/v3/cohort/counts', cart);
    assert.deepEqual([c.patients, c.studies, c.series, c.instances], await countsSql(where()));
    // The SQL console's "use the cohort": the cohort's SQL, run by /v3/sql, counts the same series.
    const q = await post<{ rows: Row[] }>('/v3/sql', { sql: `SELECT count(*) AS n FROM (${String(c.sql)})` });
    assert.equal(Number(q.rows[0]!.n), await scalar(`SELECT count(*) FROM p_index WHERE ${where()}`));
  },
  'POST /v3/licenses': async () => {
    const l = await post<{ licenses: { license_short_name: string; series: number }[] }>('/v3/licenses', { filters: collFilter() });
    assert.deepEqual(l.licenses.map((x) => [x.license_short_name, x.series]).sort(), await licensesSql(where()));
  },
  'POST /v3/citations': async () => {
    for (const format of ['apa', 'bibtex']) {
      const c = await post<{ dois: string[]; citations: string[] }>('/v3/citations', { filters: collFilter(), citation_format: format });
      assert.deepEqual(sorted(c.dois.map((d) => d.toLowerCase())), nonEmpty(await doisSql(where()), 'DOIs'));
      for (const t of c.citations) assert.doesNotMatch(t, /not available offline/);
    }
  },
  'POST /v3/cohort/manifest': async () => {
    const m = await post<{ download: { total_series: number; commands: { idqs: string[]; s5cmd_cloud1: string[] } } }>('/v3/cohort/manifest', { filters: collFilter(), include_rows: false });
    assert.equal(m.download.total_series, await scalar(`SELECT count(*) FROM p_index WHERE ${where()}`));
    assert.ok(m.download.commands.idqs.length > 0 && m.download.commands.s5cmd_cloud1.length > 0);
  },
  'POST /v3/cohort/manifest.txt': async () => {
    // A row's s5cmd file: the run comment, then one cp line per series of that study.
    const r = await s.post('/v3/cohort/manifest.txt', { filters: { terms: { StudyInstanceUID: [one.StudyInstanceUID] } }, source: 'cloud1', format: 's5cmd' });
    const lines = (await r.text()).split('\n').filter(Boolean);
    assert.match(lines[0]!, /^# Run with: s5cmd /);
    const want = await urlsSql(`StudyInstanceUID = ${lit(one.StudyInstanceUID)}`);
    assert.deepEqual(lines.slice(1).map((l) => /^cp '([^']+)'/.exec(l)?.[1]), nonEmpty(want, 'series'));
  },
  'POST /v3/cohort/table': async () => {
    // The Export tab's series file: pages of series to the end.
    const got: Row[] = [];
    for (let page = 0; ; page++) {
      const t = await post<{ rows: Row[]; total_pages: number }>('/v3/cohort/table', { filters: collFilter(), level: 'series', page, page_size: 400 });
      got.push(...t.rows);
      if (page + 1 >= t.total_pages) break;
    }
    assert.deepEqual(sorted(got.map((r) => String(r.SeriesInstanceUID))), await list(`SELECT SeriesInstanceUID FROM p_index WHERE ${where()} ORDER BY 1`));
  },
  'POST /v3/sql': ROUTES['POST /v3/sql']!,
  'POST /v3/cohort/changes': async () => {
    // The Changes tab: changes per modality of a collection, as the index's version records say.
    const prev = Number(PIN.previous.split('.')[0]);
    const c = await post<{ groups: { value: string | null; added: number; revised: number; removed: number; unchanged: number }[] }>('/v3/cohort/changes', { from: `v${prev}`, filters: collFilter(), limit: 0, by: 'Modality' });
    const want = await rows(
      `SELECT Modality AS v, count(*) FILTER (WHERE series_init_idc_version > ${prev}) AS added, count(*) FILTER (WHERE series_init_idc_version <= ${prev} AND series_revised_idc_version > ${prev}) AS revised,
       count(*) FILTER (WHERE series_revised_idc_version <= ${prev}) AS unchanged FROM p_index WHERE ${where()} GROUP BY 1`,
    );
    const byValue = new Map(want.map((r) => [r.v, [Number(r.added), Number(r.revised), Number(r.unchanged)]]));
    assert.ok(c.groups.length > 0);
    for (const g of c.groups) assert.deepEqual([g.added, g.revised, g.unchanged], byValue.get(g.value) ?? [0, 0, 0], String(g.value));
    // Its download: every change of the cohort, one line each.
    const tsv = await s.post('/v3/cohort/changes', { from: `v${prev}`, filters: collFilter(), format: 'tsv' });
    const lines = (await tsv.text()).trimEnd().split('\n');
    assert.equal(lines.length - 1, c.groups.reduce((a, g) => a + g.added + g.revised + g.removed, 0), 'a line per change the groups count');
  },
};

// ---- what is served, listed by the parts themselves ----

async function servedRoutes(): Promise<string[]> {
  const out: string[] = [];
  for (const doc of ['/v3/openapi.json', '/v2/openapi.json']) {
    const d = await get<{ paths: Record<string, Record<string, unknown>> }>(doc);
    for (const [path, ops] of Object.entries(d.paths)) for (const m of Object.keys(ops)) out.push(`${m.toUpperCase()} ${path}`);
  }
  return out;
}

/** The commands `idqs --help` lists, with their subcommands (`data fetch`), from the real program. */
async function cliCommands(prefix: string[] = []): Promise<string[]> {
  const r = await runCli([...prefix, '--help']);
  const section = /\nCommands:\n([\s\S]*?)(\n\n|$)/.exec(r.stdout)?.[1];
  if (!section) return prefix.length > 0 ? [prefix.join(' ')] : [];
  const names = [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((n) => n !== 'help');
  return (await Promise.all(names.map((n) => cliCommands([...prefix, n])))).flat();
}

/** The explorer's calls to the service: every get/post/postText/fetch of a /v3 path in web/src. */
function explorerCalls(): string[] {
  const out = new Set<string>();
  const unlisted: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (/\.tsx?$/.test(e.name)) {
        const text = readFileSync(join(dir, e.name), 'utf8');
        for (const m of text.matchAll(/\b(get|post|postText|fetch)(?:<[^()]*?>)?\(\s*['`](\/v\d\/[^'`?]*)/g)) {
          out.add(`${m[1] === 'get' || m[1] === 'fetch' ? 'GET' : 'POST'} ${m[2]!.replace(/\$\{[^}]*\}/g, '{}')}`);
        }
        // A call whose path is not written out could not be listed: there must be none (but the client's own definitions).
        for (const m of text.matchAll(/(?<![.\w])(?:get|post|postText|fetch)(?:<[^()]*?>)?\(\s*(?!['`\s])/g)) {
          const call = text.slice(m.index, m.index + 60).replace(/\s+/g, ' ');
          if (!/^fetch\(withRelease\(path\)/.test(call) && !text.slice(Math.max(0, m.index - 9), m.index).endsWith('function ')) unlisted.push(`${e.name}: ${call}`);
        }
      }
    }
  };
  walk(join(ROOT, 'web', 'src'));
  assert.deepEqual(unlisted, [], 'explorer calls whose path is not a literal (write it out so this test lists it)');
  return [...out].sort();
}

async function runTable(t: TestContext, kind: string, served: string[], cases: Record<string, Case>): Promise<void> {
  const missing = served.filter((n) => !cases[n]);
  const stale = Object.keys(cases).filter((n) => !served.includes(n));
  assert.deepEqual(missing, [], `${kind} without a case in test/real-coverage.test.ts: ${missing.join(', ')}`);
  assert.deepEqual(stale, [], `cases for ${kind} that no longer exist: ${stale.join(', ')}`);
  for (const name of served) await t.test(name, cases[name]!);
}

test('every /v3 and /v2 route of the served OpenAPI documents, on the real release', { skip }, async (t) => {
  const served = await servedRoutes();
  assert.ok(served.length >= 35, `${served.length} routes`);
  await runTable(t, 'routes', served, ROUTES);
  process.stdout.write(`# /v2 previews against SQL: ${v2Note.join('; ')}\n`);
});

test('every tool a real MCP client lists, on the real release', { skip }, async (t) => {
  const served = (await mcp.listTools()).tools.map((x) => x.name);
  await runTable(t, 'tools', served, TOOLS);
});

test('every command of idqs --help, as a real process on the real release, offline', { skip }, async (t) => {
  const served = await cliCommands();
  assert.ok(served.includes('data fetch') && served.includes('serve'), served.join(', '));
  await runTable(t, 'commands', served, COMMANDS);
});

test("every data call of the explorer's API client (web/src), on the real release", { skip }, async (t) => {
  const served = explorerCalls();
  assert.ok(served.length >= 10, served.join(', '));
  await runTable(t, 'explorer calls', served, EXPLORER);
});
