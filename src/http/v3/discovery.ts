// Discovery: collections, analysis results, filterable attributes and the
// distinct values of an attribute.

import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getCollection, listAnalysisResults, listCollections } from '../../core/services/collections.ts';
import { attributeValues, listAttributes } from '../../core/services/attributes.ts';
import { CommercialUse } from '../../contract/cohort-schemas.ts';
import { applyLimit, restLimits } from '../../contract/limits.ts';
import { errors } from './schemas.ts';
import { immutableAnswer } from '../immutable-answer.ts';

const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});


const Source = Type.Object({
  source_DOI: NullableString('DOI of the source dataset (bare DOI); the value used by index.source_DOI and citations.'),
  source_url: NullableString(),
  license_short_name: NullableString('Short name of the license of this source, e.g. CC BY 4.0.'),
  license_url: NullableString(),
  commercial_use_allowed: CommercialUse,
});

const summaryProperties = {
  collection_id: Type.String({ description: 'Identifier of the collection; the value of the collection_id filter attribute.' }),
  collection_name: NullableString('Display name.'),
  cancer_types: NullableString(),
  tumor_locations: NullableString(),
  species: NullableString(),
  subjects: Type.Union([Type.Integer(), Type.Null()], { description: 'Number of subjects according to the curated metadata.' }),
  supporting_data: NullableString('Kinds of non-imaging data available (e.g. Clinical).'),
  description: NullableString('Description (HTML).'),
  program_id: NullableString('Program the collection belongs to.'),
  status: NullableString('Curation status.'),
  updated: NullableString('Date of the last update, YYYY-MM-DD.'),
  sources: Type.Array(Source, { description: 'Sources of the collection with their DOIs and licenses.' }),
};

const CollectionSummary = Type.Object(summaryProperties);

const LicenseItem = Type.Object({
  license_short_name: NullableString('Short license name; null groups series without a license value.'),
  series: Type.Integer(),
  size_TB: Type.Number({ description: 'Decimal terabytes (MB / 1e6), six decimals.' }),
  size_MB: Type.Number({ description: 'Decimal megabytes.' }),
  commercial_use_allowed: CommercialUse,
});

const CollectionDetail = Type.Object({
  ...summaryProperties,
  patients: Type.Integer(),
  studies: Type.Integer(),
  series: Type.Integer(),
  instances: Type.Integer(),
  size_TB: Type.Number({ description: 'Decimal terabytes (MB / 1e6), six decimals.' }),
  size_MB: Type.Number({ description: 'Decimal megabytes.' }),
  modalities: Type.Array(Type.String(), { description: 'Distinct modalities of the series, sorted.' }),
  licenses: Type.Array(LicenseItem, { description: 'Series and size per license, most series first (ties by name).' }),
});

const AnalysisResult = Type.Object({
  analysis_result_id: Type.String({ description: 'Identifier; the value of the analysis_result_id filter attribute.' }),
  analysis_result_title: NullableString(),
  source_DOI: NullableString(),
  source_url: NullableString(),
  subjects: Type.Union([Type.Integer(), Type.Null()]),
  collections: NullableString('Source collections analysed, comma-separated collection ids.'),
  modalities: NullableString('Modalities of the derived series, comma-separated.'),
  license_short_name: NullableString(),
  description: NullableString(),
});

const AttributeInfo = Type.Object({
  name: Type.String({ description: 'Attribute name, case-sensitive; a column of index, or of collections_index for facts of the collection.' }),
  table: Type.Union([Type.Literal('index'), Type.Literal('collections_index')], { description: 'index: a column of the series; collections_index: a fact of the series’ collection, matched through collection_id.' }),
  data_type: Type.String({ description: 'BigQuery-style type: STRING, INTEGER or FLOAT.' }),
  kind: Type.Union([Type.Literal('term'), Type.Literal('range')], { description: 'term: filter with terms (values); range: filter with ranges (gte/lte).' }),
  categorical: Type.Boolean({ description: 'True when enumerating the values is useful (few distinct values).' }),
  description: Type.String({ description: 'What the attribute holds, followed by its caveat when it has one.' }),
  value_format: Type.Optional(Type.Literal('YYYY-MM-DD', { description: 'Present on date attributes: range bounds are strings in this format.' })),
});

