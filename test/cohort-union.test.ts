// A union of filters (any_of): how a cart of collections, patients, studies
// and series is sent to the cohort routes and tools. Counts, manifest,
// manifest.txt, table, licenses and citations of a union against SQL written
// here (OR of the members, AND with the top-level terms), the agent tool's
// answer equal to the route's, and clear refusals.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServer, type TestServer } from './fixture.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';

let s: TestServer;
let coll: string;
let patient: string;
let series: string[];
let union: { terms: Record<string, string[]> }[];
/** The union in SQL, written here. */
let where: string;
let params: string[];

before(async () => {
  s = await startServer();
  // The in-memory cohort index ready, so every answer below goes through the path that serves it.
  assert.ok(await cohortIndex(s.ctx), 'the cohort index builds on the test dataset');
  // A small collection, a patient of another one, and two series of a third.
  const rows = await s.ctx.engine.rows(`SELECT collection_id AS c, min(PatientID) AS p, list(SeriesInstanceUID ORDER BY SeriesInstanceUID)[1:2] AS se FROM "index" GROUP BY 1 HAVING count(*) >= 3 ORDER BY count(*), 1 LIMIT 3`);
  assert.equal(rows.length, 3);
  coll = String(rows[0]!.c);
  patient = String(rows[1]!.p);
  series = (rows[2]!.se as string[]).map(String);
  union = [{ terms: { collection_id: [coll] } }, { terms: { PatientID: [patient] } }, { terms: { SeriesInstanceUID: series } }];
  where = `(collection_id = ? OR PatientID = ? OR SeriesInstanceUID IN (?, ?))`;
  params = [coll, patient, ...series];
});
after(async () => {
  await s?.close();
});

async function ok<T>(path: string, body: unknown): Promise<T> {
  const r = await s.post(path, body);
  const text = await r.text();
  assert.equal(r.status, 200, `${path}: ${text.slice(0, 300)}`);
  return (path.endsWith('.txt') ? text : JSON.parse(text)) as T;
}

async function sqlCounts(w: string, p: string[]) {
  const [r] = await s.ctx.engine.rows(
    `SELECT count(DISTINCT PatientID)::INTEGER AS patients, count(DISTINCT StudyInstanceUID)::INTEGER AS studies, count(*)::INTEGER AS series FROM "index" WHERE ${w}`,
    p,
  );
  return r!;
}

test('counts of a union equal SQL with OR; top-level terms are ANDed with it; filters_applied echoes it', async () => {
  const want = await sqlCounts(where, params);
  const got = await ok<Record<string, unknown>>('/v3/cohort/counts', { any_of: union });
  assert.deepEqual([got.patients, got.studies, got.series], [want.patients, want.studies, want.series]);
  assert.deepEqual((got.filters_applied as { any_of: unknown[] }).any_of, union.map((u) => ({ terms: u.terms, ranges: {} })));
  const wrapped = await ok<Record<string, unknown>>('/v3/cohort/counts', { filters: { any_of: union } });
  assert.equal(wrapped.series, want.series);

  const [m] = await s.ctx.engine.rows(`SELECT Modality AS m FROM "index" WHERE ${where} GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`, params);
  const both = await ok<Record<string, number>>('/v3/cohort/counts', { terms: { Modality: [String(m!.m)] }, any_of: union });
  const wantBoth = await sqlCounts(`Modality = ? AND ${where}`, [String(m!.m), ...params]);
  assert.deepEqual([both.patients, both.series], [wantBoth.patients, wantBoth.series]);
  assert.ok(both.series! < Number(want.series), 'the top-level term narrows the union');
});

