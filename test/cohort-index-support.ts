// Shared by the cohort index tests: random /v3 filters over every filterable
// attribute of a database (values drawn from its own rows, other casings of
// them, unknown values, empty selections, bounds inside and outside the
// data, dates in both accepted forms), and the counts of many filters by SQL
// written here, a batch of filters per scan (FILTER clauses), so thousands
// of filters can be checked on the real release too.

import fc from 'fast-check';
import type { AppContext } from '../src/core/context.ts';
import { ATTRIBUTES } from '../src/core/registry/attributes.ts';

export interface Filter {
  terms: Record<string, string[]>;
  ranges: Record<string, { gte?: number | string; lte?: number | string }>;
  /** A union: the rows any member selects (members hold no union of their own). */
  any_of?: Filter[];
}

export interface Sample {
  terms: Map<string, string[]>;
  numbers: Map<string, number[]>;
  dates: Map<string, string[]>;
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const lit = (v: number | string) => (typeof v === 'number' ? String(v) : `'${v.replaceAll("'", "''")}'`);

/** Up to `n` values of every filterable attribute of the database's `index` (a deterministic spread). */
export async function sampleOf(ctx: AppContext, n = 120): Promise<Sample> {
  const columns = new Set((ctx.catalog.columns.get('index') ?? []).map((c) => c.name));
  const s: Sample = { terms: new Map(), numbers: new Map(), dates: new Map() };
  for (const a of ATTRIBUTES) {
    if (!columns.has(a.name)) continue;
    const rows = await ctx.engine.rows(
      `SELECT v FROM (SELECT DISTINCT ${q(a.name)} AS v FROM "index" WHERE ${q(a.name)} IS NOT NULL) ORDER BY hash(v::VARCHAR) LIMIT ${n}`,
    );
    const extremes = await ctx.engine.one(`SELECT min(${q(a.name)}) AS lo, max(${q(a.name)}) AS hi FROM "index"`);
    if (a.kind === 'term') s.terms.set(a.name, rows.map((r) => String(r.v)));
    else if (a.date) s.dates.set(a.name, [...rows.map((r) => String(r.v)), String(extremes!.lo), String(extremes!.hi)]);
    else s.numbers.set(a.name, [...rows.map((r) => Number(r.v)), Number(extremes!.lo), Number(extremes!.hi)]);
  }
  return s;
}

/** A value with every letter's case swapped (exists, if at all, only in another casing). */
const swapCase = (v: string) => [...v].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');

function termValues(values: string[]): fc.Arbitrary<string[]> {
  const one = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...values) },
    { weight: 2, arbitrary: fc.constantFrom(...values).map(swapCase) },
    { weight: 1, arbitrary: fc.constantFrom(...values).map((v) => v.toLowerCase()) },
    { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
    { weight: 1, arbitrary: fc.constant("no such value, it's unknown") },
  );
  return fc.array(one, { minLength: 0, maxLength: 4 });
}

function numberPoint(values: number[]): fc.Arbitrary<number> {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...values) },
    { weight: 2, arbitrary: fc.integer({ min: Math.floor(lo) - 2, max: Math.ceil(hi) + 2 }) },
    { weight: 2, arbitrary: fc.double({ min: lo - 1, max: hi + 1, noNaN: true, noDefaultInfinity: true }) },
  );
}

function datePoint(values: string[]): fc.Arbitrary<string> {
  const valid = values.filter((v) => /^\d{4}-\d{2}-\d{2}$/.test(v));
  const day = 86_400_000;
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...valid) },
    // The DICOM form of a stored date.
    { weight: 2, arbitrary: fc.constantFrom(...valid).map((v) => v.replaceAll('-', '')) },
    { weight: 2, arbitrary: fc.integer({ min: Date.UTC(1900, 0, 1) / day, max: Date.UTC(2031, 0, 1) / day }).map((d) => new Date(d * day).toISOString().slice(0, 10)) },
  );
}

function rangeOf(point: fc.Arbitrary<number | string>): fc.Arbitrary<{ gte?: number | string; lte?: number | string }> {
  const key = (v: number | string) => (typeof v === 'string' ? v.replaceAll('-', '') : v);
  return fc.tuple(point, point, fc.constantFrom('gte', 'lte', 'both', 'both')).map(([x, y, which]): { gte?: number | string; lte?: number | string } => {
    const [lo, hi] = key(x) <= key(y) ? [x, y] : [y, x];
    return which === 'gte' ? { gte: lo } : which === 'lte' ? { lte: hi } : { gte: lo, lte: hi };
  });
}

