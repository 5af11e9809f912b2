// POST /v3/cohort/facets on the pinned real release against SQL written here:
// seeded random filters whose values and bounds are drawn from random rows of
// the release (so cohorts are seldom empty), every count mode, every term and
// range attribute with a slot of the facet table. The release walks patients
// and studies in an order of its own (patients in two collections) and its
// rows repeat most codes of the row before, which the facet pass skips
// (repeats.ts); range extremes are read from the rows in order of value
// (extremes.ts): both are compared here with count(DISTINCT) and min/max.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './fixture.ts';
import { pinnedRelease, SKIP_REAL } from './real-releases.ts';
import { lit } from './sql-text.ts';

type Mode = 'patients' | 'studies' | 'series';
const ENTITY: Record<Mode, string> = { patients: 'PatientID', studies: 'StudyInstanceUID', series: 'SeriesInstanceUID' };
const TERMS = ['collection_id', 'Modality', 'Manufacturer', 'PatientSex'] as const;
const RANGES = ['instanceCount', 'series_size_MB', 'StudyDate'] as const;

interface Filter {
  terms: Record<string, string[]>;
  ranges: Record<string, { gte?: number | string; lte?: number | string }>;
}
interface Bucket {
  count: number;
  filtered_count: number;
}
type Facet =
  | { kind: 'term'; values: ({ value: string } & Bucket)[]; missing: Bucket; truncated: boolean }
  | { kind: 'range'; min: number | string | null; max: number | string | null; bins: ({ gte: number | string; lt: number | string } & Bucket)[]; missing: Bucket };

let s: TestServer | undefined;
let sample: Record<string, unknown>[] = [];

before(async () => {
  if (SKIP_REAL) return;
  // The checks' count(DISTINCT) over a million rows run side by side: a deadline for the slowest of them.
  s = await startServer({ queryTimeoutMs: 300_000 }, (await pinnedRelease()).db);
  // 300 rows in an order fixed by a hash of their rowid: the same filters every run.
  sample = await s.ctx.engine.rows(`SELECT ${[...TERMS, ...RANGES].map((a) => `"${a}"`).join(', ')} FROM "index" ORDER BY hash(rowid + 22) LIMIT 300`);
});
after(async () => {
  await s?.close();
});

const norm = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'string' ? v : Number(v));