test('manifest, manifest.txt, table, licenses and citations of a union cover exactly its series', async () => {
  const uids = (await s.ctx.engine.rows(`SELECT SeriesInstanceUID AS u FROM "index" WHERE ${where} ORDER BY 1`, params)).map((r) => String(r.u));
  const page = await ok<{ total_series: number }>('/v3/cohort/manifest', { filters: { any_of: union }, page_size: 5 });
  assert.equal(page.total_series, uids.length);
  const txt = await ok<string>('/v3/cohort/manifest.txt', { filters: { any_of: union } });
  assert.equal(txt.split('\n').filter((l) => l.startsWith('s3://')).length, uids.length);
  const table = await ok<{ total: number; rows: { SeriesInstanceUID: string }[] }>('/v3/cohort/table', { filters: { any_of: union }, level: 'series', page_size: 100 });
  assert.equal(table.total, uids.length);
  assert.deepEqual(table.rows.map((r) => r.SeriesInstanceUID).sort(), uids.slice(0, 100));
  const lic = await ok<{ licenses: { license_short_name: string | null; series: number }[] }>('/v3/licenses', { any_of: union });
  const wantLic = await s.ctx.engine.rows(`SELECT license_short_name AS l, count(*)::INTEGER AS n FROM "index" WHERE ${where} GROUP BY 1`, params);
  assert.deepEqual(
    lic.licenses.map((l) => [l.license_short_name, l.series]).sort(),
    wantLic.map((r) => [r.l, r.n]).sort(),
  );
  const dois = await s.ctx.engine.rows(`SELECT count(DISTINCT lower(trim(source_DOI)))::INTEGER AS n FROM "index" WHERE ${where} AND trim(source_DOI) <> ''`, params);
  const cit = await ok<{ count: number }>('/v3/citations', { filters: { any_of: union }, citation_format: 'apa' });
  assert.ok(cit.count >= 1 && cit.count <= Number(dois[0]!.n), `citations ${cit.count} for ${dois[0]!.n} DOIs`);
});

test('the agent tool counts a union as the route does', async () => {
  const mcp = new Client({ name: 'cohort-union-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const r = (await mcp.callTool({ name: 'get_cohort_counts', arguments: { any_of: union } })) as CallToolResult;
    assert.ok(!r.isError, JSON.stringify(r.content).slice(0, 300));
    const want = await sqlCounts(where, params);
    assert.equal((r.structuredContent as Record<string, number>).series, want.series);
  } finally {
    await mcp.close();
  }
});

test('refusals and warnings: a union inside a union, facets of a union, an empty member', async () => {
  const nested = await s.post('/v3/cohort/counts', { any_of: [{ any_of: union }] });
  assert.ok(nested.status === 400 || nested.status === 422, `nested: ${nested.status}`);
  assert.match(await nested.text(), /any_of/);
  const facets = await s.post('/v3/cohort/facets', { filters: { any_of: union } });
  assert.equal(facets.status, 400);
  assert.match(await facets.text(), /any_of.*\/v3\/cohort\/counts/);
  const empty = await ok<{ warnings: string[]; series: number }>('/v3/cohort/counts', { any_of: [{ terms: { collection_id: [coll] } }, {}] });
  assert.ok(empty.warnings.some((w) => w.startsWith('any_of[1] is empty')), JSON.stringify(empty.warnings));
  const [all] = await s.ctx.engine.rows(`SELECT count(*)::INTEGER AS n FROM "index"`);
  assert.equal(empty.series, all!.n, 'an empty member selects everything, as the warning says');
});

test('the counts carry the cohort as SQL: run through /v3/sql it selects the same series, values with quotes included', async () => {
  const [withQuote] = await s.ctx.engine.rows(`SELECT SeriesDescription AS d FROM "index" WHERE SeriesDescription LIKE '%''%' LIMIT 1`);
  const filters = [
    { any_of: union },
    { terms: { Modality: ['CT'] }, ranges: { StudyDate: { gte: '2000-01-01' }, instanceCount: { gte: 10 } } },
    { terms: { cancer_types: ['Lung Cancer'] }, any_of: union },
  ];
  for (const f of filters) {
    const counts = await ok<{ series: number; sql: string }>('/v3/cohort/counts', f);
    assert.match(counts.sql, /^SELECT \* FROM "index" WHERE /);
    const r = await ok<{ rows: { n: number }[] }>('/v3/sql', { sql: `WITH cohort AS (${counts.sql}) SELECT count(*) AS n FROM cohort` });
    assert.equal(Number(r.rows[0]!.n), counts.series, JSON.stringify(f));
  }
  // A value holding a quote is written as an SQL string literal, not cut.
  if (withQuote) {
    const counts = await ok<{ sql: string }>('/v3/cohort/counts', { terms: { PatientID: [`x'y`] } });
    assert.ok(counts.sql.includes(`'x''y'`), counts.sql);
    const r = await ok<{ rows: { n: number }[] }>('/v3/sql', { sql: `WITH cohort AS (${counts.sql}) SELECT count(*) AS n FROM cohort` });
    assert.equal(Number(r.rows[0]!.n), 0);
  }
});
