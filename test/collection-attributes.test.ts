// The collection-level filter attributes (program_id, cancer_types,
// tumor_locations, species: facts of a series' collection, held in
// collections_index) through /v3/attributes, values, counts, facets and the
// agent tools, against SQL written here, on the test dataset and on the
// pinned real release. The lists are split here in SQL (commas, with
// ", Not Otherwise Specified" kept with its term), independently of the
// service's own parser.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defaultCacheDir } from '../src/config.ts';
import { ensureRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';
import { startServer, type TestServer } from './fixture.ts';

const PIN = JSON.parse(readFileSync(new URL('./real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const skipReal = process.env.IDQS_SKIP_REAL_DATA ? `IDQS_SKIP_REAL_DATA is set: the real release ${PIN.release} is skipped on purpose` : false;

const ATTRS = { program_id: false, cancer_types: true, tumor_locations: true, species: true } as const;
type Attr = keyof typeof ATTRS;
const NOS = ', Not Otherwise Specified';

/** One row per (collection, value) of the attribute, split in SQL. */
function valuesSql(a: Attr): string {
  if (!ATTRS[a]) return `SELECT DISTINCT collection_id, trim(${a}) AS v FROM collections_index WHERE trim(${a}) <> ''`;
  return `SELECT DISTINCT collection_id, v FROM (
    SELECT collection_id, trim(replace(unnest(string_split(replace(${a}, '${NOS}', '#NOS#'), ',')), '#NOS#', '${NOS}')) AS v FROM collections_index
  ) WHERE v <> ''`;
}

interface Bucket {
  count: number;
  filtered_count: number;
}
interface TermFacet {
  values: ({ value: string } & Bucket)[];
  missing: Bucket;
  selected: string[];
}

async function rows(s: TestServer, sql: string, params: (string | number)[] = []): Promise<Record<string, unknown>[]> {
  return s.ctx.engine.rows(sql, params);
}
async function postOk<T>(s: TestServer, path: string, body: unknown): Promise<T> {
  const r = await s.post(path, body);
  const out = (await r.json()) as T;
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(out).slice(0, 400)}`);
  return out;
}

/** Two values of the attribute with the most series, and the second one's lower-cased spelling. */
async function topValues(s: TestServer, a: Attr): Promise<string[]> {
  const r = await rows(s, `SELECT c.v, count(*) AS n FROM "index" i JOIN (${valuesSql(a)}) c USING (collection_id) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 2`);
  return r.map((x) => String(x.v));
}

async function checkRelease(s: TestServer, label: string): Promise<void> {
  // The attribute list says where each one lives.
  const listed = (await (await s.get('/v3/attributes')).json()) as { name: string; table: string; kind: string; categorical: boolean }[];
  for (const a of Object.keys(ATTRS)) {
    const info = listed.find((x) => x.name === a);
    assert.ok(info, `${label}: /v3/attributes lists ${a}`);
    assert.deepEqual([info.table, info.kind, info.categorical], ['collections_index', 'term', true]);
  }

  for (const a of Object.keys(ATTRS) as Attr[]) {
    // Values with their series, against a join written here.
    const want = await rows(s, `SELECT c.v AS value, count(*)::INTEGER AS count FROM "index" i JOIN (${valuesSql(a)}) c USING (collection_id) GROUP BY 1 ORDER BY 2 DESC, 1`);
    const got = (await (await s.get(`/v3/attributes/${a}/values?limit=1000`)).json()) as { values: { value: string; count: number }[]; truncated: boolean; note: string };
    assert.deepEqual(got.values, want.map((r) => ({ value: r.value, count: r.count })), `${label}: values of ${a}`);
    assert.equal(got.truncated, false);
    if (ATTRS[a]) assert.match(got.note, /comma-separated/);
  }

  // A value of a list column that holds several per collection matches every collection listing it.
  const multi = await rows(s, `SELECT collection_id, cancer_types FROM collections_index WHERE cancer_types LIKE '%,%' AND collection_id IN (SELECT collection_id FROM "index") ORDER BY 1 LIMIT 1`);
  assert.equal(multi.length, 1, `${label}: a collection lists several cancer types`);

  // Counts under a filter mixing two collection attributes and a series attribute.
  const [cancer1, cancer2] = await topValues(s, 'cancer_types');
  const [loc] = await topValues(s, 'tumor_locations');
  const filters = { terms: { cancer_types: [cancer1!, cancer2!], tumor_locations: [loc!], Modality: ['CT', 'MR', 'SM'] } };
  const inList = (a: Attr, vs: string[]) => `collection_id IN (SELECT collection_id FROM (${valuesSql(a)}) WHERE v IN (${vs.map(() => '?').join(', ')}))`;
  const where = {
    cancer_types: [inList('cancer_types', [cancer1!, cancer2!]), [cancer1!, cancer2!]] as const,
    tumor_locations: [inList('tumor_locations', [loc!]), [loc!]] as const,
    Modality: [`Modality IN ('CT', 'MR', 'SM')`, []] as const,
  };
  const whereBut = (skip: string | null) => {
    const parts = Object.entries(where).filter(([k]) => k !== skip);
    return { sql: parts.map(([, w]) => w[0]).join(' AND ') || 'TRUE', params: parts.flatMap(([, w]) => [...w[1]]) };
  };
  const all = whereBut(null);
  const [c] = await rows(s, `SELECT count(DISTINCT PatientID)::INTEGER AS patients, count(DISTINCT StudyInstanceUID)::INTEGER AS studies, count(*)::INTEGER AS series FROM "index" WHERE ${all.sql}`, all.params);
  assert.ok(c!.series as number > 0, `${label}: the filter selects series`);
  const counts = await postOk<Record<string, number>>(s, '/v3/cohort/counts', filters);
  assert.deepEqual([counts.patients, counts.studies, counts.series], [c!.patients, c!.studies, c!.series], `${label}: counts`);

  // Facets: each collection attribute counted under every other filter (distinct patients: one
  // PatientID can belong to two collections, so sums of collection counts would be wrong) and under all.
  const facets = await postOk<{ facets: Record<string, TermFacet>; totals: Record<string, number> }>(s, '/v3/cohort/facets', {
    filters,
    attributes: Object.keys(ATTRS),
    limit: 1000,
  });
  assert.equal(facets.totals.patients, c!.patients);
  for (const a of Object.keys(ATTRS) as Attr[]) {
    const others = whereBut(a);
    const per = await rows(
      s,
      `SELECT c.v AS value, count(DISTINCT i.PatientID)::INTEGER AS n FROM "index" i JOIN (${valuesSql(a)}) c USING (collection_id) WHERE ${others.sql} GROUP BY 1`,
      others.params,
    );
    const filtered = await rows(
      s,
      `SELECT c.v AS value, count(DISTINCT i.PatientID)::INTEGER AS n FROM "index" i JOIN (${valuesSql(a)}) c USING (collection_id) WHERE ${all.sql} GROUP BY 1`,
      all.params,
    );
    const [missing] = await rows(
      s,
      `SELECT count(DISTINCT PatientID)::INTEGER AS n FROM "index" WHERE ${others.sql} AND collection_id NOT IN (SELECT collection_id FROM (${valuesSql(a)}))`,
      others.params,
    );
    const f = facets.facets[a]!;
    const got = new Map(f.values.map((v) => [v.value, v]));
    assert.equal(f.values.filter((v) => v.count > 0).length, per.length, `${label}: ${a} has a value per value the SQL finds`);
    const fmap = new Map(filtered.map((r) => [r.value, r.n]));
    for (const r of per) {
      const v = got.get(String(r.value));
      assert.ok(v, `${label}: ${a} = ${String(r.value)} in the facet`);
      assert.equal(v.count, r.n, `${label}: ${a} = ${String(r.value)}, count`);
      assert.equal(v.filtered_count, fmap.get(r.value) ?? 0, `${label}: ${a} = ${String(r.value)}, filtered_count`);
    }
    assert.equal(f.missing.count, missing!.n, `${label}: ${a} missing`);
  }

  // The agent tool gives the route's answer.
  const mcp = new Client({ name: 'collection-attributes-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const r = (await mcp.callTool({ name: 'get_cohort_counts', arguments: filters })) as CallToolResult;
    assert.ok(!r.isError, JSON.stringify(r.content).slice(0, 300));
    const body = r.structuredContent as Record<string, number> | undefined;
    assert.deepEqual([body?.patients, body?.series], [c!.patients, c!.series], `${label}: the tool's counts`);
  } finally {
    await mcp.close();
  }

  // A value in the wrong casing says which spelling exists; a value nobody lists selects nothing.
  const cased = await postOk<{ warnings: string[]; series: number }>(s, '/v3/cohort/counts', { terms: { cancer_types: [cancer1!.toUpperCase()] } });
  assert.equal(cased.series, 0);
  assert.ok(cased.warnings.some((w) => w.includes(`'${cancer1}'`)), `${label}: ${JSON.stringify(cased.warnings)}`);
  const bad = await s.post('/v3/cohort/counts', { terms: { cancer_type: ['Lung Cancer'] } });
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: { message: string } }).error.message, /cancer_types/);
}

