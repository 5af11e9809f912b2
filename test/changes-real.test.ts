// What changed between two real releases: POST /v3/cohort/changes on a real
// server over the pinned release (25.0.5), from the earlier one (24.2.2),
// computed by the service from one database (index and prior_versions_index),
// against the set difference of the two releases' own index files computed
// here. Also the downloadable list and the refusals.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangesWire } from '../src/contract/release-schemas.ts';
import { startServer, type TestServer } from './fixture.ts';
import { SKIP_REAL as skip, twoReleases, type TwoReleases } from './real-releases.ts';

let rel: TwoReleases;
let s: TestServer;
let from: string;
before(async () => {
  if (skip) return;
  rel = await twoReleases();
  s = await startServer({}, rel.current.db);
  from = `v${rel.previous.build.index_version.split('.')[0]}`;
});
after(async () => {
  await s?.close();
  rel?.close();
});

async function changes(body: unknown, status = 200): Promise<ChangesWire & { error?: { message: string } }> {
  const r = await s.post('/v3/cohort/changes', body);
  const out = (await r.json()) as ChangesWire & { error?: { message: string } };
  assert.equal(r.status, status, JSON.stringify(out).slice(0, 400));
  return out;
}

/** Added, revised and removed series between the two index files, as sets: (change, SeriesInstanceUID, size of the later version or of the earlier for removed). */
const SET_DIFFERENCE = (where: string) => `
  WITH a AS (SELECT SeriesInstanceUID AS s, crdc_series_uuid AS u, series_size_MB AS mb FROM prev_index WHERE ${where}),
       b AS (SELECT SeriesInstanceUID AS s, crdc_series_uuid AS u, series_size_MB AS mb FROM cur_index WHERE ${where})
  SELECT 'added' AS change, s, mb FROM b WHERE s NOT IN (SELECT s FROM a)
  UNION ALL SELECT 'removed', s, mb FROM a WHERE s NOT IN (SELECT s FROM b)
  UNION ALL SELECT 'revised', b.s, b.mb FROM b JOIN a ON a.s = b.s WHERE a.u <> b.u`;

test('changes by collection and by modality: per value, the set difference of the two index files (gaps aside), summing to the totals', { skip }, async () => {
  const GAPS = `SELECT SeriesInstanceUID FROM cur_index WHERE series_revised_idc_version <= ${from.slice(1)} AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM prev_index)`;
  for (const by of ['collection_id', 'Modality'] as const) {
    const got = await changes({ from, limit: 0, by });
    const want = await rel.rows(`SELECT v, count(*) FILTER (WHERE change = 'added') AS added, count(*) FILTER (WHERE change = 'revised') AS revised, count(*) FILTER (WHERE change = 'removed') AS removed
      FROM (SELECT d.change, coalesce(i.${by}, p.${by}) AS v FROM (${SET_DIFFERENCE('TRUE')}) d
        LEFT JOIN cur_index i ON i.SeriesInstanceUID = d.s LEFT JOIN prev_index p ON p.SeriesInstanceUID = d.s WHERE d.s NOT IN (${GAPS}))
      GROUP BY 1`);
    const changed = new Map(want.map((r) => [r.v === null ? null : String(r.v), [Number(r.added), Number(r.revised), Number(r.removed)]]));
    const groups = got.groups!;
    for (const g of groups) assert.deepEqual([g.added, g.revised, g.removed], changed.get(g.value) ?? [0, 0, 0], `${by} ${g.value}`);
    assert.deepEqual(new Set(groups.filter((g) => g.added + g.revised + g.removed > 0).map((g) => g.value)), new Set(changed.keys()), `${by}: the values that changed`);
    // Every value of either release is a row; the rows add up to the totals.
    const [values] = await rel.rows(`SELECT count(DISTINCT v) AS n FROM (SELECT ${by} AS v FROM cur_index UNION ALL SELECT ${by} FROM prev_index)`);
    assert.ok(groups.length >= Number(values!.n) - 1 && groups.length <= Number(values!.n) + 1, `${groups.length} rows, ${values!.n} values`);
    for (const k of ['added', 'revised', 'removed'] as const) assert.equal(groups.reduce((a, g) => a + g[k], 0), got.counts[k].series, `${by}: ${k} adds up`);
    assert.equal(groups.reduce((a, g) => a + g.unchanged, 0), got.counts.unchanged);
    const order = groups.map((g) => g.added + g.revised + g.removed);
    assert.deepEqual(order, [...order].sort((a, b) => b - a), 'most changed first');
  }
  assert.match((await changes({ from, by: 'Manufacturer' }, 422)).error!.message, /by must be one of: "collection_id", "Modality"/);
});