/** Seeded pseudo-random numbers. */
function rng(seed: number): () => number {
  let x = seed;
  return () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

function randomFilter(random: () => number): Filter {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const value = (a: string) => {
    for (let k = 0; k < 20; k++) {
      const v = norm(pick(sample)[a]);
      if (v !== null) return v;
    }
    return null;
  };
  const f: Filter = { terms: {}, ranges: {} };
  for (const a of TERMS) {
    if (random() < 0.25) {
      const vs = [...new Set([value(a), value(a)].filter((v): v is string => typeof v === 'string'))];
      if (vs.length > 0) f.terms[a] = vs;
    }
  }
  for (const a of RANGES) {
    if (random() < 0.3) {
      const x = value(a);
      const y = value(a);
      if (x === null || y === null) continue;
      const [lo, hi] = x <= y ? [x, y] : [y, x];
      const r = random();
      f.ranges[a] = r < 0.4 ? { gte: lo } : r < 0.7 ? { lte: hi } : { gte: lo, lte: hi };
    }
  }
  return f;
}

/** Conditions of a filter's clauses, by attribute. */
function clausesOf(f: Filter): Map<string, string> {
  const m = new Map<string, string>();
  for (const [a, vs] of Object.entries(f.terms)) m.set(a, `"${a}" IN (${vs.map(lit).join(', ')})`);
  for (const [a, r] of Object.entries(f.ranges)) {
    const parts: string[] = [];
    if (r.gte !== undefined) parts.push(`"${a}" >= ${lit(r.gte)}`);
    if (r.lte !== undefined) parts.push(`"${a}" <= ${lit(r.lte)}`);
    m.set(a, parts.join(' AND '));
  }
  return m;
}

function whereOf(f: Filter, except?: string): string {
  const parts = [...clausesOf(f)].filter(([a]) => a !== except).map(([, c]) => `(${c})`);
  return parts.length > 0 ? parts.join(' AND ') : 'TRUE';
}

async function check(server: TestServer, f: Filter, mode: Mode, attr: string, got: Facet): Promise<void> {
  const label = `${attr} of ${JSON.stringify(f)} counting ${mode}`;
  const e = `"${ENTITY[mode]}"`;
  // Rows passing every other clause; "filtered" also passes the attribute's own.
  const own = clausesOf(f).get(attr) ?? 'TRUE';
  const where = whereOf(f, attr);
  if (got.kind === 'term') {
    const rows = await server.ctx.engine.rows(
      `SELECT "${attr}"::VARCHAR AS v, count(DISTINCT ${e}) AS n, ${own === 'TRUE' ? 'NULL' : `count(DISTINCT ${e}) FILTER (WHERE ${own})`} AS fn FROM "index" WHERE ${where} GROUP BY 1`,
    );
    const want = new Map(rows.map((r) => [r.v === null ? null : String(r.v), { count: Number(r.n), filtered_count: Number(r.fn ?? r.n) }]));
    assert.equal(got.truncated, false, label);
    const listed = got.values.filter((v) => v.count > 0);
    assert.deepEqual(
      new Map(listed.map((v) => [v.value, { count: v.count, filtered_count: v.filtered_count }])),
      new Map([...want].filter(([k, v]) => k !== null && v.count > 0)),
      label,
    );
    assert.deepEqual(got.missing, want.get(null) ?? { count: 0, filtered_count: 0 }, `${label}: missing`);
    return;
  }
  const a = `"${attr}"`;
  const cols: string[] = [];
  got.bins.forEach((b, i) => {
    const last = i === got.bins.length - 1;
    const cond = `(${a} >= ${lit(b.gte)} AND ${a} < ${lit(b.lt)})` + (last ? ` OR ${a} >= ${lit(b.lt)}` : '') + (i === 0 ? ` OR ${a} < ${lit(b.gte)}` : '');
    cols.push(`count(DISTINCT ${e}) FILTER (WHERE ${cond})`, own === 'TRUE' ? 'NULL' : `count(DISTINCT ${e}) FILTER (WHERE (${cond}) AND ${own})`);
  });
  cols.push(`count(DISTINCT ${e}) FILTER (WHERE ${a} IS NULL)`, own === 'TRUE' ? 'NULL' : `count(DISTINCT ${e}) FILTER (WHERE ${a} IS NULL AND ${own})`);
  // Extremes over the rows with an entity, as the facet counts them.
  cols.push(`min(${a}) FILTER (WHERE ${e} IS NOT NULL)`, `max(${a}) FILTER (WHERE ${e} IS NOT NULL)`);
  const [r] = await server.ctx.engine.rows(`SELECT ${cols.map((c, i) => `${c} AS c${i}`).join(', ')} FROM "index" WHERE ${where}`);
  got.bins.forEach((b, i) => {
    assert.deepEqual({ count: b.count, filtered_count: b.filtered_count }, { count: Number(r![`c${2 * i}`]), filtered_count: Number(r![`c${2 * i + 1}`] ?? r![`c${2 * i}`]) }, `${label}: bin ${b.gte}..${b.lt}`);
  });
  const n = 2 * got.bins.length;
  assert.deepEqual(got.missing, { count: Number(r![`c${n}`]), filtered_count: Number(r![`c${n + 1}`] ?? r![`c${n}`]) }, `${label}: missing`);
  assert.equal(got.min, norm(r![`c${n + 2}`]), `${label}: min`);
  assert.equal(got.max, norm(r![`c${n + 3}`]), `${label}: max`);
}

test('facets of the real release equal SQL for random filters, in every count mode', { skip: SKIP_REAL }, async () => {
  const server = s!;
  const random = rng(20261126);
  // The benchmark's filter (one range, most rows in the cohort), then random ones.
  const filters: Filter[] = [{ terms: {}, ranges: { instanceCount: { gte: 7 } } }];
  while (filters.length < 4) {
    const f = randomFilter(random);
    if (Object.keys(f.terms).length + Object.keys(f.ranges).length > 0) filters.push(f);
  }
  const modes: Mode[] = ['patients', 'studies', 'series'];
  let nonEmpty = 0;
  for (const [i, f] of filters.entries()) {
    const mode = i === 0 ? 'patients' : modes[i % 3]!;
    const r = await server.post('/v3/cohort/facets', { filters: f, attributes: [...TERMS, ...RANGES], count: mode, limit: 10_000 });
    const body = (await r.json()) as { totals: { series: number }; facets: Record<string, Facet> };
    assert.equal(r.status, 200, JSON.stringify(body).slice(0, 400));
    if (body.totals.series > 0) nonEmpty++;
    await Promise.all([...TERMS, ...RANGES].map((a) => check(server, f, mode, a, body.facets[a]!)));
  }
  assert.ok(nonEmpty >= 3, `only ${nonEmpty} of ${filters.length} cohorts had series`);
});
