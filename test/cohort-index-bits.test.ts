// The bitset paths of the cohort index's counts (evaluate.ts, bit-totals.ts),
// drawn on purpose: terms selecting most of the rows (set as all rows less the
// postings of the other values) or few of them, ranges selecting nearly every
// row (all less the rows outside, missing values included) or a narrow window
// (their rows in value order), several clauses where a later one either tests
// the words still set or ANDs its own bits, and unions. Every answer of
// POST /v3/cohort/counts is compared with SQL written here, on the test
// dataset and on the real release (whose patients in two collections are
// counted apart from the runs of adjacent rows). The draw is checked to hold
// both wide and narrow clauses of both kinds, measured by SQL. The first
// counts after start, made from the selection's rows before the bitset
// counting is prepared, are compared with SQL too.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { lit, referenceCounts, type Filter, type Reference } from './cohort-index-support.ts';
import { compileFilter } from '../src/core/filters/v3.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { selectBits } from '../src/core/services/cohort-index/evaluate.ts';
import { indexTotals } from '../src/core/services/cohort-index/answers.ts';
import { bitTotalsReady } from '../src/core/services/cohort-index/bit-totals.ts';
import { ATTRIBUTES } from '../src/core/registry/attributes.ts';
import { pinnedRelease, SKIP_REAL } from './real-releases.ts';

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

interface Domain {
  /** Categorical attributes: their values, most frequent first. */
  terms: Map<string, string[]>;
  /** Range attributes: values at the 0, 1, 5, 25, 50, 75, 95, 99 and 100th percentiles. */
  points: Map<string, (number | string)[]>;
}

async function domainOf(s: TestServer): Promise<Domain> {
  const held = new Set((s.ctx.catalog.columns.get('index') ?? []).map((c) => c.name));
  const d: Domain = { terms: new Map(), points: new Map() };
  for (const a of ATTRIBUTES) {
    if (!held.has(a.name) || a.collection) continue;
    if (a.kind === 'term' && a.categorical) {
      const rows = await s.ctx.engine.rows(`SELECT ${q(a.name)}::VARCHAR AS v FROM "index" WHERE ${q(a.name)} IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1`);
      if (rows.length >= 2) d.terms.set(a.name, rows.map((r) => String(r.v)));
    } else if (a.kind === 'range') {
      const r = await s.ctx.engine.one(
        `SELECT quantile_disc(${q(a.name)}, [0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1])${a.date ? '::VARCHAR[]' : '::DOUBLE[]'} AS p FROM "index"`,
      );
      const p = r!.p as unknown[] | null;
      if (p && p.length > 0 && p[0] !== null) d.points.set(a.name, p.map((x) => (a.date ? String(x) : Number(x))));
    }
  }
  return d;
}

/** One clause: a term selecting few values, or all but a few; a range inside the data, or around nearly all of it. */
function clauseArb(d: Domain): fc.Arbitrary<[string, 'terms' | 'ranges', unknown]> {
  const parts: fc.Arbitrary<[string, 'terms' | 'ranges', unknown]>[] = [];
  for (const [a, values] of d.terms) {
    const few = fc.subarray(values, { minLength: 1, maxLength: 3 });
    // The 30 most frequent values less up to two of them (the first kept, so most rows are selected), sometimes plus one unknown.
    const top = values.slice(0, 30);
    const most = fc
      .tuple(fc.subarray(top.slice(1), { minLength: 0, maxLength: 2 }), fc.boolean())
      .map(([left, unknown]) => [...top.filter((v) => !left.includes(v)), ...(unknown ? ['no such value'] : [])]);
    parts.push(fc.oneof(few, most).map((v): [string, 'terms', unknown] => [a, 'terms', v]));
  }
  for (const [a, p] of d.points) {
    const inner = fc.tuple(fc.integer({ min: 1, max: p.length - 2 }), fc.integer({ min: 0, max: 2 })).map(([i, w]) => ({ gte: p[i]!, lte: p[Math.min(p.length - 1, i + w)]! }));
    const wide = fc.constantFrom({ gte: p[0]! }, { lte: p.at(-1)! }, { gte: p[1]! }, { lte: p.at(-2)! }, { gte: p[0]!, lte: p.at(-2)! }, { gte: p[1]!, lte: p.at(-1)! });
    parts.push(fc.oneof(inner, wide).map((v): [string, 'ranges', unknown] => [a, 'ranges', v]));
  }
  return fc.oneof(...parts);
}

function filterArb(d: Domain, most: number): fc.Arbitrary<Filter> {
  return fc.array(clauseArb(d), { minLength: 1, maxLength: most }).map((clauses) => {
    const f: Filter = { terms: {}, ranges: {} };
    for (const [a, kind, v] of clauses) {
      if (kind === 'terms') f.terms[a] = v as string[];
      else f.ranges[a] = v as Filter['ranges'][string];
    }
    return f;
  });
}

const unionArb = (d: Domain) =>
  fc.tuple(fc.oneof(filterArb(d, 2), fc.constant<Filter>({ terms: {}, ranges: {} })), fc.array(filterArb(d, 2), { minLength: 1, maxLength: 3 })).map(([f, any_of]) => ({ ...f, any_of }));

function same(got: Record<string, number>, want: Reference, f: Filter): void {
  const where = JSON.stringify(f);
  for (const k of ['patients', 'studies', 'series', 'instances'] as const) assert.equal(got[k], want[k], `${k} of ${where}`);
  assert.ok(Math.abs(got.size_MB! - want.size_MB) <= 0.0005 + 1e-12 * Math.abs(want.size_MB), `size_MB of ${where}: ${got.size_MB} vs ${want.size_MB}`);
}