export async function discoveryRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  const limits = restLimits(ctx.config);
  const { default: valuesLimit, cap: valuesLimitCap } = limits.values;

  app.get(
    '/collections',
    {
      config: { cacheable: true },
      compress: false, // sent pre-compressed (immutable-answer.ts)
      schema: {
        tags: ['discovery'],
        summary: 'List collections',
        description:
          'Every collection (original dataset) with its curated metadata, sources, DOIs and licenses, ordered by collection_id. ' +
          'Use collection_id values in cohort filters; GET /v3/collections/{collection_id} adds counts, modalities and a license breakdown.',
        response: { 200: Type.Array(CollectionSummary) },
      },
    },
    immutableAnswer(ctx, listCollections),
  );

  const CollectionParams = Type.Object({
    collection_id: Type.String({ description: 'Collection identifier, case-sensitive (see GET /v3/collections).', examples: ['nlst'] }),
  });
  app.get<{ Params: Static<typeof CollectionParams> }>(
    '/collections/:collection_id',
    {
      config: { cacheable: true },
      schema: {
        tags: ['discovery'],
        summary: 'Collection detail',
        description:
          'One collection: its metadata plus distinct patients, studies and series, instances, size, the sorted list of modalities, ' +
          'and series and size per license (with whether commercial use is allowed). An unknown id is a 404 that suggests close ids.',
        params: CollectionParams,
        response: { 200: CollectionDetail, ...errors(404) },
      },
    },
    async (req) => getCollection(ctx, req.params.collection_id),
  );

  app.get(
    '/analysis_results',
    {
      config: { cacheable: true },
      schema: {
        tags: ['discovery'],
        summary: 'List analysis results',
        description:
          'Every analysis result (derived dataset: segmentations, annotations, measurements), ordered by analysis_result_id. ' +
          'An analysis result can span several collections: analysis_result_id and collection_id are independent filter axes.',
        response: { 200: Type.Array(AnalysisResult) },
      },
    },
    async () => listAnalysisResults(ctx),
  );

  app.get(
    '/attributes',
    {
      config: { cacheable: true },
      compress: false, // sent pre-compressed (immutable-answer.ts)
      schema: {
        tags: ['discovery'],
        summary: 'List filter attributes',
        description:
          'The attributes usable in cohort filters (all columns of index): kind term (filter with terms) or range (filter with ranges), ' +
          'data type, whether enumerating values is useful, and a description that includes any caveat. ' +
          'Take values from GET /v3/attributes/{attribute}/values. A property not listed here may be in another table: see GET /v3/tables.',
        response: { 200: Type.Array(AttributeInfo) },
      },
    },
    immutableAnswer(ctx, () => listAttributes()),
  );

  const ValuesParams = Type.Object({
    attribute: Type.String({ description: 'A column of index, case-sensitive (the filterable attributes and any other column).', examples: ['Modality'] }),
  });
  const ValuesQuery = Type.Object(
    {
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          default: valuesLimit,
          description: `Maximum number of values to return, 1 to ${valuesLimitCap} (default ${valuesLimit}); above ${valuesLimitCap} is lowered to it, with a warning.`,
          examples: [10],
        }),
      ),
    },
    { additionalProperties: false },
  );
  app.get<{ Params: Static<typeof ValuesParams>; Querystring: Static<typeof ValuesQuery> }>(
    '/attributes/:attribute/values',
    {
      config: { cacheable: true },
      schema: {
        tags: ['discovery'],
        summary: 'Distinct attribute values',
        description:
          'Distinct non-null values of a column of index with their series counts, most frequent first (ties by value), at most limit of them; ' +
          'truncated says whether more values exist. note carries the attribute’s caveat, or "" when there is none. ' +
          'Use the values with the casing returned here in cohort filters. An unknown column is a 400 that suggests close names.',
        params: ValuesParams,
        querystring: ValuesQuery,
        response: {
          200: Type.Object({
            attribute: Type.String(),
            values: Type.Array(
              Type.Object({
                value: Type.Unknown({ description: 'The value, with the column’s JSON type (string or number).' }),
                count: Type.Integer({ description: 'Number of series with this value.' }),
              }),
            ),
            truncated: Type.Boolean({ description: 'True when more distinct values exist than limit: raise limit to see them.' }),
            note: Type.String({ description: 'Caveat of the attribute, or "".' }),
            warnings: Type.Optional(Type.Array(Type.String(), { description: 'Present when a request parameter was changed (a limit above its cap lowered).' })),
          }),
          ...errors(400, 422),
        },
      },
    },
    async (req) => {
      const limit = applyLimit('limit', req.query.limit, limits.values);
      const body = await attributeValues(ctx, req.params.attribute, limit.value);
      return limit.warning ? { ...body, warnings: [limit.warning] } : body;
    },
  );
}
