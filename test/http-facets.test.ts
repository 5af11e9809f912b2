// POST /v3/cohort/facets against SQL written here: random filters drawn from
// the real values of the test dataset (terms, ranges, identifiers), each
// facet's counts compared with a GROUP BY over every *other* filter (the
// attribute's own selection left out) and over all filters, bins with counts
// per bin, extremes with min/max, totals with /v3/cohort/counts.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { lit } from './sql-text.ts';

let s: TestServer;
const TERM_ATTRS = ['collection_id', 'Modality', 'BodyPartExamined', 'PatientSex', 'license_short_name', 'Manufacturer', 'analysis_result_id'] as const;
const RANGE_ATTRS = ['instanceCount', 'series_size_MB', 'StudyDate', 'series_init_idc_version'] as const;
const ENTITY = { patients: 'PatientID', studies: 'StudyInstanceUID', series: 'SeriesInstanceUID' } as const;
type Mode = keyof typeof ENTITY;

const values = new Map<string, string[]>();
const bounds = new Map<string, (number | string)[]>();
let patientIds: string[] = [];

interface Filter {
  terms: Record<string, string[]>;
  ranges: Record<string, { gte?: number | string; lte?: number | string }>;
}
interface Bucket {
  count: number;
  filtered_count: number;
}
interface TermFacet extends Record<string, unknown> {
  kind: 'term';
  categorical: boolean;
  selected: string[];
  values: ({ value: string } & Bucket)[];
  distinct: number | null;
  truncated: boolean;
  missing: Bucket | null;
}
interface RangeFacet extends Record<string, unknown> {
  kind: 'range';
  selected: { gte?: number | string; lte?: number | string } | null;
  min: number | string | null;
  max: number | string | null;
  bins: ({ gte: number | string; lt: number | string } & Bucket)[];
  missing: Bucket;
}
interface Facets {
  count: Mode;
  totals: Record<string, number>;
  facets: Record<string, TermFacet | RangeFacet>;
  filters_applied: Filter;
  warnings: string[];
}

before(async () => {
  s = await startServer();
  for (const a of TERM_ATTRS) {
    values.set(a, (await s.ctx.engine.rows(`SELECT DISTINCT "${a}" AS v FROM "index" WHERE "${a}" IS NOT NULL ORDER BY 1`)).map((r) => String(r.v)));
  }
  for (const a of RANGE_ATTRS) {
    // Bounds drawn from the values themselves, so that equality at a bound is exercised.
    bounds.set(a, (await s.ctx.engine.rows(`SELECT DISTINCT "${a}" AS v FROM "index" WHERE "${a}" IS NOT NULL ORDER BY 1`)).map((r) => r.v as number | string));
  }
  patientIds = (await s.ctx.engine.rows(`SELECT DISTINCT PatientID AS v FROM "index" ORDER BY 1`)).map((r) => String(r.v));
});
after(async () => {
  await s.close();
});


