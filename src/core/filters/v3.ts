// The /v3 cohort filter: {terms: {attr: [values]}, ranges: {attr: {gte, lte}}}
// compiled to a parameterized WHERE clause over `index`. OR within an
// attribute, AND across attributes. Identifiers come from the attribute
// registry only; every value is bound. The result also says what was
// actually applied and warns about filters that cannot do what the caller
// probably meant.

import { memo, type AppContext } from '../context.ts';
import { didYouMean, invalidQuery, msg, see } from '../errors.ts';
import type { Param } from '../engine/engine.ts';
import { ATTRIBUTES, ATTRIBUTE_BY_NAME, type AttributeDef } from '../registry/attributes.ts';
import { qi } from '../registry/tables.ts';
import { suggest } from '../suggest.ts';
import { collectionValues } from './collection-values.ts';
import { breathe } from '../turns.ts';

export interface RangeBound {
  gte?: number | string | null;
  lte?: number | string | null;
}

export interface FilterObject {
  /** null among the values selects the series without a value (the portal's None bucket). */
  terms?: Record<string, (string | null)[]>;
  /** Values a study must all have (in some series each): selects every series of such studies (the portal's Modality ALL). */
  all_terms?: Record<string, string[]> | null;
  ranges?: Record<string, RangeBound>;
  /** A union: series matching at least one of these filters (terms, all_terms and ranges; no union inside). */
  any_of?: FilterObject[] | null;
}

type Applied = {
  terms: Record<string, (string | null)[]>;
  ranges: Record<string, { gte?: number | string; lte?: number | string }>;
  all_terms?: Record<string, string[]>;
};

export interface CompiledFilter {
  /** SQL boolean expression over `index` columns; `TRUE` for an empty filter. */
  where: string;
  params: Param[];
  filters_applied: Applied & { any_of?: Applied[] };
  warnings: string[];
  /** No clause applies: the filter selects the entire dataset. */
  empty: boolean;
}

const TERM_NAMES = ATTRIBUTES.filter((a) => a.kind === 'term').map((a) => a.name);
const RANGE_NAMES = ATTRIBUTES.filter((a) => a.kind === 'range').map((a) => a.name);
/** 2^63: numbers bound as parameters must be inside the engine's 64-bit integer range. */
export const INT64_LIMIT = 2 ** 63;
/**
 * A whole number as the engine binds it. JSON's 9223372036854775807 (the
 * 64-bit maximum) reads as the double 2^63, one past it: bound as the maximum.
 * Anything beyond 2^63 is refused before it gets here.
 */
export const int64Param = (v: number): number | bigint => (v === INT64_LIMIT ? 9223372036854775807n : v);
/** Whether a number is outside the 64-bit integer range, as far as a double can tell. */
export const beyondInt64 = (v: number) => v > INT64_LIMIT || v < -INT64_LIMIT;
/** ISO (2001-06-30) or DICOM DA (20010630); both are compared as the stored YYYY-MM-DD. */
const DATE = /^(\d{4})-?(\d{2})-?(\d{2})$/;

/** A real calendar date as YYYY-MM-DD, or null (2001-02-30 is not one). */
export function normalizeDate(v: string): string | null {
  const m = DATE.exec(v.trim());
  if (!m) return null;
  const iso = `${m[1]}-${m[2]}-${m[3]}`;
  const d = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === iso ? iso : null;
}

function unknownAttribute(name: string, kind: 'term' | 'range'): never {
  const other = ATTRIBUTE_BY_NAME.get(name);
  if (other && other.kind !== kind) {
    throw invalidQuery(
      kind === 'term'
        ? `'${name}' is a range attribute: filter it with ranges, e.g. {"ranges": {"${name}": {"gte": ..., "lte": ...}}}.`
        : `'${name}' is a term attribute: filter it with terms, e.g. {"terms": {"${name}": ["value"]}}.`,
    );
  }
  const names = kind === 'term' ? TERM_NAMES : RANGE_NAMES;
  throw invalidQuery(
    msg`Unknown ${kind} filter attribute '${name}'.${didYouMean(suggest(name, ATTRIBUTES.map((a) => a.name)))} Valid ${kind} attributes: ${names.join(', ')}. ${see(
      'list_attributes',
    )} lists them; anything else can be filtered with ${see('run_sql')}.`,
  );
}