test('changes of the whole data and of one collection equal the set difference of the two releases’ index files', { skip }, async () => {
  // The tables record when a version first and last was served, not gaps: a series withdrawn from the earlier release and
  // restored unchanged (today 61 series of mri_dir, absent from 24.2.2) reads as served throughout. Those are the only difference allowed.
  const GAPS = `SELECT SeriesInstanceUID FROM cur_index WHERE series_revised_idc_version <= ${from.slice(1)} AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM prev_index)`;
  const [gaps] = await rel.rows(`SELECT count(*) AS n FROM (${GAPS})`);
  assert.ok(Number(gaps!.n) < 200, `${gaps!.n} series restored unchanged`);
  const all = await rel.rows(`SELECT change, count(*) AS n, round(sum(mb), 3) AS mb FROM (${SET_DIFFERENCE('TRUE')}) WHERE s NOT IN (${GAPS}) GROUP BY 1`);
  const want = Object.fromEntries(all.map((r) => [r.change, [Number(r.n), Number(r.mb)]]));
  const got = await changes({ from, limit: 0 });
  assert.equal(got.to, `v${rel.current.build.index_version.split('.')[0]}`);
  assert.equal(got.computed_on, got.to);
  for (const k of ['added', 'revised', 'removed'] as const) {
    assert.equal(got.counts[k].series, want[k]?.[0] ?? 0, k);
    // prior_versions_index keeps sizes rounded to 0.01 MB: removed sizes may differ by half of that per series.
    assert.ok(Math.abs(got.counts[k].size_MB - (want[k]?.[1] ?? 0)) <= 0.005 * got.counts[k].series + 0.01, `${k}: ${got.counts[k].size_MB} vs ${want[k]?.[1]}`);
  }
  assert.deepEqual(got.series, []);
  // Where the two releases' own tables disagree with the served release's records (the gaps above), the answer says so.
  const [added] = await rel.rows(`SELECT count(*) AS n FROM (${SET_DIFFERENCE('TRUE')}) WHERE change = 'added'`);
  assert.ok(Number(added!.n) > got.counts.added.series, `the files differ by ${added!.n} added series, the records by ${got.counts.added.series}`);
  assert.ok(got.warnings.some((w) => w.includes(`not from ${from}'s own tables`) && /counted in the releases that lacked it/.test(w) && /count as unchanged/.test(w)), JSON.stringify(got.warnings));
  // So does the downloadable list, in its header.
  const list = await s.post('/v3/cohort/changes', { from, format: 'tsv', filters: { terms: { collection_id: ['mri_dir'] } } });
  assert.equal(list.status, 200);
  assert.match((JSON.parse(list.headers.get('x-filter-warnings') ?? '[]') as string[]).join(' '), /count as unchanged/);
  await list.body?.cancel();
  // The collection with the most changes: every changed series listed, as the set difference says.
  const [top] = await rel.rows(`SELECT c, count(*) AS n FROM (SELECT coalesce(i.collection_id, p.collection_id) AS c FROM (${SET_DIFFERENCE('TRUE')}) d
      LEFT JOIN cur_index i ON i.SeriesInstanceUID = d.s LEFT JOIN prev_index p ON p.SeriesInstanceUID = d.s) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`);
  const c = String(top!.c);
  const rows = await rel.rows(`SELECT change, s FROM (${SET_DIFFERENCE(`collection_id = '${c}'`)}) WHERE s NOT IN (${GAPS}) ORDER BY change, s`);
  const one = await changes({ filters: { terms: { collection_id: [c] } }, from, limit: 5000 });
  assert.equal(one.truncated, rows.length > 5000);
  assert.deepEqual(one.series.map((r) => [r.change, r.SeriesInstanceUID]).sort(), rows.slice(0, 5000).map((r) => [r.change, r.s]).sort());
  // The downloadable list: one line per change, the same set.
  const tsv = await s.post('/v3/cohort/changes', { filters: { terms: { collection_id: [c] } }, from, format: 'tsv' });
  assert.equal(tsv.status, 200);
  assert.match(tsv.headers.get('content-type') ?? '', /text\/tab-separated-values/);
  assert.match(tsv.headers.get('content-disposition') ?? '', /attachment; filename="idqs-changes-/);
  const lines = (await tsv.text()).trimEnd().split('\n');
  assert.equal(lines[0], 'change\tSeriesInstanceUID\tcollection_id\tPatientID\tStudyInstanceUID\tModality\tfrom_crdc_series_uuid\tto_crdc_series_uuid\tseries_aws_url\tseries_size_MB');
  assert.deepEqual(lines.slice(1).map((l) => l.split('\t').slice(0, 2)).sort(), rows.map((r) => [r.change, r.s]).sort());
  process.stdout.write(`# ${from} → ${got.to}: ${JSON.stringify(got.counts)}; ${c}: ${rows.length} changes\n`);
});

test('refusals: a release the data cannot answer lists those it can; attributes earlier releases lack, ranges, from not before to', { skip }, async () => {
  const old = await changes({ from: 'v1' }, 400);
  assert.match(old.error!.message, /from is v1, which this data cannot answer: .* releases v2 to v25 can be asked/);
  assert.match((await changes({ from: 'v26' }, 400)).error!.message, /releases v2 to v25/);
  assert.match((await changes({ from: 'yesterday' }, 400)).error!.message, /names a release as v<number>/);
  assert.match((await changes({ from: 'v25' }, 400)).error!.message, /must be an earlier release than to/);
  const attr = await changes({ from, filters: { terms: { Manufacturer: ['GE'] } } }, 400);
  assert.match(attr.error!.message, /Manufacturer, which earlier releases do not record; filters over releases may use collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality/);
  assert.match((await changes({ from, filters: { ranges: { instanceCount: { gte: 1 } } } }, 400)).error!.message, /ranges \(instanceCount\)/);
});

test('as_of: the counts of a collection as the earlier release served it equal SQL over that release’s own index; the MCP tool agrees; refusals say what can be asked', { skip }, async () => {
  const [top] = await rel.rows(`SELECT collection_id AS c FROM (${SET_DIFFERENCE('TRUE')}) d JOIN prev_index p ON p.SeriesInstanceUID = d.s
      WHERE d.change = 'revised' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
  const c = String(top!.c);
  const [mod] = await rel.rows(`SELECT Modality AS m FROM prev_index WHERE collection_id = '${c}' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
  const cases: Record<string, string[]>[] = [{ collection_id: [c] }, { collection_id: [c], Modality: [String(mod!.m)] }];
  for (const terms of cases) {
    const where = Object.entries(terms).map(([k, v]) => `${k} IN (${v.map((x: string) => `'${x}'`).join(', ')})`).join(' AND ');
    const [want] = await rel.rows(`SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series, sum(series_size_MB) AS mb
      FROM prev_index WHERE ${where}`);
    const r = await s.post('/v3/cohort/counts', { filters: { terms }, as_of: from });
    const got = (await r.json()) as { as_of: string; computed_on: string; patients: number; studies: number; series: number; size_MB: number; warnings: string[] };
    assert.equal(r.status, 200, JSON.stringify(got));
    assert.deepEqual([got.as_of, got.computed_on], [from, `v${rel.current.build.index_version.split('.')[0]}`]);
    assert.deepEqual([got.patients, got.studies, got.series], [Number(want!.patients), Number(want!.studies), Number(want!.series)], JSON.stringify(terms));
    assert.ok(Math.abs(got.size_MB - Number(want!.mb)) <= 0.005 * got.series + 0.01, `${got.size_MB} vs ${want!.mb}`);
    if (terms.Modality === undefined) assert.ok(got.warnings.some((w) => /earlier versions, whose instance counts are not recorded/.test(w)), JSON.stringify(got));
    assert.ok(got.series > 0);
    // The same through the bare filter body and the MCP tool.
    assert.equal(((await (await s.post('/v3/cohort/counts', { terms, as_of: from })).json()) as { series: number }).series, got.series);
  }
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const mcp = new Client({ name: 'as-of-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const tool = (await mcp.callTool({ name: 'get_cohort_counts', arguments: { terms: { collection_id: [c] }, as_of: from } })) as { structuredContent: unknown };
    assert.deepEqual(tool.structuredContent, await (await s.post('/v3/cohort/counts', { terms: { collection_id: [c] }, as_of: from })).json());
    // The changes tool counts by modality as the route does.
    const byTool = (await mcp.callTool({ name: 'get_cohort_changes', arguments: { terms: { collection_id: [c] }, from, limit: 0, by: 'Modality' } })) as unknown as { structuredContent: { groups: unknown } };
    const byRoute = (await (await s.post('/v3/cohort/changes', { filters: { terms: { collection_id: [c] } }, from, limit: 0, by: 'Modality' })).json()) as { groups: unknown[] };
    assert.ok(byRoute.groups.length > 0);
    assert.deepEqual(byTool.structuredContent.groups, byRoute.groups);
  } finally {
    await mcp.close();
  }
  const refuse = async (body: unknown, re: RegExp) => {
    const r = await s.post('/v3/cohort/counts', body);
    const out = (await r.json()) as { error: { message: string } };
    assert.equal(r.status, 400, JSON.stringify(out));
    assert.match(out.error.message, re);
  };
  await refuse({ terms: { Manufacturer: ['GE'] }, as_of: from }, /Manufacturer, which earlier releases do not record; filters over releases may use collection_id/);
  await refuse({ ranges: { instanceCount: { gte: 2 } }, as_of: from }, /ranges \(instanceCount\)/);
  await refuse({ terms: { collection_id: [c] }, as_of: 'v1' }, /as_of is v1, which this data cannot answer: .*releases v2 to v25 can be asked/);
});
