// Faceted counts of a cohort (POST /v3/cohort/facets, get_cohort_facets):
// for each requested filterable attribute, its values (or histogram bins)
// counted under every *other* filter and under all filters, a missing
// bucket, and the cohort's totals. Results are kept in a small LRU cache
// keyed by the release and the normalised request, since the data never
// changes for an opened database. A count runs in this process, so it has a
// budget (IDQS_FACET_SLOTS at once, a bounded queue): a burst of uncached
// requests waits or is refused instead of taking the event loop in turn.

import { releaseContext, type AppContext } from '../../context.ts';
import { detached, forCaller } from '../../engine/work.ts';
import { didYouMean, field, invalidQuery, invalidRequest, msg, see } from '../../errors.ts';
import { compileFilter, type CompiledFilter, type FilterObject } from '../../filters/v3.ts';
import { ATTRIBUTES, ATTRIBUTE_BY_NAME } from '../../registry/attributes.ts';
import { qi } from '../../registry/tables.ts';
import { suggest } from '../../suggest.ts';
import { answer } from '../../planner/plan.ts';
import { jsonBytes, PromiseCache } from '../bounded-cache.ts';
import { countsFromRow, type Counts } from '../version.ts';
import { collectionClause, countCollections } from './collection-facets.ts';
import { answerKey } from '../cohort-index/answers.ts';
import { readyCohortIndex, type CohortIndex } from '../cohort-index/build.ts';
import { rangeBounds } from '../cohort-index/evaluate.ts';
import { findString } from '../cohort-index/identifiers.ts';
import { bitTotals } from '../cohort-index/bit-totals.ts';
import { wordsFor } from '../cohort-index/bits.ts';
import type { Totals } from '../cohort-index/totals.ts';
import { cohortTotals, countPass, rangeClause, rowsClause, termClause, type Clause, type PassResult } from './count.ts';
import { asOfFacets } from './as-of-facets.ts';
import type { Bucket, CohortFacets, Facet, FacetBin, FacetValue, RangeFacet, TermFacet } from './facet-types.ts';
import { COUNT_MODES, facetTable, type CountMode, type FacetColumn, type FacetTable, type RangeColumn, type TermColumn } from './table.ts';

export interface FacetsRequest {
  filters?: FilterObject | null;
  attributes?: string[] | null;
  count?: string | null;
  limit?: number | null;
  /** A past release: facets of the series versions it served (see as-of-facets.ts). */
  as_of?: string | number;
}

export type { Bucket, FacetBin, FacetValue, TermFacet, RangeFacet, Facet, CohortFacets } from './facet-types.ts';

const FACET_NAMES = ATTRIBUTES.map((a) => a.name);

export { facetTable, warmFacets } from './table.ts';

const caches = new WeakMap<AppContext, PromiseCache<Computed>>();

/** The release's facet answers, bounded by IDQS_FACET_CACHE_MB (an answer of every attribute is some tens of KB). */
export function facetCacheOf(ctx: AppContext): PromiseCache<Computed> {
  let c = caches.get(releaseContext(ctx));
  if (!c) {
    c = new PromiseCache<Computed>(ctx.config.facetCacheMb * 1024 * 1024, jsonBytes);
    caches.set(releaseContext(ctx), c);
  }
  return c;
}

interface Computed {
  totals: Counts;
  facets: Record<string, Facet>;
}

function parseCount(raw: string | null | undefined): CountMode {
  if (raw === undefined || raw === null) return 'patients';
  if ((COUNT_MODES as readonly string[]).includes(raw)) return raw as CountMode;
  throw invalidQuery(msg`${field('count')} must be one of ${COUNT_MODES.join(', ')}; got ${JSON.stringify(raw)}.${didYouMean(suggest(raw, COUNT_MODES))}`);
}