function checkBound(attr: AttributeDef, side: 'gte' | 'lte', v: number | string): number | string {
  if (attr.date) {
    // The column holds strings: an unchecked bound would compare lexically and quietly select the wrong series.
    // A DICOM DA date can arrive as a number (20010630), also after the request schema's coercion.
    const iso = typeof v === 'string' || Number.isInteger(v) ? normalizeDate(String(v)) : null;
    if (iso) return iso;
    if (DATE.test(String(v).trim())) throw invalidQuery(`ranges.${attr.name}.${side} is ${JSON.stringify(v)}, which is not a real calendar date.`);
    throw invalidQuery(`ranges.${attr.name}.${side} must be a date written YYYY-MM-DD (e.g. "2001-06-30"; 20010630 is accepted too); got ${JSON.stringify(v)}.`);
  }
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw invalidQuery(`ranges.${attr.name}.${side} must be a number; got ${JSON.stringify(v)}.`);
  }
  // The engine binds whole numbers as 64-bit integers: beyond them a bound cannot be compared at all.
  if (beyondInt64(v)) {
    throw invalidQuery(`ranges.${attr.name}.${side} is ${JSON.stringify(v)}, out of range: bounds must lie between -9223372036854775808 and 9223372036854775807.`);
  }
  return v;
}

/** Distinct values of an attribute by lower case, for case-mismatch warnings (kept: data is immutable). */
function valuesByLowerCase(ctx: AppContext, attr: string): Promise<Map<string, string[]>> {
  return memo(ctx, `filter-values:${attr}`, async () => {
    // Read a chunk at a time (PatientID has about 90,000 values: converted in one piece, they held every request).
    const { chunks } = await ctx.engine.materialize(`SELECT DISTINCT CAST(${qi(attr)} AS VARCHAR) AS v FROM "index" WHERE ${qi(attr)} IS NOT NULL`);
    const m = new Map<string, string[]>();
    for (const chunk of chunks) {
      await breathe();
      const col = chunk.getColumnVector(0);
      for (let r = 0; r < chunk.rowCount; r++) {
        const v = String(col.getItem(r));
        const k = v.toLowerCase();
        const same = m.get(k);
        if (same) same.push(v);
        else m.set(k, [v]);
      }
    }
    return m;
  });
}

/** Values of a collection-level attribute by lower case. */
async function collectionValuesByLowerCase(ctx: AppContext, attr: AttributeDef): Promise<Map<string, string[]>> {
  const m = new Map<string, string[]>();
  for (const v of (await collectionValues(ctx, attr)).collectionsOf.keys()) m.set(v.toLowerCase(), [...(m.get(v.toLowerCase()) ?? []), v]);
  return m;
}

const HAS_LETTER = /[A-Za-z]/;

/** For each value with no exact match: the values that match it ignoring case. */
async function caseMismatches(ctx: AppContext, attr: AttributeDef, values: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  // DICOM UIDs are digits and dots: a value with letters cannot match in any casing.
  if (attr.name.endsWith('InstanceUID') || !values.some((v) => HAS_LETTER.test(v))) return out;
  const byLower = attr.collection ? await collectionValuesByLowerCase(ctx, attr) : await valuesByLowerCase(ctx, attr.name);
  // One pass, no array per value: a pasted list of 45,000 identifiers is read here, letting others run between parts.
  for (let i = 0; i < values.length; i++) {
    if ((i & 4095) === 4095) await breathe();
    const v = values[i]!;
    if (!HAS_LETTER.test(v)) continue;
    const same = byLower.get(v.toLowerCase());
    if (same !== undefined && !same.includes(v)) out.set(v, same);
  }
  return out;
}

/** `n` placeholders: ?, ?, ... */
const placeholders = (n: number) => (n === 0 ? '' : '?, '.repeat(n - 1) + '?');

/** Append `values` to `params` (a spread of tens of thousands of arguments is slow, and has a stack limit). */
function pushAll(params: Param[], values: readonly Param[]): void {
  for (const v of values) params.push(v);
}

