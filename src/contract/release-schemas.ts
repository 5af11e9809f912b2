// Wire shapes of the questions over releases (what changed between two; a
// cohort as of a release): the REST routes and the MCP tools declare them.

import { Type, type Static } from '@sinclair/typebox';
import { FilterOrWrappedSchema, FilterSchema, Warnings } from './filter-schema.ts';

const NullableString = () => Type.Unsafe<string | null>({ type: ['string', 'null'] });

export const ReleaseName = Type.Union([Type.String(), Type.Integer()], {
  description: 'A release: "v19", 19 or a version such as "19.0.3" (its major number is the release).',
});

export const ChangesBody = Type.Object(
  {
    filters: Type.Optional(FilterSchema),
    from: ReleaseName,
    to: Type.Optional(ReleaseName),
    limit: Type.Optional(Type.Integer({ minimum: 0, description: 'Changed series to list (default 100; 0 for counts only).' })),
    format: Type.Optional(Type.Unsafe<'json' | 'tsv'>({ type: 'string', enum: ['json', 'tsv'], description: 'tsv: every change as a tab-separated download instead of JSON.' })),
    by: Type.Optional(
      Type.Unsafe<'collection_id' | 'Modality'>({ type: 'string', enum: ['collection_id', 'Modality'], description: 'Also count the changes per collection or per modality (groups).' }),
    ),
  },
  { additionalProperties: false },
);

const ChangeCount = Type.Object({ series: Type.Integer(), size_MB: Type.Number(), size_TB: Type.Number() });

export const ChangeRowWire = Type.Object({
  change: Type.Unsafe<'added' | 'revised' | 'removed'>({ type: 'string', enum: ['added', 'revised', 'removed'] }),
  SeriesInstanceUID: Type.String(),
  collection_id: Type.String(),
  PatientID: Type.String(),
  StudyInstanceUID: Type.String(),
  Modality: NullableString(),
  from_crdc_series_uuid: NullableString(),
  to_crdc_series_uuid: NullableString(),
  series_aws_url: NullableString(),
  series_size_MB: Type.Unsafe<number | null>({ type: ['number', 'null'] }),
});

export const ChangesResponse = Type.Object({
  from: Type.String(),
  to: Type.String(),
  computed_on: Type.String({ description: 'The release whose index and prior_versions_index answered.' }),
  counts: Type.Object({ added: ChangeCount, revised: ChangeCount, removed: ChangeCount, unchanged: Type.Integer() }, { description: 'Sizes are of the later version (of the earlier one for removed series).' }),
  series: Type.Array(ChangeRowWire, { description: 'Changed series: added, then removed, then revised, each by collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID.' }),
  returned: Type.Integer(),
  truncated: Type.Boolean({ description: 'More series changed than limit listed.' }),
  filterable: Type.Array(Type.String(), { description: 'Attributes a filter over releases may use.' }),
  warnings: Warnings,
  groups: Type.Optional(
    Type.Array(
      Type.Object({
        value: NullableString(),
        added: Type.Integer(),
        revised: Type.Integer(),
        removed: Type.Integer(),
        unchanged: Type.Integer(),
        changed_MB: Type.Number({ description: 'Size of the added, revised and removed series.' }),
      }),
      { description: 'With by: the changes per value, most changed series first, then by value.' },
    ),
  ),
});

export type ChangesWire = Static<typeof ChangesResponse>;

export const AS_OF_DESCRIPTION =
  'A past release ("v19"): the cohort that release served, from the served release and its prior_versions_index. ' +
  'Filters may then use terms on collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID and Modality only; the answer names as_of and computed_on.';

/** Members of an answer computed as of a past release. */
export const AsOfNames = {
  as_of: Type.Optional(Type.String({ description: 'With as_of: the release the answer describes (v<number>).' })),
  computed_on: Type.Optional(Type.String({ description: 'With as_of: the release whose data answered.' })),
};

/** Body of the counts route: the filter (bare or wrapped), and optionally the release to count as of. */
export const CountsBody = Type.Object(
  { ...FilterOrWrappedSchema.properties, as_of: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: AS_OF_DESCRIPTION })) },
  { additionalProperties: false, description: FilterOrWrappedSchema.description, examples: FilterOrWrappedSchema.examples as unknown[] },
);