let synthetic: TestServer;
before(async () => {
  synthetic = await startServer();
});
after(async () => {
  await synthetic?.close();
});

test('collection attributes on the test dataset: values, counts, facets and tools against SQL', async () => {
  await checkRelease(synthetic, 'test dataset');
});

test(`collection attributes on the real release ${PIN.release}`, { skip: skipReal }, async () => {
  const rel = await ensureRelease({ release: PIN.release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  const s = await startServer({}, rel.db);
  try {
    await checkRelease(s, `release ${PIN.release}`);
    // The release's own list of one collection, split by the rule, includes a term with its qualifier kept.
    const nos = await rows(s, `SELECT count(*)::INTEGER AS n FROM collections_index WHERE cancer_types LIKE '%${NOS}%'`);
    if ((nos[0]!.n as number) > 0) {
      const values = (await (await s.get('/v3/attributes/cancer_types/values?limit=1000')).json()) as { values: { value: string }[] };
      assert.ok(values.values.some((v) => v.value.endsWith(NOS)), 'a value keeps ", Not Otherwise Specified"');
      assert.ok(!values.values.some((v) => v.value === 'Not Otherwise Specified'));
    }
  } finally {
    await s.close();
  }
});

/**
 * Facets of the collection attributes without a filter of their own (read from
 * the counts per collection, less the entities counted in several collections
 * that list one value), for each count mode, against SQL.
 */
async function checkUnfiltered(s: TestServer, label: string): Promise<void> {
  // Patients in several collections exist in the data this checks (else the correction is not exercised).
  const [spread] = await rows(s, `SELECT count(*)::INTEGER AS n FROM (SELECT PatientID FROM "index" GROUP BY 1 HAVING count(DISTINCT collection_id) > 1)`);
  assert.ok((spread!.n as number) > 0, `${label}: no patient is in two collections`);
  const cases: { filters: Record<string, unknown>; where: string }[] = [
    { filters: {}, where: 'TRUE' },
    { filters: { terms: { Modality: ['CT', 'MR'] } }, where: `Modality IN ('CT', 'MR')` },
    { filters: { ranges: { StudyDate: { gte: '2005-01-01' } } }, where: `StudyDate >= '2005-01-01'` },
  ];
  const key = { patients: 'PatientID', studies: 'StudyInstanceUID', series: 'SeriesInstanceUID' } as const;
  for (const [mode, column] of Object.entries(key)) {
    for (const c of cases) {
      const got = await postOk<{ facets: Record<string, TermFacet> }>(s, '/v3/cohort/facets', { filters: c.filters, attributes: Object.keys(ATTRS), count: mode, limit: 1000 });
      for (const a of Object.keys(ATTRS) as Attr[]) {
        const want = await rows(s, `SELECT c.v AS value, count(DISTINCT i.${column})::INTEGER AS n FROM "index" i JOIN (${valuesSql(a)}) c USING (collection_id) WHERE ${c.where} GROUP BY 1`);
        const [missing] = await rows(
          s,
          `SELECT count(DISTINCT ${column})::INTEGER AS n FROM "index" WHERE ${c.where} AND collection_id NOT IN (SELECT collection_id FROM (${valuesSql(a)}))`,
        );
        const f = got.facets[a]!;
        const where = `${label}, ${mode}, ${JSON.stringify(c.filters)}: ${a}`;
        assert.deepEqual(
          new Map(f.values.filter((v) => v.count > 0).map((v) => [v.value, [v.count, v.filtered_count]])),
          new Map(want.map((r) => [String(r.value), [r.n, r.n]])),
          where,
        );
        assert.deepEqual([f.missing.count, f.missing.filtered_count], [missing!.n, missing!.n], `${where} missing`);
      }
    }
  }
}

test(`collection attributes without a filter of their own, every count mode, on the real release ${PIN.release}`, { skip: skipReal }, async () => {
  const rel = await ensureRelease({ release: PIN.release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  const s = await startServer({}, rel.db);
  try {
    await checkUnfiltered(s, `release ${PIN.release}`);
  } finally {
    await s.close();
  }
});