/** Random filters over up to `most` attributes of the sample. */
export function filterArb(s: Sample, most = 4): fc.Arbitrary<Filter> {
  const parts: [string, fc.Arbitrary<['terms' | 'ranges', unknown]>][] = [];
  for (const [a, values] of s.terms) if (values.length > 0) parts.push([a, termValues(values).map((v) => ['terms', v])]);
  for (const [a, values] of s.numbers) if (values.length > 0) parts.push([a, rangeOf(numberPoint(values)).map((v) => ['ranges', v])]);
  for (const [a, values] of s.dates) if (values.some((v) => /^\d{4}-\d{2}-\d{2}$/.test(v))) parts.push([a, rangeOf(datePoint(values)).map((v) => ['ranges', v])]);
  return fc
    .subarray(parts, { minLength: 0, maxLength: most })
    .chain((chosen) => fc.tuple(...chosen.map(([, arb]) => arb)).map((picked) => ({ chosen, picked })))
    .map(({ chosen, picked }) => {
      const f: Filter = { terms: {}, ranges: {} };
      chosen.forEach(([a], i) => {
        const [kind, v] = picked[i]!;
        if (kind === 'terms') f.terms[a] = v as string[];
        else f.ranges[a] = v as Filter['ranges'][string];
      });
      return f;
    });
}

const iso = (v: number | string) => (typeof v === 'string' ? v.replace(/^(\d{4})-?(\d{2})-?(\d{2})$/, '$1-$2-$3') : v);

/** Random filters, some of them with a union (any_of) of one to three filters, empty ones included. */
export function unionArb(s: Sample): fc.Arbitrary<Filter> {
  return fc
    .tuple(filterArb(s, 2), fc.array(filterArb(s, 2), { minLength: 0, maxLength: 3 }))
    .map(([f, members]) => (members.length > 0 ? { ...f, any_of: members } : f));
}

/** The WHERE clause of a filter, written independently of the service. */
export function whereOf(f: Filter): string {
  const parts: string[] = [];
  if (f.any_of && f.any_of.length > 0) parts.push(`(${f.any_of.map((m) => `(${whereOf(m)})`).join(' OR ')})`);
  for (const [a, vs] of Object.entries(f.terms)) if (vs.length > 0) parts.push(`${q(a)} IN (${vs.map(lit).join(', ')})`);
  for (const [a, r] of Object.entries(f.ranges)) {
    if (r.gte !== undefined) parts.push(`${q(a)} >= ${lit(iso(r.gte))}`);
    if (r.lte !== undefined) parts.push(`${q(a)} <= ${lit(iso(r.lte))}`);
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

export interface Reference {
  patients: number;
  studies: number;
  series: number;
  instances: number;
  size_MB: number;
}

/**
 * Counts of every filter by SQL, `batch` filters per scan (1 is fastest on a
 * small table, 10 on the real release). Series are counted
 * as rows: the caller checks first that every row is one distinct series.
 */
export async function referenceCounts(ctx: AppContext, filters: Filter[], batch: number): Promise<Reference[]> {
  const out: Reference[] = [];
  for (let i = 0; i < filters.length; i += batch) {
    const part = filters.slice(i, i + batch);
    const select = part
      .map((f, k) => {
        // One filter: a plain WHERE (faster on a small table); several: one FILTER clause each, one scan.
        const w = batch === 1 ? '' : `FILTER (WHERE ${whereOf(f)})`;
        return `count(DISTINCT PatientID) ${w} AS p${k}, count(DISTINCT StudyInstanceUID) ${w} AS st${k}, count(*) ${w} AS se${k}, sum(instanceCount) ${w} AS i${k}, sum(series_size_MB) ${w} AS mb${k}`;
      })
      .join(', ');
    const r = (await ctx.engine.one(`SELECT ${select} FROM "index"${batch === 1 ? ` WHERE ${whereOf(part[0]!)}` : ''}`))!;
    part.forEach((_, k) => {
      out.push({
        patients: Number(r[`p${k}`]),
        studies: Number(r[`st${k}`]),
        series: Number(r[`se${k}`]),
        instances: Number(r[`i${k}`] ?? 0),
        size_MB: Number(r[`mb${k}`] ?? 0),
      });
    });
  }
  return out;
}