/** Share of the rows each clause of the filters selects on its own, by SQL (one scan per 50 clauses). */
async function shares(s: TestServer, filters: Filter[], rows: number): Promise<{ kind: 'terms' | 'ranges'; share: number }[]> {
  const clauses: { kind: 'terms' | 'ranges'; where: string }[] = [];
  for (const f of filters) {
    for (const [a, vs] of Object.entries(f.terms)) {
      const known = vs.filter((v): v is string => v !== null);
      const parts = [...(known.length ? [`${q(a)} IN (${known.map(lit).join(', ')})`] : []), ...(vs.includes(null) ? [`${q(a)} IS NULL`] : [])];
      clauses.push({ kind: 'terms', where: `(${parts.join(' OR ')})` });
    }
    for (const [a, r] of Object.entries(f.ranges)) {
      const where = [r.gte === undefined ? 'TRUE' : `${q(a)} >= ${lit(r.gte)}`, r.lte === undefined ? 'TRUE' : `${q(a)} <= ${lit(r.lte)}`].join(' AND ');
      clauses.push({ kind: 'ranges', where });
    }
  }
  const out: { kind: 'terms' | 'ranges'; share: number }[] = [];
  for (let i = 0; i < clauses.length; i += 50) {
    const part = clauses.slice(i, i + 50);
    const r = (await s.ctx.engine.one(`SELECT ${part.map((c, k) => `count(*) FILTER (WHERE ${c.where}) AS n${k}`).join(', ')} FROM "index"`))!;
    part.forEach((c, k) => out.push({ kind: c.kind, share: Number(r[`n${k}`]) / rows }));
  }
  return out;
}

async function check(s: TestServer, n: number, seed: number, batch: number): Promise<void> {
  const ix = await cohortIndex(s.ctx);
  assert.ok(ix, 'the index is built');
  const unique = await s.ctx.engine.one(`SELECT count(*) = count(DISTINCT SeriesInstanceUID) AS u FROM "index"`);
  assert.equal(unique!.u, true, 'the reference counts series as rows');
  const d = await domainOf(s);
  assert.ok(d.terms.size >= 3 && d.points.size >= 3, `attributes to draw from: ${[...d.terms.keys(), ...d.points.keys()].join(', ')}`);
  const filters = [...fc.sample(filterArb(d, 3), { numRuns: n, seed }), ...fc.sample(unionArb(d), { numRuns: Math.ceil(n / 4), seed: seed + 1 })];
  const want = await referenceCounts(s.ctx, filters, batch);
  const seen = { wideTerms: 0, fewTerms: 0, wideRanges: 0, narrowRanges: 0 };
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i]!;
    // The index evaluates the filter itself (no fallback to SQL).
    const compiled = await compileFilter(s.ctx, f);
    assert.notEqual(selectBits(ix, compiled.filters_applied), null, `the index cannot evaluate ${JSON.stringify(f)}`);
    const r = await s.post('/v3/cohort/counts', f);
    const body = (await r.json()) as Record<string, number>;
    assert.equal(r.status, 200, JSON.stringify(body));
    same(body, want[i]!, f);
  }
  for (const { kind, share } of await shares(s, filters.slice(0, n), ix.rows)) {
    if (kind === 'terms') seen[share > 0.5 ? 'wideTerms' : 'fewTerms']++;
    else if (share > 0.5) seen.wideRanges++;
    else if (share > 0) seen.narrowRanges++;
  }
  // Both sides of each choice were drawn (more than half the rows, and fewer).
  for (const [k, v] of Object.entries(seen)) assert.ok(v >= n / 20, `${k}: only ${v} clauses of ${n} filters`);
}

test('300 filters of wide and narrow clauses, and 75 unions: the index counts as SQL on the test dataset', async () => {
  const s = await startServer();
  servers.push(s);
  await check(s, 300, 31, 1);
});

test('50 filters of wide and narrow clauses, and 13 unions: the index counts as SQL on the real release', { skip: SKIP_REAL }, async () => {
  const s = await startServer({}, (await pinnedRelease()).db);
  servers.push(s);
  await check(s, 50, 32, 10);
});

/** The first counts of a fresh index (before bitTotals' structures exist): from the rows of each selection, as SQL counts them. */
async function checkFirst(s: TestServer, n: number, seed: number, batch: number): Promise<void> {
  const ix = await cohortIndex(s.ctx);
  assert.ok(ix, 'the index is built');
  // A copy of the index: the same arrays, none of the structures or answers kept per index object.
  const fresh = { ...ix };
  const d = await domainOf(s);
  const filters = fc.sample(filterArb(d, 3), { numRuns: n, seed });
  const want = await referenceCounts(s.ctx, filters, batch);
  const compiled = await Promise.all(filters.map((f) => compileFilter(s.ctx, f)));
  // Counted in one synchronous pass: the structures are built after it, on a later turn of the event loop.
  const got = compiled.map((c) => indexTotals(fresh, c.filters_applied));
  assert.equal(bitTotalsReady(fresh), false, 'the first counts were made from rows');
  got.forEach((t, i) => {
    assert.ok(t, `the index evaluates ${JSON.stringify(filters[i])}`);
    same({ patients: t.patients, studies: t.studies, series: t.series, instances: t.instances, size_MB: t.size_mb }, want[i]!, filters[i]!);
  });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(bitTotalsReady(fresh), true, 'the bitset counting is prepared right after');
}

test('the first counts after start (from rows, before the bitset counting is prepared) equal SQL on the test dataset', async () => {
  const s = await startServer();
  servers.push(s);
  await checkFirst(s, 100, 33, 1);
});

test('the first counts after start equal SQL on the real release', { skip: SKIP_REAL }, async () => {
  const s = await startServer({}, (await pinnedRelease()).db);
  servers.push(s);
  await checkFirst(s, 20, 34, 10);
});
