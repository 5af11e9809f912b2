// POST /v3/cohort/facets: faceted counts of a cohort for a filter panel, over
// the core service (src/core/services/facets). Same filter body, validation,
// filters_applied and warnings as the other cohort routes.

import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { cohortFacets, warmFacets, type FacetsRequest } from '../../core/services/facets/cohort-facets.ts';
import { COUNT_MODES } from '../../core/services/facets/table.ts';
import { ATTRIBUTES } from '../../core/registry/attributes.ts';
import { FiltersApplied, Warnings } from '../../contract/filter-schema.ts';
import { Counts } from './cohort.ts';
import { FilterSchema } from '../../contract/filter-schema.ts';
import { errors } from './schemas.ts';
import { AS_OF_DESCRIPTION, AsOfNames } from '../../contract/release-schemas.ts';

const Bucket = {
  count: Type.Integer({ description: 'Entities (see count) with this value among the series passing every *other* filter: what selecting it would give.' }),
  filtered_count: Type.Integer({ description: 'Entities with this value among the series passing every filter (the cohort itself).' }),
};

const Missing = Type.Object(Bucket, { description: 'Series without a value.' });

const TermFacet = Type.Object(
  {
    kind: Type.Literal('term'),
    categorical: Type.Boolean({ description: 'false for identifiers (UIDs, PatientID): values then lists only the selected values.' }),
    selected: Type.Array(Type.String(), { description: 'Values of this attribute in the filter (empty when it is not filtered).' }),
    values: Type.Array(Type.Object({ value: Type.String(), ...Bucket }), {
      description: 'Most frequent first (by count, then value), at most limit of them, plus every selected value (with 0 when absent). Values with a count of 0 are listed after the others.',
    }),
    distinct: Type.Union([Type.Integer(), Type.Null()], { description: 'Values with a count above 0; null for identifiers.' }),
    truncated: Type.Boolean({ description: 'More values exist than limit allowed.' }),
    missing: Type.Union([Missing, Type.Null()], { description: 'Series without a value; null for identifiers.' }),
  },
  { description: 'Facet of a term attribute.' },
);

const Bound = Type.Union([Type.Number(), Type.String()]);
const RangeFacet = Type.Object(
  {
    kind: Type.Literal('range'),
    value_format: Type.Optional(Type.Literal('YYYY-MM-DD', { description: 'Present on date attributes: bounds and edges are date strings.' })),
    selected: Type.Union([Type.Object({ gte: Type.Optional(Bound), lte: Type.Optional(Bound) }), Type.Null()], { description: 'The range of this attribute in the filter, or null.' }),
    min: Type.Union([Bound, Type.Null()], { description: 'Smallest value among the series passing every other filter; null when none has a value.' }),
    max: Type.Union([Bound, Type.Null()], { description: 'Largest value among the series passing every other filter.' }),
    bins: Type.Array(Type.Object({ gte: Bound, lt: Bound, ...Bucket }), {
      description:
        'Histogram over the whole release’s domain (the same edges for every filter): half-open bins [gte, lt) of 1-2-5 steps per decade for wide quantities, even steps otherwise, calendar years or months for dates.',
    }),
    missing: Missing,
  },
  { description: 'Facet of a range attribute.' },
);

const FacetsBody = Type.Object(
  {
    filters: Type.Optional(FilterSchema),
    attributes: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Filterable attributes to facet (GET /v3/attributes), in the order wanted; default: all of them.',
        examples: [['collection_id', 'Modality', 'StudyDate']],
      }),
    ),
    count: Type.Optional(
      Type.String({ default: 'patients', description: `What the counts count: ${COUNT_MODES.join(', ')} (distinct). Default patients (the portal's cases).` }),
    ),
    limit: Type.Optional(Type.Integer({ description: 'Most values listed per term attribute (selected values are always listed); default and cap as for GET /v3/attributes/{attribute}/values.' })),
    as_of: Type.Optional(
      Type.Union([Type.String(), Type.Integer()], { description: `${AS_OF_DESCRIPTION} Facets then exist for those attributes only (all of them by default).` }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ filters: { terms: { collection_id: ['nlst'], Modality: ['CT'] }, ranges: { instanceCount: { gte: 50 } } }, attributes: ['collection_id', 'Modality', 'instanceCount'], count: 'patients' }],
  },
);

const FacetsResponse = Type.Object({
  count: Type.String({ description: 'What the counts count: patients, studies or series.' }),
  totals: Counts,
  facets: Type.Record(Type.String(), Type.Union([TermFacet, RangeFacet]), { description: 'Facet of each requested attribute, in the order requested.' }),
  filters_applied: FiltersApplied,
  warnings: Warnings,
  ...AsOfNames,
});

export async function facetsRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  // The in-memory facet table takes seconds to load at full scale: start when the server does.
  app.addHook('onReady', async () => warmFacets(ctx));
  app.post(
    '/cohort/facets',
    {
      schema: {
        tags: ['cohort'],
        summary: 'Cohort facets',
        description:
          'Faceted counts for a filter panel: for each requested attribute, its values (term attributes) or a histogram (range attributes) with two counts each: ' +
          'count, under every *other* filter (the attribute’s own selection left out, so several values can be picked in turn), and filtered_count, under all filters; ' +
          'a missing bucket; min and max of range attributes; and the cohort totals (as POST /v3/cohort/counts). ' +
          `Attributes: ${ATTRIBUTES.map((a) => a.name).join(', ')}. Identifiers are not enumerated: their facet counts only the selected values. ` +
          'The body wraps the filter in filters; an empty filter gives the facets of the whole release. Answers are cached per release and filter.',
        body: FacetsBody,
        response: { 200: FacetsResponse, ...errors(400, 422) },
      },
    },
    async (req) => cohortFacets(ctx, (req.body ?? {}) as FacetsRequest),
  );
}