/** The WHERE clause of a filter, leaving out one attribute's own clause. */
function whereOf(f: Filter, except?: string): string {
  const parts: string[] = [];
  for (const [a, vs] of Object.entries(f.terms)) if (a !== except) parts.push(`"${a}" IN (${vs.map(lit).join(', ')})`);
  for (const [a, r] of Object.entries(f.ranges)) {
    if (a === except) continue;
    if (r.gte !== undefined) parts.push(`"${a}" >= ${lit(r.gte)}`);
    if (r.lte !== undefined) parts.push(`"${a}" <= ${lit(r.lte)}`);
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

async function sql(q: string) {
  return s.ctx.engine.rows(q);
}

function rangeArb(a: string): fc.Arbitrary<{ gte?: number | string; lte?: number | string }> {
  const vs = bounds.get(a)!;
  return fc.tuple(fc.constantFrom(...vs), fc.constantFrom(...vs), fc.constantFrom('gte', 'lte', 'both')).map(([x, y, which]) => {
    const [lo, hi] = x <= y ? [x, y] : [y, x];
    return which === 'gte' ? { gte: lo } : which === 'lte' ? { lte: hi } : { gte: lo, lte: hi };
  });
}

function filterArb(): fc.Arbitrary<Filter> {
  const terms = fc.subarray([...TERM_ATTRS], { minLength: 0, maxLength: 3 }).chain((attrs) =>
    fc
      .tuple(...attrs.map((a) => fc.subarray(values.get(a)!, { minLength: 1, maxLength: Math.min(3, values.get(a)!.length) })))
      .map((vals) => Object.fromEntries(attrs.map((a, i) => [a, vals[i]!]))),
  );
  const ids = fc.option(fc.subarray(patientIds, { minLength: 1, maxLength: 4 }), { freq: 5 });
  const ranges = fc
    .subarray([...RANGE_ATTRS], { minLength: 0, maxLength: 2 })
    .chain((attrs) => fc.tuple(...attrs.map(rangeArb)).map((rs) => Object.fromEntries(attrs.map((a, i) => [a, rs[i]!]))));
  return fc.record({ terms, ids, ranges }).map(({ terms: t, ids: p, ranges: r }) => ({ terms: p ? { ...t, PatientID: p } : t, ranges: r }));
}

async function facets(body: unknown): Promise<Facets> {
  const r = await s.post('/v3/cohort/facets', body);
  const json = (await r.json()) as Facets;
  assert.equal(r.status, 200, JSON.stringify(json));
  return json;
}

/** Counts of an attribute's values under a WHERE clause, by SQL. */
async function grouped(attr: string, mode: Mode, where: string): Promise<Map<string | null, number>> {
  const rows = await sql(`SELECT "${attr}"::VARCHAR AS v, count(DISTINCT "${ENTITY[mode]}") AS n FROM "index" WHERE ${where} GROUP BY 1`);
  return new Map(rows.map((r) => [r.v === null ? null : String(r.v), Number(r.n)]));
}

async function checkTerm(f: Filter, mode: Mode, attr: string, got: TermFacet) {
  const others = await grouped(attr, mode, whereOf(f, attr));
  const all = await grouped(attr, mode, whereOf(f));
  const label = `${attr} of ${JSON.stringify(f)} counting ${mode}`;
  assert.deepEqual(got.selected, f.terms[attr] ?? [], label);
  for (const v of got.values) {
    assert.equal(v.count, others.get(v.value) ?? 0, `${label}: count of ${v.value}`);
    assert.equal(v.filtered_count, all.get(v.value) ?? 0, `${label}: filtered_count of ${v.value}`);
  }
  if (got.categorical) {
    // Every value of the release is listed (the test dataset has fewer than the limit), most counted first.
    assert.equal(got.truncated, false);
    assert.deepEqual(new Set(got.values.map((v) => v.value)), new Set([...values.get(attr)!, ...(f.terms[attr] ?? [])]), label);
    const counts = got.values.map((v) => v.count);
    assert.deepEqual(counts, [...counts].sort((a, b) => b - a), `${label}: order`);
    assert.equal(got.distinct, [...others].filter(([k, n]) => k !== null && n > 0).length, `${label}: distinct`);
    assert.deepEqual(got.missing, { count: others.get(null) ?? 0, filtered_count: all.get(null) ?? 0 }, `${label}: missing`);
  } else {
    assert.deepEqual(got.values.map((v) => v.value), f.terms[attr] ?? [], label);
  }
}

async function checkRange(f: Filter, mode: Mode, attr: string, got: RangeFacet) {
  const label = `${attr} of ${JSON.stringify(f)} counting ${mode}`;
  const e = `"${ENTITY[mode]}"`;
  const bins = got.bins.map((b, i) => {
    const last = i === got.bins.length - 1;
    // Values outside the edges (none for numbers and well-formed dates) would join the first or last bin.
    const cond = `"${attr}" >= ${lit(b.gte)} AND "${attr}" < ${lit(b.lt)}` + (last ? ` OR "${attr}" >= ${lit(b.lt)}` : '') + (i === 0 ? ` OR "${attr}" < ${lit(b.gte)}` : '');
    return `count(DISTINCT ${e}) FILTER (WHERE ${cond})`;
  });
  const q = (where: string) =>
    sql(`SELECT ${[...bins, `count(DISTINCT ${e}) FILTER (WHERE "${attr}" IS NULL)`, `min("${attr}")`, `max("${attr}")`].map((x, i) => `${x} AS c${i}`).join(', ')} FROM "index" WHERE ${where}`);
  const [others] = await q(whereOf(f, attr));
  const [all] = await q(whereOf(f));
  got.bins.forEach((b, i) => {
    assert.equal(b.count, Number(others![`c${i}`]), `${label}: bin ${b.gte}..${b.lt}`);
    assert.equal(b.filtered_count, Number(all![`c${i}`]), `${label}: filtered bin ${b.gte}..${b.lt}`);
    if (i > 0) assert.equal(b.gte, got.bins[i - 1]!.lt, `${label}: bins are contiguous`);
  });
  const n = bins.length;
  assert.deepEqual(got.missing, { count: Number(others![`c${n}`]), filtered_count: Number(all![`c${n}`]) }, `${label}: missing`);
  const norm = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'string' ? v : Number(v));
  assert.equal(got.min, norm(others![`c${n + 1}`]), `${label}: min`);
  assert.equal(got.max, norm(others![`c${n + 2}`]), `${label}: max`);
  assert.deepEqual(got.selected, f.ranges[attr] ?? null, label);
}

test('facet counts equal SQL over every other filter and over all filters, for random filters', async () => {
  let withOwn = 0;
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(filterArb(), fc.constantFrom<Mode>('patients', 'studies', 'series'), async (f, mode) => {
      const attributes = [...TERM_ATTRS, ...RANGE_ATTRS, 'PatientID'];
      const got = await facets({ filters: f, attributes, count: mode, limit: 1000 });
      assert.equal(got.count, mode);
      assert.deepEqual(Object.keys(got.facets), attributes, 'facets in the order requested');
      const [c] = await sql(
        `SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(DISTINCT SeriesInstanceUID) AS series,
           coalesce(sum(instanceCount), 0) AS instances, coalesce(sum(series_size_MB), 0) AS mb FROM "index" WHERE ${whereOf(f)}`,
      );
      for (const k of ['patients', 'studies', 'series', 'instances'] as const) assert.equal(got.totals[k], Number(c![k]), `totals.${k} of ${JSON.stringify(f)}`);
      assert.ok(Math.abs(got.totals.size_MB! - Number(c!.mb)) < 0.01, 'totals.size_MB');
      if (got.totals.series! > 0) nonEmpty++;
      await Promise.all(
        attributes.map((a) => {
          const facet = got.facets[a]!;
          if (a in f.terms || a in f.ranges) withOwn++;
          return facet.kind === 'term' ? checkTerm(f, mode, a, facet) : checkRange(f, mode, a, facet);
        }),
      );
    }),
    { numRuns: 20, seed: 20250113 },
  );
  assert.ok(nonEmpty >= 8, `only ${nonEmpty} random cohorts had series`);
  assert.ok(withOwn >= 20, `only ${withOwn} facets had a filter of their own`);
});

