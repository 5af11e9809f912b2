// Parity of the agent tools with the REST routes: one table of cases drives
// both. For each case the tool is called through a real MCP client over the
// server's /mcp endpoint and the twin route over plain HTTP; the structured
// result must equal the REST body (array bodies wrapped as {result}), the
// text must be the same JSON, and errors must keep the REST code, with the
// message naming tools where REST names routes (the pairs are written in each case).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SURFACES } from '../src/contract/capabilities.ts';
import { startServer, type TestServer } from './fixture.ts';

let s: TestServer;
let client: Client;

interface Case {
  tool: string;
  args: Record<string, unknown>;
  rest: { method: 'GET' | 'POST'; path: string; body?: unknown };
  /** Expected REST status when not 200. */
  status?: number;
  /** For errors: what the REST message says → what the tool message says instead. */
  words?: [string, string][];
}

let cases: Case[] = [];

before(async () => {
  s = await startServer();
  client = new Client({ name: 'parity-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));

  const e = s.ctx.engine;
  const coll = String((await e.one(`SELECT collection_id FROM "index" GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`))!.collection_id);
  const ser = (await e.one(`SELECT SeriesInstanceUID, StudyInstanceUID FROM "index" ORDER BY SeriesInstanceUID LIMIT 1`))!;
  const clinical = s.ctx.catalog.clinicalTables[0]!;
  const filter = { terms: { collection_id: [coll], Modality: ['CT'] } };
  const ranged = { terms: { collection_id: [coll] }, ranges: { instanceCount: { gte: 10 } } };
  const q = encodeURIComponent;
  cases = [
    { tool: 'get_idc_version', args: {}, rest: { method: 'GET', path: '/v3/version' } },
    { tool: 'get_stats', args: {}, rest: { method: 'GET', path: '/v3/stats' } },
    { tool: 'list_collections', args: {}, rest: { method: 'GET', path: '/v3/collections' } },
    { tool: 'get_collection', args: { collection_id: coll }, rest: { method: 'GET', path: `/v3/collections/${q(coll)}` } },
    {
      tool: 'get_collection',
      args: { collection_id: `${coll}x` },
      rest: { method: 'GET', path: `/v3/collections/${q(coll)}x` },
      status: 404,
      words: [['GET /v3/collections lists', 'list_collections lists']],
    },
    { tool: 'list_analysis_results', args: {}, rest: { method: 'GET', path: '/v3/analysis_results' } },
    { tool: 'list_attributes', args: {}, rest: { method: 'GET', path: '/v3/attributes' } },
    { tool: 'get_attribute_values', args: { attribute: 'Modality', limit: 3 }, rest: { method: 'GET', path: '/v3/attributes/Modality/values?limit=3' } },
    {
      tool: 'get_attribute_values',
      args: { attribute: 'Modalty', limit: 3 },
      rest: { method: 'GET', path: '/v3/attributes/Modalty/values?limit=3' },
      status: 400,
      words: [
        ['GET /v3/attributes lists', 'list_attributes lists'],
        ['GET /v3/tables/index lists', 'get_table_schema {"table":"index"} lists'],
      ],
    },
    { tool: 'list_tables', args: {}, rest: { method: 'GET', path: '/v3/tables' } },
    { tool: 'get_table_schema', args: { table: 'seg_index' }, rest: { method: 'GET', path: '/v3/tables/seg_index' } },
    { tool: 'get_table_schema', args: { table: 'indx' }, rest: { method: 'GET', path: '/v3/tables/indx' }, status: 404, words: [] },
    { tool: 'list_clinical_tables', args: {}, rest: { method: 'GET', path: '/v3/clinical/tables' } },
    { tool: 'list_clinical_tables', args: { collection_id: coll }, rest: { method: 'GET', path: `/v3/clinical/tables?collection_id=${q(coll)}` } },
    { tool: 'get_clinical_table_schema', args: { table: clinical }, rest: { method: 'GET', path: `/v3/clinical/tables/${q(clinical)}` } },
    { tool: 'get_clinical_table', args: { table: clinical, max_rows: 4 }, rest: { method: 'GET', path: `/v3/clinical/tables/${q(clinical)}/rows?max_rows=4` } },
    { tool: 'get_cohort_counts', args: filter, rest: { method: 'POST', path: '/v3/cohort/counts', body: filter } },
    { tool: 'get_cohort_counts', args: ranged, rest: { method: 'POST', path: '/v3/cohort/counts', body: ranged } },
    { tool: 'get_cohort_counts', args: { terms: { Modality: ['ct'] } }, rest: { method: 'POST', path: '/v3/cohort/counts', body: { terms: { Modality: ['ct'] } } } },
    {
      tool: 'get_cohort_counts',
      args: { terms: { Modalty: ['CT'] } },
      rest: { method: 'POST', path: '/v3/cohort/counts', body: { terms: { Modalty: ['CT'] } } },
      status: 400,
      words: [
        ['GET /v3/attributes lists', 'list_attributes lists'],
        ['filtered with POST /v3/sql.', 'filtered with run_sql.'],
      ],
    },
    {
      tool: 'build_cohort',
      args: { ...filter, page: 1, page_size: 3 },
      rest: { method: 'POST', path: '/v3/cohort/manifest', body: { filters: filter, page: 1, page_size: 3 } },
    },
    {
      tool: 'build_cohort',
      args: { ...ranged, include_rows: false },
      rest: { method: 'POST', path: '/v3/cohort/manifest', body: { filters: ranged, include_rows: false, page_size: 10 } },
    },
    {
      // An empty filter pages the whole release, with a warning.
      tool: 'build_cohort',
      args: { page: 2, page_size: 3 },
      rest: { method: 'POST', path: '/v3/cohort/manifest', body: { page: 2, page_size: 3 } },
    },
    {
      tool: 'run_sql',
      args: { sql: 'SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC, Modality', max_rows: 2 },
      rest: { method: 'POST', path: '/v3/sql', body: { sql: 'SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC, Modality', max_rows: 2 } },
    },
    { tool: 'run_sql', args: { sql: 'SELECT count(*) FROM indx' }, rest: { method: 'POST', path: '/v3/sql', body: { sql: 'SELECT count(*) FROM indx' } }, status: 400, words: [] },
    { tool: 'run_sql', args: { sql: 'DELETE FROM index' }, rest: { method: 'POST', path: '/v3/sql', body: { sql: 'DELETE FROM index' } }, status: 400, words: [] },
    {
      tool: 'run_sql',
      args: { sql: 'SELECT 1', maxrows: 3 },
      rest: { method: 'POST', path: '/v3/sql', body: { sql: 'SELECT 1', maxrows: 3 } },
      status: 422,
      words: [['"maxrows" in body;', '"maxrows" in arguments;']],
    },
    {
      tool: 'get_cohort_changes',
      args: { terms: { collection_id: [coll] }, from: 'v20', limit: 5 },
      rest: { method: 'POST', path: '/v3/cohort/changes', body: { filters: { terms: { collection_id: [coll] } }, from: 'v20', limit: 5 } },
    },
    {
      tool: 'get_cohort_changes',
      args: { terms: { Manufacturer: ['x'] }, from: 'v20' },
      rest: { method: 'POST', path: '/v3/cohort/changes', body: { filters: { terms: { Manufacturer: ['x'] } }, from: 'v20' } },
      status: 400,
      words: [],
    },
    {
      tool: 'resolve_series',
      args: { ids: [ser.SeriesInstanceUID, ser.StudyInstanceUID, 'nonsense'] },
      rest: { method: 'POST', path: '/v3/series/resolve', body: { ids: [ser.SeriesInstanceUID, ser.StudyInstanceUID, 'nonsense'] } },
    },
    {
      tool: 'get_viewer_url',
      args: { series_instance_uid: ser.SeriesInstanceUID },
      rest: { method: 'GET', path: `/v3/viewer-url?series_instance_uid=${q(String(ser.SeriesInstanceUID))}` },
    },
    {
      tool: 'get_viewer_url',
      args: { study_instance_uid: ser.StudyInstanceUID, viewer: 'ohif_v2' },
      rest: { method: 'GET', path: `/v3/viewer-url?study_instance_uid=${q(String(ser.StudyInstanceUID))}&viewer=ohif_v2` },
    },
    { tool: 'get_viewer_url', args: {}, rest: { method: 'GET', path: '/v3/viewer-url' }, status: 400, words: [] },
    {
      tool: 'get_citations',
      args: { ...filter, citation_format: 'bibtex' },
      rest: { method: 'POST', path: '/v3/citations', body: { filters: filter, citation_format: 'bibtex' } },
    },
    { tool: 'get_citations', args: { citation_format: 'mla' }, rest: { method: 'POST', path: '/v3/citations', body: { citation_format: 'mla' } }, status: 400, words: [] },
    { tool: 'get_licenses', args: ranged, rest: { method: 'POST', path: '/v3/licenses', body: ranged } },
    {
      tool: 'get_cohort_facets',
      args: { ...ranged, attributes: ['Modality', 'StudyDate', 'instanceCount'], count: 'studies', limit: 5 },
      rest: { method: 'POST', path: '/v3/cohort/facets', body: { filters: ranged, attributes: ['Modality', 'StudyDate', 'instanceCount'], count: 'studies', limit: 5 } },
    },
    {
      tool: 'get_cohort_facets',
      args: { attributes: ['Modalty'], limit: 5 },
      rest: { method: 'POST', path: '/v3/cohort/facets', body: { attributes: ['Modalty'], limit: 5 } },
      status: 400,
      words: [['(GET /v3/attributes)', '(list_attributes)']],
    },
  ];
});

after(async () => {
  await client?.close();
  await s?.close();
});

async function rest(c: Case): Promise<{ status: number; body: unknown }> {
  const r = c.rest.method === 'GET' ? await s.get(c.rest.path) : await s.post(c.rest.path, c.rest.body ?? {});
  return { status: r.status, body: await r.json() };
}

async function call(tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
}

function text(r: CallToolResult): string {
  const t = r.content[0];
  assert.equal(t?.type, 'text');
  return (t as { text: string }).text;
}

test('every capability with a tool in the catalog is listed by the server and has a parity case on its route', async () => {
  const listed = (await client.listTools()).tools.map((t) => t.name).sort();
  const withTool = Object.values(SURFACES).filter((v) => v.tool !== null);
  assert.deepEqual(withTool.map((v) => v.tool).sort(), listed);
  for (const v of withTool) {
    if (v.tool === 'get_cohort_urls') continue; // its own parity test below, against manifest.txt
    const own = cases.filter((c) => c.tool === v.tool);
    assert.ok(own.length > 0, `${v.tool} has a parity case`);
    const route = new RegExp(`^${v.rest.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[a-z_]+\}/g, '[^/?]+')}(\\?|$)`);
    for (const c of own) assert.ok(c.rest.method === v.rest.method && route.test(c.rest.path), `${v.tool}: ${c.rest.method} ${c.rest.path} is ${v.rest.method} ${v.rest.path}`);
  }
  for (const v of Object.values(SURFACES).filter((x) => x.tool === null)) assert.ok((v.restOnly ?? '').length > 20, `${v.rest.path} says why it has no tool`);
});

test('each tool returns the REST body of its route, as structured content and as text', async () => {
  for (const c of cases) {
    const label = `${c.tool} ${JSON.stringify(c.args)}`;
    const [r, t] = await Promise.all([rest(c), call(c.tool, c.args)]);
    assert.equal(r.status, c.status ?? 200, `${label}: REST status ${JSON.stringify(r.body)}`);
    if (r.status === 200) {
      assert.ok(!t.isError, `${label}: ${text(t)}`);
      assert.deepEqual(t.structuredContent, Array.isArray(r.body) ? { result: r.body } : r.body, label);
      assert.deepEqual(JSON.parse(text(t)), r.body, label);
    } else {
      type Envelope = { error: { code: string; message: string; suggestions?: string[]; see?: unknown[] } };
      const e = (r.body as Envelope).error;
      assert.equal(t.isError, true, label);
      const te = (t.structuredContent as Envelope).error;
      assert.equal(te.code, e.code, label);
      // The same message, with the words of the case swapped: each REST phrase must be there, and its tool phrase instead.
      let expected = e.message;
      for (const [restWords, toolWords] of c.words ?? []) {
        assert.ok(expected.includes(restWords), `${label}: REST message ${JSON.stringify(e.message)} says ${JSON.stringify(restWords)}`);
        expected = expected.replace(restWords, toolWords);
      }
      assert.equal(te.message, expected, label);
      assert.doesNotMatch(te.message, /\/v3\//, `${label}: a tool message names no route`);
      assert.deepEqual([te.suggestions, te.see], [e.suggestions, e.see], `${label}: same suggestions and references`);
      assert.deepEqual(JSON.parse(text(t)), t.structuredContent, label);
    }
  }
});

test('get_cohort_urls returns the lines and headers of POST /v3/cohort/manifest.txt', async () => {
  const coll = String((await s.ctx.engine.one(`SELECT collection_id FROM "index" GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`))!.collection_id);
  for (const [args, body] of [
    [{ terms: { collection_id: [coll] }, limit: 7 }, { filters: { terms: { collection_id: [coll] } }, limit: 7 }],
    [{ terms: { collection_id: [coll] }, source: 'gcs', limit: 5 }, { filters: { terms: { collection_id: [coll] } }, source: 'gcs', limit: 5 }],
    [{ ranges: { instanceCount: { gte: 1000 } }, limit: 1000 }, { filters: { ranges: { instanceCount: { gte: 1000 } } }, limit: 1000 }],
  ] as const) {
    const r = await s.post('/v3/cohort/manifest.txt', body);
    assert.equal(r.status, 200);
    // The REST list is URLs only (a cut one says so in its headers); the tool says so in its members.
    const lines = (await r.text()).split('\n').filter((l) => l !== '');
    assert.ok(lines.every((l) => l.startsWith('s3://')), lines.find((l) => !l.startsWith('s3://')));
    const t = await call('get_cohort_urls', args as unknown as Record<string, unknown>);
    assert.ok(!t.isError, text(t));
    const u = t.structuredContent as { source: string; urls: string[]; total: number; returned: number; truncated: boolean; limit: number; warnings: string[] };
    assert.deepEqual(u.urls, lines);
    assert.equal(u.total, Number(r.headers.get('x-total-count')));
    assert.equal(u.returned, Number(r.headers.get('x-returned-count')));
    assert.equal(u.truncated, r.headers.get('x-truncated') === 'true');
    assert.equal(u.limit, Number(r.headers.get('x-manifest-limit')));
    assert.equal(u.source, 'source' in body && body.source === 'gcs' ? 'cloud2' : 'cloud1');
    assert.deepEqual(u.warnings, JSON.parse(r.headers.get('x-filter-warnings') ?? '[]'));
    assert.deepEqual(JSON.parse(text(t)), t.structuredContent);
  }
  // With columns: rows, the objects of manifest.txt's json format, under the same limit.
  const columns = ['SeriesInstanceUID', 'Modality', 'series_size_MB', 'url'];
  const r = await s.post('/v3/cohort/manifest.txt', { filters: { terms: { collection_id: [coll] } }, source: 'gcs', limit: 9, format: 'json', columns });
  const rows = await call('get_cohort_urls', { terms: { collection_id: [coll] }, source: 'gcs', limit: 9, columns });
  assert.ok(!rows.isError, text(rows));
  const got = rows.structuredContent as { urls: string[]; rows: Record<string, unknown>[]; returned: number };
  assert.deepEqual(got.rows, JSON.parse(await r.text()));
  assert.equal(got.rows.length, 9);
  assert.deepEqual(got.urls, []);
  const bad = await call('get_cohort_urls', { terms: { collection_id: [coll] }, columns: ['seriesinstanceuid'] });
  assert.ok(bad.isError);
  assert.match(text(bad), /no column .{0,2}seriesinstanceuid.*Did you mean 'SeriesInstanceUID'/);
  // No filter: the whole release, as manifest.txt streams it, cut at the tool's limit and saying so.
  const empty = await call('get_cohort_urls', {});
  assert.ok(!empty.isError, text(empty));
  const e = empty.structuredContent as { urls: string[]; total: number; returned: number; truncated: boolean; limit: number; warnings: string[] };
  const whole = Number((await s.ctx.engine.one(`SELECT count(*) AS n FROM "index"`))!.n);
  assert.equal(e.total, whole);
  assert.equal(e.returned, Math.min(whole, e.limit));
  assert.equal(e.urls.length, e.returned);
  assert.equal(e.truncated, whole > e.limit);
  assert.ok(e.warnings.some((w) => /entire/i.test(w)), JSON.stringify(e.warnings));
});
