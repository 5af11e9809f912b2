// Shared by the cohort index tests: random /v3 filters over every filterable
// attribute of a database (values drawn from its own rows, other casings of
// them, unknown values, empty selections, bounds inside and outside the
// data, dates in both accepted forms, the missing value (null) among terms,
// all_terms, the collection-level attributes of collections_index with their
// lists split here in SQL), and the counts of many filters by SQL
// written here, a batch of filters per scan (FILTER clauses), so thousands
// of filters can be checked on the real release too.

import fc from 'fast-check';
import type { AppContext } from '../src/core/context.ts';
import { ATTRIBUTES, ATTRIBUTE_BY_NAME } from '../src/core/registry/attributes.ts';
import { lit } from './sql-text.ts';

export interface Filter {
  /** null: the missing value (categorical attributes). */
  terms: Record<string, (string | null)[]>;
  /** Values a study must all hold (categorical attributes of the series). */
  all_terms?: Record<string, string[]>;
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
export { lit };

/** Up to `n` values of every filterable attribute of the database's `index` (a deterministic spread). */
export async function sampleOf(ctx: AppContext, n = 120): Promise<Sample> {
  const columns = new Set((ctx.catalog.columns.get('index') ?? []).map((c) => c.name));
  const collectionColumns = new Set((ctx.catalog.columns.get('collections_index') ?? []).map((c) => c.name));
  const s: Sample = { terms: new Map(), numbers: new Map(), dates: new Map() };
  for (const a of ATTRIBUTES) {
    if (a.collection) {
      if (!collectionColumns.has(a.collection.column)) continue;
      const rows = await ctx.engine.rows(`SELECT DISTINCT unnest(${collectionValuesSql(a.name)}) AS v FROM collections_index ORDER BY hash(v) LIMIT ${n}`);
      s.terms.set(a.name, rows.map((r) => String(r.v)));
      continue;
    }
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

/**
 * The values of a collection-level attribute in collections_index as an SQL
 * list: the cell, or for a list column its comma-separated pieces, trimmed,
 * without empties and repeats, a piece "Not Otherwise Specified" or "NOS"
 * kept with the one before it (as the portal lists them).
 */
export function collectionValuesSql(attr: string): string {
  const def = ATTRIBUTE_BY_NAME.get(attr)!.collection!;
  const col = `${q(def.column)}::VARCHAR`;
  if (!def.list) return `list_filter([trim(coalesce(${col}, ''))], x -> x <> '')`;
  const qualifier = `'^(?i)(not otherwise specified|nos)$'`;
  const pieces = `list_filter(list_transform(string_split(coalesce(${col}, ''), ','), x -> trim(x)), x -> x <> '')`;
  return (
    `list_distinct(list_filter(list_transform(${pieces}, (x, i) -> CASE WHEN i > 1 AND regexp_matches(x, ${qualifier}) THEN NULL ` +
    `WHEN i < len(${pieces}) AND regexp_matches(${pieces}[i + 1], ${qualifier}) THEN x || ', ' || ${pieces}[i + 1] ELSE x END), x -> x IS NOT NULL))`
  );
}

/** Values, or (categorical attributes) values with null, the missing value, among them. */
function termsOf(attr: string, values: string[]): fc.Arbitrary<(string | null)[]> {
  const plain = termValues(values);
  if (!ATTRIBUTE_BY_NAME.get(attr)!.categorical) return plain;
  return fc.tuple(plain, fc.integer({ min: 0, max: 3 })).map(([vs, k]) => (k === 0 ? [...vs, null] : vs));
}

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
  const parts: [string, fc.Arbitrary<['terms' | 'all_terms' | 'ranges', unknown]>][] = [];
  for (const [a, values] of s.terms) {
    if (values.length === 0) continue;
    const def = ATTRIBUTE_BY_NAME.get(a)!;
    const terms = termsOf(a, values).map((v): ['terms', unknown] => ['terms', v]);
    // all_terms: a few values of the attribute (rarely an unknown one), for the categorical attributes of the series.
    const allTerms = fc
      .array(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: fc.constant('no such value') }), { minLength: 1, maxLength: 3 })
      .map((v): ['all_terms', unknown] => ['all_terms', v]);
    parts.push([a, def.categorical && !def.collection ? fc.oneof({ weight: 3, arbitrary: terms }, { weight: 1, arbitrary: allTerms }) : terms]);
  }
  for (const [a, values] of s.numbers) if (values.length > 0) parts.push([a, rangeOf(numberPoint(values)).map((v) => ['ranges', v])]);
  for (const [a, values] of s.dates) if (values.some((v) => /^\d{4}-\d{2}-\d{2}$/.test(v))) parts.push([a, rangeOf(datePoint(values)).map((v) => ['ranges', v])]);
  return fc
    .subarray(parts, { minLength: 0, maxLength: most })
    .chain((chosen) => fc.tuple(...chosen.map(([, arb]) => arb)).map((picked) => ({ chosen, picked })))
    .map(({ chosen, picked }) => {
      const f: Filter = { terms: {}, ranges: {} };
      chosen.forEach(([a], i) => {
        const [kind, v] = picked[i]!;
        if (kind === 'terms') f.terms[a] = v as (string | null)[];
        else if (kind === 'all_terms') (f.all_terms ??= {})[a] = v as string[];
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
  for (const [a, vs] of Object.entries(f.terms)) if (vs.length > 0) parts.push(termSql(a, vs));
  for (const [a, vs] of Object.entries(f.all_terms ?? {})) {
    // A study holding each value in some series: all of that study's series.
    for (const v of new Set(vs)) parts.push(`StudyInstanceUID IN (SELECT StudyInstanceUID FROM "index" WHERE ${q(a)} = ${lit(v)})`);
  }
  for (const [a, r] of Object.entries(f.ranges)) {
    if (r.gte !== undefined) parts.push(`${q(a)} >= ${lit(iso(r.gte))}`);
    if (r.lte !== undefined) parts.push(`${q(a)} <= ${lit(iso(r.lte))}`);
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

/** One attribute's terms: any of the values, or (null) no value; a collection-level attribute through collections_index. */
function termSql(a: string, vs: (string | null)[]): string {
  const values = vs.filter((v): v is string => v !== null);
  const ors: string[] = [];
  if (ATTRIBUTE_BY_NAME.get(a)!.collection) {
    const listed = collectionValuesSql(a);
    if (values.length > 0) ors.push(`collection_id IN (SELECT collection_id FROM collections_index WHERE list_has_any(${listed}, [${values.map(lit).join(', ')}]::VARCHAR[]))`);
    if (vs.includes(null)) {
      ors.push(`collection_id IS NULL`, `collection_id NOT IN (SELECT collection_id FROM collections_index WHERE collection_id IS NOT NULL AND len(${listed}) > 0)`);
    }
  } else {
    if (values.length > 0) ors.push(`${q(a)} IN (${values.map(lit).join(', ')})`);
    if (vs.includes(null)) ors.push(`${q(a)} IS NULL`);
  }
  return `(${ors.join(' OR ')})`;
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
