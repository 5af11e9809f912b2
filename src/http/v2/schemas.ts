// Schemas of the /v2 routes, written once for the OpenAPI document at
// /v2/openapi.json (and /v2/swagger) and for response serialization. Request
// members are checked by the core instead of the schema validator, so that
// errors carry the public interface's exact messages (see v2/index.ts).

import { Type, type TSchema } from '@sinclair/typebox';

export const V2Error = Type.Object(
  {
    code: Type.Integer({ description: 'The HTTP status, mirrored.' }),
    message: Type.String({ description: 'What went wrong (the public interface\'s wording for the errors it defines).' }),
    request_id: Type.Optional(Type.String({ description: 'Id of the request (also in the X-Request-Id header and the server log).' })),
  },
  { $id: 'V2Error', description: 'Error envelope of every /v2 error response.' },
);

export function v2Errors(...codes: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const c of codes) out[c] = Type.Ref('V2Error');
  return out;
}

const Str = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});
const Code = Type.Integer({ description: '200 on success (mirrors the HTTP status).' });

export const About = Type.Object({ code: Code, documentation: Type.String(), message: Type.String() });

export const Versions = Type.Object({
  code: Code,
  versions: Type.Array(
    Type.Object({
      idc_data_version: Type.String({ description: 'Data version, "N.0".' }),
      date_active: Str('Date the version became active, YYYY-MM-DD.'),
      active: Type.Boolean({ description: 'True for the current version only (the data every request uses).' }),
    }),
  ),
});

export const Collections = Type.Object({
  code: Code,
  collections: Type.Array(
    Type.Object({
      cancer_type: Str(),
      collection_id: Type.String({ description: 'The value of the collection_id filter.' }),
      date_updated: Str('YYYY-MM-DD'),
      description: Str('HTML'),
      doi: Str('DOI of the (first) source.'),
      image_types: Str('Modalities, comma-separated.'),
      location: Str(),
      species: Str(),
      subject_count: Type.Union([Type.Integer(), Type.Null()]),
      supporting_data: Str(),
      source_doi: Str('Every source DOI, space-separated.'),
      source_url: Str(),
    }),
  ),
});

export const AnalysisResults = Type.Object({
  code: Code,
  analysisResults: Type.Array(
    Type.Object({
      analysisArtifacts: Str('Modalities of the derived series, comma-separated.'),
      analysis_result_id: Type.String(),
      cancer_type: Str(),
      collections: Str('Collections analysed, comma-separated collection ids.'),
      date_updated: Str(),
      description: Str(),
      doi: Str(),
      location: Str(),
      subjects: Type.Union([Type.Integer(), Type.Null()]),
      title: Str(),
      source_url: Str(),
      license_short_name: Str(),
    }),
  ),
});

const DataType = Type.Union(
  ['Categorical String', 'String', 'Categorical Numeric', 'Ranged Integer', 'Ranged Number'].map((t) => Type.Literal(t)),
  { description: 'How the filter matches; see the filter set rules in the description of the preview route.' },
);

export const Filters = Type.Object({
  code: Code,
  data_sources: Type.Array(
    Type.Object({
      data_source: Type.String({ description: 'Table the attributes belong to (queryable with /v3/sql).' }),
      filters: Type.Array(Type.Object({ name: Type.String(), data_type: DataType, units: Str() })),
    }),
  ),
});

export const FilterValues = Type.Object({
  code: Code,
  values: Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()]), { description: 'Distinct values, null first, at most 5000.' }),
  truncated: Type.Optional(Type.Boolean({ description: 'Present and true when there are more than 5000 values.' })),
});

export const Fields = Type.Object({
  code: Code,
  idc_data_version: Type.String(),
  data_sources: Type.Array(Type.Object({ data_source: Type.String(), fields: Type.Array(Type.String()) })),
});

const FilterSet = Type.Record(Type.String(), Type.Array(Type.Union([Type.String(), Type.Number()])), {
  description:
    'Attribute name (any casing) to an array of values. Strings match case-insensitively, % is a wildcard; Categorical Numeric takes one number; ranged attributes are filtered as <name>_<suffix> with suffixes eq, gt, gte, lt, lte (one value) and btw, ebtw, btwe, ebtwe (two values, least first). GET /v2/filters lists the names.',
  examples: [{ collection_id: ['TCGA-LUAD'], Modality: ['CT'] }],
});

export const PreviewBody = Type.Object(
  {
    cohort_def: Type.Object({
      name: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      filters: Type.Optional(FilterSet),
    }),
    fields: Type.Array(Type.String(), { description: 'Manifest columns (GET /v2/fields); may be empty when counts or group_size is true.' }),
    counts: Type.Optional(Type.Boolean({ description: 'Add the count members of the granularity.' })),
    group_size: Type.Optional(Type.Boolean({ description: 'Add group_size: total bytes of the instances of each row.' })),
    sql: Type.Optional(Type.Boolean({ description: 'Return the generated SQL in cohort_def.sql.' })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, description: 'Rows per page; default 1000, at most the configured maximum (50000 by default; larger values are lowered to it).' })),
  },
  {
    examples: [
      {
        cohort_def: { name: 'lung-ct', description: 'CT of TCGA-LUAD', filters: { collection_id: ['TCGA-LUAD'], Modality: ['CT'] } },
        fields: ['collection_id', 'PatientID', 'StudyInstanceUID'],
        counts: true,
        group_size: true,
        page_size: 10,
      },
    ],
  },
);

const Manifest = Type.Object({
  manifest_data: Type.Array(Type.Object({}, { additionalProperties: true }), {
    description: 'One row per distinct combination of the requested fields, ordered by them; null for a missing value; counts and group_size as integers.',
  }),
  rowsReturned: Type.Integer(),
  totalFound: Type.Integer({ description: 'Rows in the whole manifest.' }),
});

const CohortDef = Type.Object({
  name: Type.Unknown(),
  description: Type.Unknown(),
  sql: Type.String({ description: 'The generated SQL (DuckDB) when sql was true, else empty.' }),
  user_email: Type.Null(),
  filterSet: Type.Object({
    filters: Type.Record(Type.String(), Type.Array(Type.Union([Type.String(), Type.Number()]))),
    svc_data_version: Type.String({ description: 'Current data version, major.minor.' }),
    idc_data_version: Type.String({ description: 'Same, under the name later clients read.' }),
  }),
});

const NextPageToken = Type.String({ description: 'Token of the next page; empty when there is no more data.' });

export const PreviewResponse = Type.Object({ code: Code, cohort_def: CohortDef, manifest: Manifest, next_page: NextPageToken });
export const NextPageResponse = Type.Object({ code: Code, manifest: Manifest, next_page: NextPageToken });

export const Accepted = Type.Object(
  {
    code: Type.Literal(202),
    message: Type.String(),
    next_page: Type.String({ description: 'Resubmit to nextPage to collect the page.' }),
    query_info: Type.Object({
      cohortObjects: Type.Object({ collections: Type.Array(Type.Unknown()), rowsReturned: Type.Integer(), totalFound: Type.Integer() }),
      cohort_def: Type.Optional(CohortDef),
      next_page: Type.String(),
    }),
  },
  { description: 'The page took longer than the deadline; the work continues. Resubmit next_page (also in query_info.next_page).' },
);

export const NextPageBody = Type.Object(
  {
    next_page: Type.String({ description: 'Token from the previous response.' }),
    page_size: Type.Optional(Type.Integer({ minimum: 1, description: 'Rows of this page; default: the page size the manifest was started with.' })),
  },
  { examples: [{ next_page: '<token>', page_size: 1000 }] },
);