export async function compileFilter(ctx: AppContext, f: FilterObject | undefined | null, inUnion = false): Promise<CompiledFilter> {
  const clauses: string[] = [];
  const params: Param[] = [];
  const warnings: string[] = [];
  const applied: CompiledFilter['filters_applied'] = { terms: {}, ranges: {} };

  for (const [name, raw] of Object.entries(f?.terms ?? {})) {
    const attr = ATTRIBUTE_BY_NAME.get(name);
    if (!attr || attr.kind !== 'term') unknownAttribute(name, 'term');
    if (!Array.isArray(raw)) throw invalidQuery(`terms.${name} must be an array of values, e.g. ["${name === 'Modality' ? 'CT' : 'value'}"].`);
    const values = [...new Set(raw.filter((v) => v !== null && v !== undefined).map(String))];
    // null is the missing value: OR'd with the other values, as v2's "None".
    const orMissing = raw.includes(null);
    if (orMissing && !attr.categorical) {
      throw invalidQuery(`terms.${name} has null, but every series has a ${name}: null (no value) can only be selected for categorical attributes.`);
    }
    if (values.length === 0 && !orMissing) {
      warnings.push(`terms.${name} has an empty value list and was ignored: it does not restrict the cohort.`);
      continue;
    }
    const ors: string[] = [];
    if (attr.collection) {
      // A fact of the series' collection: the series of every collection that lists one of the values.
      const { collectionsOf, byCollection } = await collectionValues(ctx, attr);
      const ids = [...new Set(values.flatMap((v) => collectionsOf.get(v) ?? []))].sort();
      if (ids.length > 0) ors.push(`collection_id IN (${placeholders(ids.length)})`);
      pushAll(params, ids);
      if (orMissing) {
        // No value: a collection listing none (or a series without a collection).
        const valued = [...byCollection].filter(([, vs]) => vs.length > 0).map(([id]) => id).sort();
        ors.push(valued.length === 0 ? 'TRUE' : `(collection_id IS NULL OR collection_id NOT IN (${placeholders(valued.length)}))`);
        pushAll(params, valued);
      }
    } else {
      if (values.length > 0) ors.push(`${qi(name)} IN (${placeholders(values.length)})`);
      pushAll(params, values);
      if (orMissing) ors.push(`${qi(name)} IS NULL`);
    }
    clauses.push(ors.length === 0 ? 'FALSE' : ors.length === 1 ? ors[0]! : `(${ors.join(' OR ')})`);
    applied.terms[name] = orMissing ? [...values, null] : values;
    await breathe();
    for (const [v, same] of await caseMismatches(ctx, attr, values)) {
      warnings.push(
        `No series has ${name} = '${v}': matching is case-sensitive. Use ${same.map((s) => `'${s}'`).join(' or ')}, as listed by the values of ${name}.`,
      );
    }
  }

  for (const [name, raw] of Object.entries(f?.all_terms ?? {})) {
    const attr = ATTRIBUTE_BY_NAME.get(name);
    if (!attr || attr.kind !== 'term') unknownAttribute(name, 'term');
    if (!attr.categorical || attr.collection) {
      throw invalidQuery(`all_terms.${name}: all_terms takes categorical attributes of the series (e.g. Modality), not '${name}'.`);
    }
    if (!Array.isArray(raw) || raw.some((v) => typeof v !== 'string')) throw invalidQuery(`all_terms.${name} must be an array of values, e.g. ["CT", "PT"].`);
    if (f?.terms?.[name] !== undefined) {
      throw invalidQuery(`${name} is in both terms and all_terms: give its values in terms (any of them) or in all_terms (all of them), not both.`);
    }
    const values = [...new Set(raw)];
    if (values.length === 0) {
      warnings.push(`all_terms.${name} has an empty value list and was ignored: it does not restrict the cohort.`);
      continue;
    }
    // Studies with a series of each value; every series of those studies is selected.
    clauses.push(
      `StudyInstanceUID IN (SELECT StudyInstanceUID FROM "index" WHERE ${qi(name)} IN (${placeholders(values.length)}) ` +
        `GROUP BY StudyInstanceUID HAVING count(DISTINCT ${qi(name)}) = ${values.length})`,
    );
    pushAll(params, values);
    (applied.all_terms ??= {})[name] = values;
    for (const [v, same] of await caseMismatches(ctx, attr, values)) {
      warnings.push(`No series has ${name} = '${v}': matching is case-sensitive. Use ${same.map((s) => `'${s}'`).join(' or ')}, as listed by the values of ${name}.`);
    }
  }

  for (const [name, raw] of Object.entries(f?.ranges ?? {})) {
    const attr = ATTRIBUTE_BY_NAME.get(name);
    if (!attr || attr.kind !== 'range') unknownAttribute(name, 'range');
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw invalidQuery(`ranges.${name} must be an object with gte and/or lte, e.g. {"gte": 10, "lte": 100}.`);
    }
    const bound: { gte?: number | string; lte?: number | string } = {};
    if (raw.gte !== undefined && raw.gte !== null) bound.gte = checkBound(attr, 'gte', raw.gte);
    if (raw.lte !== undefined && raw.lte !== null) bound.lte = checkBound(attr, 'lte', raw.lte);
    if (bound.gte === undefined && bound.lte === undefined) {
      warnings.push(`ranges.${name} has neither gte nor lte and was ignored: it does not restrict the cohort.`);
      continue;
    }
    if (bound.gte !== undefined && bound.lte !== undefined && bound.gte > bound.lte) {
      throw invalidQuery(`ranges.${name}: gte (${JSON.stringify(bound.gte)}) is greater than lte (${JSON.stringify(bound.lte)}), which selects nothing; swap them.`);
    }
    if (bound.gte !== undefined) {
      clauses.push(`${qi(name)} >= ?`);
      params.push(typeof bound.gte === 'number' ? int64Param(bound.gte) : bound.gte);
    }
    if (bound.lte !== undefined) {
      clauses.push(`${qi(name)} <= ?`);
      params.push(typeof bound.lte === 'number' ? int64Param(bound.lte) : bound.lte);
    }
    applied.ranges[name] = bound;
  }

  if (f?.any_of !== undefined && f.any_of !== null) {
    if (inUnion) throw invalidQuery('any_of cannot hold another any_of: a union is one level of filters of terms and ranges.');
    if (!Array.isArray(f.any_of)) throw invalidQuery('any_of must be an array of filters, e.g. [{"terms": {"collection_id": ["nlst"]}}, {"terms": {"PatientID": ["P1"]}}].');
    if (f.any_of.length === 0) warnings.push('any_of is an empty list and was ignored: it does not restrict the cohort.');
    else {
      const parts: string[] = [];
      const subs: Applied[] = [];
      for (const [i, sub] of f.any_of.entries()) {
        if (sub === null || typeof sub !== 'object' || Array.isArray(sub)) throw invalidQuery(`any_of[${i}] must be a filter object with terms and/or ranges.`);
        const c = await compileFilter(ctx, sub, true);
        // A member selecting everything makes the whole union select everything: said, not hidden.
        if (c.empty) warnings.push(`any_of[${i}] is empty: it selects every series, so the union does not restrict the cohort.`);
        warnings.push(...c.warnings.filter((w) => !w.startsWith('The filter is empty')).map((w) => `any_of[${i}]: ${w}`));
        parts.push(`(${c.where})`);
        pushAll(params, c.params);
        subs.push({ terms: c.filters_applied.terms, ranges: c.filters_applied.ranges, ...(c.filters_applied.all_terms ? { all_terms: c.filters_applied.all_terms } : {}) });
      }
      clauses.push(`(${parts.join(' OR ')})`);
      applied.any_of = subs;
    }
  }

  const empty = clauses.length === 0;
  if (empty) warnings.unshift('The filter is empty: the result covers the entire dataset.');
  return { where: empty ? 'TRUE' : clauses.join(' AND '), params, filters_applied: applied, warnings, empty };
}

/** A value as an SQL literal: strings quoted (quotes doubled), numbers as written. */
function literal(v: Param): string {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (v === null || v === undefined) return 'NULL';
  return `'${String(v).replaceAll("'", "''")}'`;
}

/**
 * The series of a compiled filter as one read-only SELECT with its values
 * written in, for people and agents to build on with their own SQL. The
 * clauses hold no '?' but their placeholders (identifiers come from the
 * registry, values are bound), so each '?' takes the next value in order.
 */
export function cohortSql(compiled: CompiledFilter): string {
  const pieces = compiled.where.split('?');
  let where = pieces[0]!;
  for (let i = 1; i < pieces.length; i++) where += literal(compiled.params[i - 1]!) + pieces[i]!;
  return `SELECT * FROM "index" WHERE ${where}`;
}
