// Facets of a cohort as a past release served it (as_of): the attributes that
// release's series versions record (collection_id, Modality and the
// identifiers), counted by SQL over the versions it served. Same shape and
// semantics as the facets of the served release: count under every other
// filter, filtered_count under all of them.

import type { AppContext } from '../../context.ts';
import { field, invalidQuery, msg } from '../../errors.ts';
import type { FilterObject } from '../../filters/v3.ts';
import { ATTRIBUTE_BY_NAME } from '../../registry/attributes.ts';
import { asOfCohort, asOfCounts, type AsOfNames } from '../as-of.ts';
import { toNumber } from '../numbers.ts';
import { VERSION_ATTRIBUTES } from '../release-versions.ts';
import type { CohortFacets, FacetValue, TermFacet } from './facet-types.ts';
import type { CountMode } from './table.ts';

const ENTITY: Record<CountMode, string> = { patients: 'PatientID', studies: 'StudyInstanceUID', series: 'SeriesInstanceUID' };

/** The attributes to facet as of a release: those its versions record; any other is refused, naming them. */
function asOfAttributes(requested: string[] | null | undefined): string[] {
  if (requested === undefined || requested === null) return [...VERSION_ATTRIBUTES];
  const out: string[] = [];
  for (const name of requested) {
    if (!(VERSION_ATTRIBUTES as readonly string[]).includes(name)) {
      throw invalidQuery(msg`${field('attributes')} has ${name}, which earlier releases do not record; facets as of a release exist for ${VERSION_ATTRIBUTES.join(', ')}.`);
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** Entities per value of `attr` among the versions served for `filters`. */
async function countsBy(ctx: AppContext, filters: FilterObject, asOf: string | number, attr: string, mode: CountMode): Promise<Map<string | null, number>> {
  const c = await asOfCohort(ctx, filters, asOf);
  const rows = await ctx.engine.rows(`SELECT ${attr} AS v, count(DISTINCT ${ENTITY[mode]}) AS n FROM ${c.from} GROUP BY 1`, c.params);
  return new Map(rows.map((r) => [r.v === null ? null : String(r.v), toNumber(r.n)]));
}

export async function asOfFacets(
  ctx: AppContext,
  req: { filters: FilterObject; attributes?: string[] | null; mode: CountMode; limit: number; asOf: string | number },
): Promise<CohortFacets & AsOfNames> {
  const attributes = asOfAttributes(req.attributes);
  const terms = req.filters.terms ?? {};
  const totals = await asOfCounts(ctx, req.filters, req.asOf);
  const { as_of, computed_on, filters_applied, warnings, ...counts } = totals;
  const facets: CohortFacets['facets'] = {};
  await Promise.all(
    attributes.map(async (name) => {
      const selected = filters_applied.terms[name] ?? [];
      if (!ATTRIBUTE_BY_NAME.get(name)?.categorical) {
        // An identifier is not enumerated: its selected values, counted under all filters.
        const all = await countsBy(ctx, req.filters, req.asOf, name, req.mode);
        const values = selected.map((v) => ({ value: v, count: all.get(v) ?? 0, filtered_count: all.get(v) ?? 0 }));
        facets[name] = { kind: 'term', categorical: false, selected, values, distinct: null, truncated: false, missing: null };
        return;
      }
      const others: FilterObject = { ...req.filters, terms: Object.fromEntries(Object.entries(terms).filter(([k]) => k !== name)) };
      const [count, filtered] = await Promise.all([
        countsBy(ctx, others, req.asOf, name, req.mode),
        selected.length > 0 ? countsBy(ctx, req.filters, req.asOf, name, req.mode) : null,
      ]);
      const bucket = (v: string | null) => ({ count: count.get(v) ?? 0, filtered_count: (filtered ?? count).get(v) ?? 0 });
      // Most entities first, ties by value in byte order (as the served release's facets).
      const named = [...count.keys()].filter((v): v is string => v !== null);
      named.sort((a, b) => count.get(b)! - count.get(a)! || Buffer.compare(Buffer.from(a), Buffer.from(b)));
      const shown = named.slice(0, req.limit);
      const values: FacetValue[] = shown.map((v) => ({ value: v, ...bucket(v) }));
      for (const v of selected) if (!shown.includes(v)) values.push({ value: v, ...bucket(v) });
      const f: TermFacet = { kind: 'term', categorical: true, selected, values, distinct: named.length, truncated: named.length > req.limit, missing: bucket(null) };
      facets[name] = f;
    }),
  );
  // Facets in the order asked.
  const ordered = Object.fromEntries(attributes.map((a) => [a, facets[a]!]));
  return { count: req.mode, totals: counts, facets: ordered, filters_applied, warnings, as_of, computed_on };
}