test('totals equal /v3/cohort/counts; filters_applied and warnings are those of the other cohort routes', async () => {
  const coll = values.get('collection_id')![0]!;
  const filter = { terms: { collection_id: [coll, coll], Modality: ['ct'], BodyPartExamined: [] }, ranges: { instanceCount: { gte: 2 } } };
  const counts = (await (await s.post('/v3/cohort/counts', filter)).json()) as Record<string, unknown>;
  const got = await facets({ filters: filter, attributes: ['Modality'] });
  // `sql` (the cohort as SQL) is the counts route's own member.
  const { filters_applied, warnings, sql: _sql, ...totals } = counts;
  assert.deepEqual(got.totals, totals);
  assert.deepEqual(got.filters_applied, filters_applied);
  assert.deepEqual(got.warnings, warnings);
  assert.ok(got.warnings.some((w) => w.includes("'CT'")), 'case-mismatch warning');
  // The value with no exact match is still listed, with 0, so a client can show it as selected.
  assert.deepEqual(
    (got.facets.Modality as TermFacet).values.find((v) => v.value === 'ct'),
    { value: 'ct', count: 0, filtered_count: 0 },
  );
});

test('the default request covers every filterable attribute; an empty filter gives release-wide counts with a warning', async () => {
  const attrs = (await (await s.get('/v3/attributes')).json()) as { name: string; kind: string; categorical: boolean }[];
  const got = await facets({});
  assert.deepEqual(Object.keys(got.facets), attrs.map((a) => a.name));
  for (const a of attrs) assert.equal(got.facets[a.name]!.kind, a.kind, a.name);
  assert.equal(got.count, 'patients');
  const stats = (await (await s.get('/v3/stats')).json()) as Record<string, number>;
  assert.equal(got.totals.patients, stats.patients);
  assert.equal(got.totals.series, stats.series);
  assert.match(got.warnings[0]!, /filter is empty/);
  const mod = got.facets.Modality as TermFacet;
  const [top] = await sql(`SELECT Modality, count(DISTINCT PatientID) AS n FROM "index" GROUP BY 1 ORDER BY n DESC, Modality LIMIT 1`);
  assert.deepEqual(mod.values[0], { value: top!.Modality, count: Number(top!.n), filtered_count: Number(top!.n) });
  const date = got.facets.StudyDate as RangeFacet & { value_format?: string };
  assert.equal(date.value_format, 'YYYY-MM-DD');
  assert.match(String(date.bins[0]!.gte), /^\d{4}-\d{2}-01$/);
});