function parseAttributes(raw: string[] | null | undefined): string[] {
  if (raw === undefined || raw === null) return FACET_NAMES;
  const out: string[] = [];
  for (const name of raw) {
    if (!ATTRIBUTE_BY_NAME.has(name)) {
      throw invalidQuery(
        msg`Unknown attribute '${name}' in ${field('attributes')}.${didYouMean(suggest(name, FACET_NAMES))} Facets exist for the filterable attributes: ${FACET_NAMES.join(', ')} (${see('list_attributes')}).`,
      );
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** Rows (positions) holding each selected value of an identifier attribute, from the cohort index's dictionaries. */
function indexedIdentifierRows(ix: CohortIndex, name: string, values: string[]): Map<string, number[]> | null {
  const c = ix.columns.get(name);
  if (c === undefined || c.kind === 'number') return null;
  const m = new Map<string, number[]>(values.map((v) => [v, []]));
  if (c.kind === 'rows') {
    for (const v of values) {
      const i = findString(c.dict, v);
      if (i >= 0) m.get(v)!.push(c.dict.targets[i]!);
    }
    return m;
  }
  const valueOf = new Map<number, number[]>();
  for (const v of values) {
    const code = c.codeOf(v);
    if (code !== undefined && code !== 0) valueOf.set(code, m.get(v)!);
  }
  if (valueOf.size === 0) return m;
  const { codes } = c;
  for (let r = 0; r < codes.length; r++) {
    const code = codes[r]!;
    if (code !== 0) valueOf.get(code)?.push(r);
  }
  return m;
}

/** Rows (positions) holding each selected value of an identifier attribute: from the index when ready, else found by the engine. */
async function identifierRows(ctx: AppContext, t: FacetTable, name: string, values: string[]): Promise<Map<string, number[]>> {
  const ix = readyCohortIndex(ctx);
  const fromIndex = ix && ix.table === t ? indexedIdentifierRows(ix, name, values) : null;
  if (fromIndex) return fromIndex;
  const found = await ctx.engine.rows(
    `SELECT rowid::INTEGER AS rid, ${qi(name)}::VARCHAR AS v FROM "index" WHERE ${qi(name)} IN (${values.map(() => '?').join(', ')})`,
    values,
  );
  const m = new Map<string, number[]>(values.map((v) => [v, []]));
  for (const r of found) m.get(String(r.v))?.push(t.positionOf[Number(r.rid)]!);
  return m;
}

/**
 * Rows of the studies that have every value (all_terms), from the table's
 * codes and study ids: one pass, no engine round trip (the engine would hand
 * back hundreds of thousands of positions). null when it cannot (no study
 * ids, over 32 values): the caller asks the engine.
 */
function studiesWithAll(t: FacetTable, c: TermColumn, values: string[]): Uint8Array | null {
  const ids = t.entities.studies.ids;
  if (ids === null || values.length > 32) return null;
  const selected = new Uint8Array(t.rows);
  const bit = new Int32Array(t.slotSizes[c.slot]!).fill(-1);
  for (const [i, v] of values.entries()) {
    const code = c.codeOf.get(v);
    // A value no series has: no study has them all.
    if (code === undefined) return selected;
    bit[code] = i;
  }
  let top = 0;
  for (let r = 0; r < ids.length; r++) if (ids[r]! > top) top = ids[r]!;
  const mask = new Uint32Array(top + 1);
  const { codes, width } = t;
  for (let r = 0, i = c.slot; r < t.rows; r++, i += width) {
    const b = bit[codes[i]!]!;
    if (b >= 0) mask[ids[r]!]! |= 1 << b;
  }
  const full = values.length === 32 ? 0xffffffff : (1 << values.length) - 1;
  // Study id 0 is a series without a study: never selected, as NULL fails IN.
  for (let r = 0; r < t.rows; r++) if (ids[r] !== 0 && mask[ids[r]!] === full) selected[r] = 1;
  return selected;
}

/** Facet table positions of the rows of index matching an SQL condition. */
async function engineRows(ctx: AppContext, t: FacetTable, where: string, params: string[]): Promise<number[]> {
  const found = await ctx.engine.rows(`SELECT rowid::INTEGER AS rid FROM "index" WHERE ${where}`, params);
  return found.map((r) => t.positionOf[Number(r.rid)]!);
}

function bucket(counts: Int32Array, filtered: Int32Array | null, code: number): Bucket {
  return { count: counts[code]!, filtered_count: (filtered ?? counts)[code]! };
}

function termFacet(c: TermColumn, pass: PassResult, selected: string[], limit: number): TermFacet {
  return valueFacet(c.values, c.codeOf, pass.counts[c.slot]!, pass.filtered[c.slot]!, selected, limit);
}

/** A term facet from counts per code (code 0: missing; codes 1.. index `names`). */
function valueFacet(names: string[], codeOf: Map<string, number>, counts: Int32Array, filtered: Int32Array | null, selected: string[], limit: number): TermFacet {
  const order = Array.from({ length: names.length }, (_, i) => i + 1).sort(
    (a, b) => counts[b]! - counts[a]! || (names[a - 1]! < names[b - 1]! ? -1 : 1),
  );
  const shown = order.slice(0, limit);
  const values: FacetValue[] = shown.map((code) => ({ value: names[code - 1]!, ...bucket(counts, filtered, code) }));
  for (const v of selected) {
    const code = codeOf.get(v);
    if (code === undefined) values.push({ value: v, count: 0, filtered_count: 0 });
    else if (!shown.includes(code)) values.push({ value: v, ...bucket(counts, filtered, code) });
  }
  let distinct = 0;
  for (let code = 1; code < counts.length; code++) if (counts[code]! > 0) distinct++;
  return { kind: 'term', categorical: true, selected, values, distinct, truncated: order.length > limit, missing: bucket(counts, filtered, 0) };
}

function rangeFacet(c: RangeColumn, pass: PassResult, selected: RangeFacet['selected']): RangeFacet {
  const counts = pass.counts[c.slot]!;
  const filtered = pass.filtered[c.slot]!;
  const bins: FacetBin[] = [];
  for (let b = 0; b + 1 < c.edges.length; b++) bins.push({ gte: c.edges[b]!, lt: c.edges[b + 1]!, ...bucket(counts, filtered, b + 1) });
  const at = (x: number) => (Number.isNaN(x) ? null : c.sorted === null ? x : c.sorted[x - 1]!);
  const f: RangeFacet = { kind: 'range', selected, min: at(pass.min[c.slot]!), max: at(pass.max[c.slot]!), bins, missing: bucket(counts, filtered, 0) };
  if (c.def.date) return { ...f, value_format: 'YYYY-MM-DD' };
  return f;
}

/** The cohort's totals by the index, when the table's order does not keep entities together (null: not ready). */
function indexTotals(ctx: AppContext, t: FacetTable, fail: Uint8Array): Totals | null {
  const ix = readyCohortIndex(ctx);
  if (!ix || ix.table !== t) return null;
  const bits = new Uint32Array(wordsFor(t.rows));
  for (let r = 0; r < fail.length; r++) bits[r >>> 5]! |= +(fail[r] === 0) << (r & 31);
  return bitTotals(ix, bits);
}

async function compute(ctx: AppContext, compiled: CompiledFilter, attributes: string[], mode: CountMode, limit: number): Promise<Computed> {
  const t = await facetTable(ctx);
  const applied = compiled.filters_applied;
  const clauses: Clause[] = [];
  const identifiers = new Map<string, Map<string, number[]>>();
  const ownClause = new Map<string, number>();
  for (const [name, all] of Object.entries(applied.terms)) {
    const c = t.columns.get(name);
    // null: the missing value (code 0), for categorical attributes only (the compiler refuses it elsewhere).
    const orMissing = all.includes(null);
    const values = all.filter((v): v is string => v !== null);
    if (c?.kind === 'collection') {
      ownClause.set(name, clauses.length);
      clauses.push(collectionClause(t, c, values, orMissing));
    } else if (c?.kind === 'term') {
      const accepted = new Uint8Array(t.slotSizes[c.slot]!);
      for (const v of values) {
        const code = c.codeOf.get(v);
        if (code !== undefined) accepted[code] = 1;
      }
      if (orMissing) accepted[0] = 1;
      clauses.push(termClause(t, name, c.slot, accepted));
    } else {
      const rows = await identifierRows(ctx, t, name, values);
      identifiers.set(name, rows);
      const selected = new Uint8Array(t.rows);
      for (const positions of rows.values()) for (const p of positions) selected[p] = 1;
      if (orMissing) for (const p of await engineRows(ctx, t, `${qi(name)} IS NULL`, [])) selected[p] = 1;
      clauses.push(rowsClause(name, selected));
    }
  }
  for (const [name, values] of Object.entries(applied.all_terms ?? {})) {
    // A study-level condition, found by the engine; it is the attribute's own clause (left out of its own counts).
    const where =
      `StudyInstanceUID IN (SELECT StudyInstanceUID FROM "index" WHERE ${qi(name)} IN (${values.map(() => '?').join(', ')}) ` +
      `GROUP BY StudyInstanceUID HAVING count(DISTINCT ${qi(name)}) = ${values.length})`;
    const c = t.columns.get(name);
    let selected = c?.kind === 'term' ? studiesWithAll(t, c, values) : null;
    if (selected === null) {
      selected = new Uint8Array(t.rows);
      for (const p of await engineRows(ctx, t, where, values)) selected[p] = 1;
    }
    clauses.push({ ...rowsClause(name, selected), slot: c?.kind === 'term' ? c.slot : -1 });
  }
  for (const [name, r] of Object.entries(applied.ranges)) {
    const c = t.columns.get(name) as RangeColumn | undefined;
    if (!c) continue;
    const [lo, hi] = rangeBounds(c, r);
    clauses.push(rangeClause(c, lo, hi));
  }

  const columns = attributes.map((a) => t.columns.get(a)).filter((c): c is FacetColumn => c !== undefined);
  const slots = columns.flatMap((c) => (c.kind === 'identifier' || c.kind === 'collection' ? [] : [c.slot]));
  // The collection-level facets are read from the collections' own counts (collection-facets.ts).
  const viaCollection = columns.find((c) => c.kind === 'collection');
  if (viaCollection?.kind === 'collection' && !slots.includes(viaCollection.collectionSlot)) slots.push(viaCollection.collectionSlot);
  const pass = countPass(t, clauses, slots, mode);
  const entity = t.entities[mode];
  const collectionCounts = countCollections(
    t,
    columns.flatMap((c) => (c.kind === 'collection' ? [{ column: c, own: ownClause.get(c.def.name) ?? -1 }] : [])),
    pass,
    mode,
  );

  const facets: Record<string, Facet> = {};
  for (const c of columns) {
    const name = c.def.name;
    const selectedValues = (applied.terms[name] ?? applied.all_terms?.[name] ?? []).filter((v): v is string => v !== null);
    if (c.kind === 'term') facets[name] = termFacet(c, pass, selectedValues, limit);
    else if (c.kind === 'range') facets[name] = rangeFacet(c, pass, applied.ranges[name] ?? null);
    else if (c.kind === 'collection') {
      const n = collectionCounts.get(name)!;
      facets[name] = valueFacet(c.values, c.codeOf, n.counts, ownClause.has(name) ? n.filtered : null, selectedValues, limit);
    } else {
      // An identifier is not enumerated: only its selected values are counted
      // (rows holding a selected value pass its own clause, so both counts agree).
      const selected = selectedValues;
      const rows = identifiers.get(name);
      const values = selected.map((v) => {
        const seen = new Set<number>();
        for (const r of rows?.get(v) ?? []) {
          const e = entity.ids === null ? r + 1 : entity.ids[r]!;
          if (e !== 0 && pass.fail[r] === 0) seen.add(e);
        }
        return { value: v, count: seen.size, filtered_count: seen.size };
      });
      facets[name] = { kind: 'term', categorical: false, selected, values, distinct: null, truncated: false, missing: null };
    }
  }
  const totals = cohortTotals(t, pass.fail) ?? indexTotals(ctx, t, pass.fail);
  return { totals: totals ? countsFromRow({ ...totals }) : await answer('counts', ctx, compiled), facets };
}

export async function cohortFacets(ctx: AppContext, req: FacetsRequest): Promise<CohortFacets> {
  const mode = parseCount(req.count);
  const cap = ctx.config.valuesLimitCap;
  const limit = req.limit ?? ctx.config.valuesLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > cap) {
    throw invalidRequest(msg`${field('limit')} must be an integer from 1 to ${cap} (values per term attribute); got ${JSON.stringify(req.limit)}.`);
  }
  if (req.as_of !== undefined) return asOfFacets(ctx, { filters: req.filters ?? {}, attributes: req.attributes, mode, limit, asOf: req.as_of });
  const attributes = parseAttributes(req.attributes);
  const compiled = await compileFilter(ctx, req.filters ?? {});
  if (compiled.filters_applied.any_of) {
    throw invalidQuery(
      msg`Facets do not count unions: ${field('filters')} has any_of. Count a union with ${see('get_cohort_counts')}, or ask facets for each member of it.`,
    );
  }
  const warnings = [...compiled.warnings];
  const key = `${ctx.dataset.identity}\n${JSON.stringify([mode, limit, attributes])}\n${answerKey(compiled.filters_applied)}`;
  // Shared by every request for the same facets: detached from the one that starts it.
  const p = facetCacheOf(ctx).get(key, () =>
    detached(async () => {
      const slot = await ctx.engine.facets.acquire();
      try {
        return await compute(ctx, compiled, attributes, mode, limit);
      } finally {
        slot.release();
      }
    }),
  );
  const { totals, facets } = await forCaller(p);
  return { count: mode, totals, facets, filters_applied: compiled.filters_applied, warnings };
}
