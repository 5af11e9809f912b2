// Two filter semantics of the portal, for every interface: all_terms (a study
// must have ALL the values, the portal's Modality ALL) and null among the
// values of terms (the None bucket: series without a value). Counts, table,
// facets and the agent tool against SQL written here (INTERSECT of studies,
// IS NULL, collections listing nothing), with the cohort index ready so that
// its own evaluation of them is what is tested, and clear refusals.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServer, type TestServer } from './fixture.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { selectRows } from '../src/core/services/cohort-index/evaluate.ts';
import { compileFilter } from '../src/core/filters/v3.ts';

let s: TestServer;
/** Two modalities that occur together in some study, and in studies apart. */
let pair: [string, string];

before(async () => {
  s = await startServer();
  assert.ok(await cohortIndex(s.ctx), 'the cohort index builds on the test dataset');
  const rows = await s.ctx.engine.rows(
    `SELECT a.Modality AS a, b.Modality AS b, count(DISTINCT a.StudyInstanceUID) AS n FROM "index" a JOIN "index" b
       ON a.StudyInstanceUID = b.StudyInstanceUID AND a.Modality < b.Modality GROUP BY 1, 2 ORDER BY n DESC LIMIT 1`,
  );
  assert.equal(rows.length, 1, 'the test dataset has a study with two modalities');
  pair = [String(rows[0]!.a), String(rows[0]!.b)];
});
after(async () => {
  await s?.close();
});