test('limit keeps the most counted values and always lists the selected ones; identifiers list only the selected', async () => {
  const colls = (await sql(`SELECT collection_id AS v, count(DISTINCT PatientID) AS n FROM "index" GROUP BY 1 ORDER BY n DESC, v`)).map((r) => String(r.v));
  const rare = colls.at(-1)!;
  const got = await facets({ filters: { terms: { collection_id: [rare] } }, attributes: ['collection_id', 'SeriesInstanceUID'], limit: 2 });
  const c = got.facets.collection_id as TermFacet;
  assert.equal(c.truncated, colls.length > 2);
  assert.deepEqual(c.values.map((v) => v.value), [...colls.slice(0, 2).filter((v) => v !== rare), rare].slice(0, 3));
  const uid = got.facets.SeriesInstanceUID as TermFacet;
  assert.deepEqual(uid, { kind: 'term', categorical: false, selected: [], values: [], distinct: null, truncated: false, missing: null });
});

test('a repeated request is answered from the cache, whatever the order of its values', async () => {
  const [a, b] = values.get('Modality')!;
  const f1 = { terms: { Modality: [a, b] }, ranges: { instanceCount: { gte: 1 } } };
  const f2 = { ranges: { instanceCount: { gte: 1 } }, terms: { Modality: [b, a] } };
  const x = await facets({ filters: f1, attributes: ['collection_id', 'StudyDate'] });
  const y = await facets({ filters: f2, attributes: ['collection_id', 'StudyDate'] });
  assert.deepEqual(y.facets, x.facets);
  assert.deepEqual(y.totals, x.totals);
});

test('bad requests are refused with a message that says what to fix', async () => {
  const cases: [unknown, number, RegExp][] = [
    [{ attributes: ['Modalty'] }, 400, /Unknown attribute 'Modalty' in attributes\. Did you mean 'Modality'\?/],
    [{ count: 'cases' }, 400, /count must be one of patients, studies, series; got "cases"/],
    [{ limit: 0 }, 422, /limit must be an integer from 1 to/],
    [{ filters: { terms: { Modalty: ['CT'] } } }, 400, /Unknown term filter attribute 'Modalty'/],
    [{ filters: { ranges: { StudyDate: { gte: 2001 } } } }, 400, /YYYY-MM-DD/],
    [{ terms: { Modality: ['CT'] } }, 422, /Unknown member "terms"/],
  ];
  for (const [body, status, re] of cases) {
    const r = await s.post('/v3/cohort/facets', body);
    const e = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(r.status, status, JSON.stringify(body));
    assert.match(e.error.message, re, JSON.stringify(body));
  }
});
