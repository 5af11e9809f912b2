// Property tests of the cohort routes: random filters drawn from the real
// attribute values of the test dataset, checked against SQL written here
// independently (escaped literals, run through POST /v3/sql).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { lit } from './sql-text.ts';

let s: TestServer;
const TERM_ATTRS = ['collection_id', 'Modality', 'BodyPartExamined', 'PatientSex', 'license_short_name'] as const;
const RANGE_ATTRS = ['instanceCount', 'series_size_MB', 'StudyDate'] as const;
type RangeAttr = (typeof RANGE_ATTRS)[number];

const values = new Map<string, string[]>();
const bounds = new Map<RangeAttr, { min: number; max: number }>();
const DAY = 86_400_000;

before(async () => {
  s = await startServer();
  for (const a of TERM_ATTRS) {
    const rows = await s.ctx.engine.rows(`SELECT DISTINCT "${a}" AS v FROM "index" WHERE "${a}" IS NOT NULL ORDER BY 1`);
    values.set(a, rows.map((r) => String(r.v)));
  }
  for (const a of RANGE_ATTRS) {
    const r = await s.ctx.engine.one(`SELECT min("${a}") AS lo, max("${a}") AS hi FROM "index"`);
    const num = (v: unknown) => (a === 'StudyDate' ? Date.parse(`${String(v)}T00:00:00Z`) / DAY : Number(v));
    bounds.set(a, { min: num(r!.lo), max: num(r!.hi) });
  }
});
after(async () => {
  await s.close();
});

interface Filter {
  terms: Record<string, string[]>;
  ranges: Record<string, { gte?: number | string; lte?: number | string }>;
}

function rangeArb(a: RangeAttr): fc.Arbitrary<{ gte?: number | string; lte?: number | string }> {
  const { min, max } = bounds.get(a)!;
  const point: fc.Arbitrary<number | string> =
    a === 'instanceCount'
      ? fc.integer({ min, max })
      : a === 'series_size_MB'
        ? fc.double({ min, max, noNaN: true, noDefaultInfinity: true })
        : fc.integer({ min, max }).map((d) => new Date(d * DAY).toISOString().slice(0, 10));
  return fc
    .tuple(point, point, fc.constantFrom('gte', 'lte', 'both'))
    .map(([x, y, which]) => {
      const [lo, hi] = x <= y ? [x, y] : [y, x];
      return which === 'gte' ? { gte: lo } : which === 'lte' ? { lte: hi } : { gte: lo, lte: hi };
    });
}

function filterArb(): fc.Arbitrary<Filter> {
  const terms = fc
    .subarray([...TERM_ATTRS], { minLength: 0, maxLength: 3 })
    .chain((attrs) => fc.tuple(...attrs.map((a) => fc.subarray(values.get(a)!, { minLength: 1, maxLength: Math.min(3, values.get(a)!.length) }))).map((vals) => Object.fromEntries(attrs.map((a, i) => [a, vals[i]!]))));
  const ranges = fc
    .subarray([...RANGE_ATTRS], { minLength: 0, maxLength: 2 })
    .chain((attrs) => fc.tuple(...attrs.map(rangeArb)).map((rs) => Object.fromEntries(attrs.map((a, i) => [a, rs[i]!]))));
  return fc.record({ terms, ranges });
}