async function ok<T>(path: string, body: unknown): Promise<T> {
  const r = await s.post(path, body);
  const text = await r.text();
  assert.equal(r.status, 200, `${path}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

async function sqlCounts(where: string, params: string[]) {
  const [r] = await s.ctx.engine.rows(
    `SELECT count(DISTINCT PatientID)::INTEGER AS patients, count(DISTINCT StudyInstanceUID)::INTEGER AS studies, count(*)::INTEGER AS series FROM "index" WHERE ${where}`,
    params,
  );
  return r as { patients: number; studies: number; series: number };
}

/** Studies with both modalities, written as an intersection (the code under test groups and counts). */
const BOTH = `StudyInstanceUID IN (SELECT StudyInstanceUID FROM "index" WHERE Modality = ? INTERSECT SELECT StudyInstanceUID FROM "index" WHERE Modality = ?)`;

test('all_terms: counts, table and facets are those of the studies having every value; the index evaluates it itself', async () => {
  const want = await sqlCounts(BOTH, pair);
  const any = await sqlCounts(`Modality IN (?, ?)`, pair);
  assert.ok(want.studies > 0 && want.studies < any.studies, `ALL (${want.studies}) is narrower than ANY (${any.studies})`);
  const got = await ok<Record<string, unknown>>('/v3/cohort/counts', { all_terms: { Modality: pair } });
  assert.deepEqual([got.patients, got.studies, got.series], [want.patients, want.studies, want.series]);
  assert.deepEqual((got.filters_applied as { all_terms: unknown }).all_terms, { Modality: pair });

  const compiled = await compileFilter(s.ctx, { all_terms: { Modality: pair } });
  const ix = await cohortIndex(s.ctx);
  assert.notEqual(selectRows(ix!, compiled.filters_applied), null, 'the cohort index evaluates all_terms itself');

  // In a union (a cart holding this cohort) too.
  const [p] = await s.ctx.engine.rows(`SELECT min(PatientID) AS p FROM "index" WHERE NOT (${BOTH})`, pair);
  const inUnion = await ok<Record<string, number>>('/v3/cohort/counts', { any_of: [{ all_terms: { Modality: pair } }, { terms: { PatientID: [String(p!.p)] } }] });
  assert.equal(inUnion.series, (await sqlCounts(`${BOTH} OR PatientID = ?`, [...pair, String(p!.p)])).series);

  const table = await ok<{ total: number }>('/v3/cohort/table', { filters: { all_terms: { Modality: pair } }, level: 'studies', page_size: 5 });
  assert.equal(table.total, want.studies);

  // With another filter: the facet totals, and Modality's own counts leave its own (ALL) clause out.
  const [c] = await s.ctx.engine.rows(`SELECT collection_id AS c FROM "index" WHERE ${BOTH} GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`, pair);
  const coll = String(c!.c);
  const facets = await ok<{ totals: { patients: number; series: number }; facets: { Modality: { values: { value: string; count: number; filtered_count: number }[] } } }>(
    '/v3/cohort/facets',
    { filters: { terms: { collection_id: [coll] }, all_terms: { Modality: pair } }, attributes: ['Modality'], count: 'series' },
  );
  const both = await sqlCounts(`collection_id = ? AND ${BOTH}`, [coll, ...pair]);
  assert.equal(facets.totals.series, both.series);
  const own = await s.ctx.engine.rows(`SELECT Modality AS m, count(*)::INTEGER AS n FROM "index" WHERE collection_id = ? GROUP BY 1`, [coll]);
  const filtered = await s.ctx.engine.rows(`SELECT Modality AS m, count(*)::INTEGER AS n FROM "index" WHERE collection_id = ? AND ${BOTH} GROUP BY 1`, [coll, ...pair]);
  for (const v of facets.facets.Modality.values) {
    assert.equal(v.count, Number(own.find((r) => r.m === v.value)?.n ?? 0), `count of ${v.value}`);
    assert.equal(v.filtered_count, Number(filtered.find((r) => r.m === v.value)?.n ?? 0), `filtered_count of ${v.value}`);
  }
});

test('null in terms selects the series without a value, alone or with values, on series and collection attributes', async () => {
  const [bp] = await s.ctx.engine.rows(`SELECT BodyPartExamined AS v FROM "index" WHERE BodyPartExamined IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`);
  const value = String(bp!.v);
  const none = await sqlCounts(`BodyPartExamined IS NULL`, []);
  assert.ok(none.series > 0, 'the test dataset has series without BodyPartExamined');
  const gotNone = await ok<Record<string, number>>('/v3/cohort/counts', { terms: { BodyPartExamined: [null] } });
  assert.deepEqual([gotNone.patients, gotNone.studies, gotNone.series], [none.patients, none.studies, none.series]);
  const withValue = await sqlCounts(`(BodyPartExamined IS NULL OR BodyPartExamined = ?)`, [value]);
  const gotBoth = await ok<Record<string, unknown>>('/v3/cohort/counts', { terms: { BodyPartExamined: [value, null] } });
  assert.equal(gotBoth.series, withValue.series);
  assert.deepEqual((gotBoth.filters_applied as { terms: unknown }).terms, { BodyPartExamined: [value, null] });

  // Facets: totals under the None bucket, and the bucket's own count equals the cohort's.
  const f = await ok<{ totals: { series: number }; facets: { BodyPartExamined: { missing: { count: number; filtered_count: number } } } }>('/v3/cohort/facets', {
    filters: { terms: { BodyPartExamined: [null] } },
    attributes: ['BodyPartExamined'],
    count: 'series',
  });
  assert.equal(f.totals.series, none.series);
  assert.equal(f.facets.BodyPartExamined.missing.filtered_count, none.series);

  // A collection-level attribute: the series of collections listing no value.
  const noType = `collection_id NOT IN (SELECT collection_id FROM collections_index WHERE trim(coalesce(cancer_types, '')) <> '')`;
  const wantNoType = await sqlCounts(noType, []);
  const gotNoType = await ok<Record<string, number>>('/v3/cohort/counts', { terms: { cancer_types: [null] } });
  assert.equal(gotNoType.series, wantNoType.series);
  const fNoType = await ok<{ totals: { series: number } }>('/v3/cohort/facets', { filters: { terms: { cancer_types: [null] } }, attributes: ['cancer_types'], count: 'series' });
  assert.equal(fNoType.totals.series, wantNoType.series);
});

test('the agent tool takes all_terms and null as the route does', async () => {
  const mcp = new Client({ name: 'filter-all-missing-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const r = (await mcp.callTool({ name: 'get_cohort_counts', arguments: { all_terms: { Modality: pair }, terms: { BodyPartExamined: [null] } } })) as CallToolResult;
    assert.ok(!r.isError, JSON.stringify(r.content).slice(0, 300));
    const want = await sqlCounts(`${BOTH} AND BodyPartExamined IS NULL`, pair);
    assert.equal((r.structuredContent as Record<string, number>).series, want.series);
  } finally {
    await mcp.close();
  }
});

test('refusals: null for an identifier, one attribute in terms and all_terms, all_terms of a collection attribute or an unknown one', async () => {
  const cases: [unknown, RegExp][] = [
    [{ terms: { PatientID: [null] } }, /null.*categorical/],
    [{ terms: { Modality: [pair[0]] }, all_terms: { Modality: pair } }, /both terms and all_terms/],
    [{ all_terms: { cancer_types: ['Lung Cancer'] } }, /categorical attributes of the series/],
    [{ all_terms: { Modalty: ['CT'] } }, /Unknown term filter attribute 'Modalty'.*Modality/],
  ];
  for (const [body, re] of cases) {
    const r = await s.post('/v3/cohort/counts', body);
    const text = await r.text();
    assert.ok(r.status === 400 || r.status === 422, `${JSON.stringify(body)}: ${r.status} ${text.slice(0, 200)}`);
    assert.match(text, re, JSON.stringify(body));
  }
});
