// The cohort filter on the wire: the filter object every cohort-based route
// and tool takes, and what responses echo of it (filters_applied, warnings).
// Unknown members at any level are refused (422) so that a mis-shaped body
// can never silently select the entire dataset.

import { Type, type Static } from '@sinclair/typebox';
import type { FilterObject } from '../core/filters/v3.ts';
import { invalidRequest } from '../core/errors.ts';

export const RangeSchema = Type.Object(
  {
    gte: Type.Optional(Type.Union([Type.Number(), Type.String(), Type.Null()], { description: 'Lower bound, inclusive. Numbers, or YYYY-MM-DD for date attributes.' })),
    lte: Type.Optional(Type.Union([Type.Number(), Type.String(), Type.Null()], { description: 'Upper bound, inclusive.' })),
  },
  { additionalProperties: false, description: 'Inclusive bounds; either may be omitted for an open-ended range.' },
);

/** Filters of a union (any_of) at most: a cart holds one per kind of item, a few per saved cohort. */
export const ANY_OF_MAX = 100;

/** Values of a term attribute; null stands for no value (the portal's None bucket). */
// A type list rather than a union: the validator coerces types, and would turn null into "" for a union's string branch.
export const TermValue = Type.Unsafe<string | null>({ type: ['string', 'null'] });
const TermValues = Type.Array(TermValue);
const TermsOnly = Type.Record(Type.String(), TermValues);
const RangesOnly = Type.Record(Type.String(), RangeSchema);

const AllTerms = Type.Optional(
  Type.Record(Type.String(), Type.Array(Type.String()), {
    description:
      'Categorical attribute of the series to values that a study must ALL have (each in at least one of its series); selects every series of such studies. ' +
      'E.g. {"Modality": ["CT", "PT"]}: the studies with both a CT and a PT series (the portal\'s "studies with ALL selected modalities"; terms is ANY). ' +
      'An attribute is given in terms or in all_terms, not both.',
    examples: [{ Modality: ['CT', 'PT'] }],
  }),
);

/** One member of a union: a filter of terms and ranges (no union inside). */
export const SubFilterSchema = Type.Object(
  { terms: Type.Optional(TermsOnly), ranges: Type.Optional(RangesOnly), all_terms: AllTerms },
  { additionalProperties: false, description: 'A filter of terms, ranges and all_terms, as the top-level ones.' },
);

const AnyOf = Type.Optional(
  Type.Array(SubFilterSchema, {
    maxItems: ANY_OF_MAX,
    description:
      'A union: a series is selected when it matches at least one of these filters (and the top-level terms and ranges, when given). ' +
      'A cart of collections, patients, studies and series is a union of one filter per kind, e.g. ' +
      '[{"terms": {"collection_id": ["nlst"]}}, {"terms": {"SeriesInstanceUID": ["1.2.3"]}}]. An empty list is ignored.',
    examples: [[{ terms: { collection_id: ['nlst'], Modality: ['CT'] } }, { terms: { PatientID: ['TCGA-02-0003'] } }]],
  }),
);

export const FilterSchema = Type.Object(
  {
    terms: Type.Optional(
      Type.Record(Type.String(), TermValues, {
        description:
          'Attribute name to accepted values (OR within an attribute, AND across attributes). Values are case-sensitive; take them from GET /v3/attributes/{attr}/values. ' +
          'null among the values of a categorical attribute selects the series without a value (the missing bucket of the facets), e.g. {"BodyPartExamined": ["CHEST", null]}.',
        examples: [{ collection_id: ['nlst'], Modality: ['CT'] }],
      }),
    ),
    ranges: Type.Optional(
      Type.Record(Type.String(), RangeSchema, {
        description: 'Range attribute name to {gte, lte} (e.g. instanceCount, series_size_MB, StudyDate).',
        examples: [{ instanceCount: { gte: 50 } }],
      }),
    ),
    all_terms: AllTerms,
    any_of: AnyOf,
  },
  { additionalProperties: false, description: 'Cohort filter over the series table index.' },
);

export type FilterBody = Static<typeof FilterSchema>;

/** Body of counts and licenses: the filter itself, or wrapped as {"filters": {...}} (newer clients). */
export const FilterOrWrappedSchema = Type.Object(
  {
    terms: FilterSchema.properties.terms,
    ranges: FilterSchema.properties.ranges,
    all_terms: AllTerms,
    any_of: AnyOf,
    filters: Type.Optional(FilterSchema),
  },
  {
    additionalProperties: false,
    description: 'The filter object itself ({terms, ranges}); the wrapped form {"filters": {terms, ranges}} is accepted too.',
    examples: [{ terms: { collection_id: ['nlst'], Modality: ['CT'] }, ranges: {} }],
  },
);

/** What a cohort response says it applied. */
const AppliedTermsRanges = {
    terms: Type.Record(Type.String(), TermValues),
    ranges: Type.Record(
      Type.String(),
      Type.Object({ gte: Type.Optional(Type.Union([Type.Number(), Type.String()])), lte: Type.Optional(Type.Union([Type.Number(), Type.String()])) }),
    ),
};

const AppliedAllTerms = Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()), { description: 'The all-of values as applied, when the filter has them.' }));

export const FiltersApplied = Type.Object(
  {
    ...AppliedTermsRanges,
    all_terms: AppliedAllTerms,
    any_of: Type.Optional(Type.Array(Type.Object({ ...AppliedTermsRanges, all_terms: AppliedAllTerms }), { description: 'The union as applied, when the filter has one.' })),
  },
  { description: 'The filter as applied: duplicate values removed, empty value lists and bound-less ranges dropped.' },
);

export const Warnings = Type.Array(Type.String(), {
  description: 'What the filter did not do as probably meant: empty filter, ignored empty value lists, values that exist only in another casing, lowered sizes.',
});

export function unwrapFilters(body: Static<typeof FilterOrWrappedSchema> | undefined): FilterObject {
  if (!body) return {};
  if (body.filters && (body.terms || body.ranges || body.all_terms || body.any_of)) {
    throw invalidRequest('Send the filter either as the body itself ({terms, ranges, any_of}) or wrapped as {"filters": {...}}, not both.');
  }
  return (body.filters ?? { terms: body.terms, ranges: body.ranges, all_terms: body.all_terms, any_of: body.any_of }) as FilterObject;
}