/** The WHERE clause of a filter, written independently of the service. */
function whereOf(f: Filter): string {
  const parts: string[] = [];
  for (const [a, vs] of Object.entries(f.terms)) parts.push(`"${a}" IN (${vs.map(lit).join(', ')})`);
  for (const [a, r] of Object.entries(f.ranges)) {
    if (r.gte !== undefined) parts.push(`"${a}" >= ${lit(r.gte)}`);
    if (r.lte !== undefined) parts.push(`"${a}" <= ${lit(r.lte)}`);
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

async function sql(q: string, maxRows = 10_000): Promise<Record<string, unknown>[]> {
  const r = await s.post('/v3/sql', { sql: q, max_rows: maxRows });
  const body = (await r.json()) as { rows: Record<string, unknown>[]; truncated: boolean };
  assert.equal(r.status, 200, JSON.stringify(body));
  assert.equal(body.truncated, false);
  return body.rows;
}

const isEmpty = (f: Filter) => Object.keys(f.terms).length === 0 && Object.keys(f.ranges).length === 0;
const PAGE = 7;
const MAX_FULL_PAGES = 25;

test('counts equal an independent SQL count of the same filter', async () => {
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(filterArb(), async (f) => {
      const r = await s.post('/v3/cohort/counts', f);
      const got = (await r.json()) as Record<string, number>;
      assert.equal(r.status, 200, JSON.stringify(got));
      const [want] = await sql(
        `SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series,
           COALESCE(sum(instanceCount), 0) AS instances, COALESCE(sum(series_size_MB), 0) AS mb FROM index WHERE ${whereOf(f)}`,
      );
      for (const k of ['patients', 'studies', 'series', 'instances'] as const) assert.equal(got[k], Number(want![k]), `${k} of ${JSON.stringify(f)}`);
      assert.ok(Math.abs(got.size_MB! - Number(want!.mb)) < 0.01);
      if (got.series! > 0) nonEmpty++;
      const lic = (await (await s.post('/v3/licenses', f)).json()) as { licenses: { series: number }[] };
      assert.equal(lic.licenses.reduce((a, l) => a + l.series, 0), got.series);
    }),
    { numRuns: 40, seed: 20240611 },
  );
  assert.ok(nonEmpty >= 10, `only ${nonEmpty} of the random cohorts had series`);
});

test('manifest pages are disjoint, in order, and cover the cohort; manifest.txt has one line per series', async () => {
  let fullyPaged = 0;
  let nonEmptyPaged = 0;
  await fc.assert(
    fc.asyncProperty(filterArb(), async (f) => {
      if (isEmpty(f)) {
        // An empty filter pages the whole release, with a warning, as the public service does.
        const r = await s.post('/v3/cohort/manifest', { filters: f, page_size: PAGE });
        assert.equal(r.status, 200);
        const whole = (await r.json()) as { total_series: number; warnings: string[] };
        assert.equal(whole.total_series, Number((await sql('SELECT count(*) AS n FROM index'))[0]!.n));
        assert.ok(whole.warnings.some((w) => /entire dataset/.test(w)), JSON.stringify(whole.warnings));
        return;
      }
      const want = (await sql(`SELECT SeriesInstanceUID AS u FROM index WHERE ${whereOf(f)} ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID`)).map(
        (r) => String(r.u),
      );
      const first = (await (await s.post('/v3/cohort/manifest', { filters: f, page_size: PAGE })).json()) as {
        total_series: number;
        total_pages: number;
        series: { SeriesInstanceUID: string }[];
      };
      assert.equal(first.total_series, want.length);
      assert.equal(first.total_pages, Math.ceil(want.length / PAGE));
      // Every page when there are few; otherwise the first two, one in the middle and the last (plus one beyond).
      const pages =
        first.total_pages <= MAX_FULL_PAGES
          ? Array.from({ length: first.total_pages + 1 }, (_, i) => i)
          : [0, 1, Math.floor(first.total_pages / 2), first.total_pages - 1, first.total_pages];
      const bodies = await Promise.all(
        pages.map(async (p) =>
          p === 0 ? first : ((await (await s.post('/v3/cohort/manifest', { filters: f, page_size: PAGE, page: p })).json()) as typeof first),
        ),
      );
      const seen = new Set<string>();
      bodies.forEach((b, i) => {
        const uids = b.series.map((r) => r.SeriesInstanceUID);
        assert.deepEqual(uids, want.slice(pages[i]! * PAGE, (pages[i]! + 1) * PAGE), `page ${pages[i]} of ${JSON.stringify(f)}`);
        for (const u of uids) {
          assert.ok(!seen.has(u), `series ${u} appears on two pages`);
          seen.add(u);
        }
      });
      if (first.total_pages <= MAX_FULL_PAGES) {
        assert.deepEqual([...seen].sort(), [...want].sort());
        fullyPaged++;
        if (want.length > PAGE) nonEmptyPaged++;
      }
      const txt = await s.post('/v3/cohort/manifest.txt', { filters: f });
      const lines = (await txt.text()).split('\n').filter((l) => l !== '');
      assert.equal(txt.status, 200);
      // No cap is configured: the whole cohort, every line a series.
      assert.equal(txt.headers.get('x-truncated'), 'false');
      assert.equal(lines.length, want.length);
      assert.equal(txt.headers.get('x-total-count'), String(want.length));
    }),
    { numRuns: 40, seed: 20240612 },
  );
  assert.ok(fullyPaged >= 10, `only ${fullyPaged} cohorts were paged through completely`);
  assert.ok(nonEmptyPaged >= 3, `only ${nonEmptyPaged} fully paged cohorts spanned several pages`);
});
