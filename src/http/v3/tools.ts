// Side tools: viewer links and cohort citations.

import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { CITATION_FORMATS, DEFAULT_CITATION_FORMAT, PLATFORM_DOI, citations } from '../../core/services/citations.ts';
import { VIEWERS, viewerExample, viewerUrl } from '../../core/services/viewer.ts';
import { FilterSchema, FiltersApplied } from '../../contract/filter-schema.ts';
import { AS_OF_DESCRIPTION, AsOfNames } from '../../contract/release-schemas.ts';
import { errors } from './schemas.ts';

const CslName = Type.Union([
  Type.Object({ family: Type.String(), given: Type.Optional(Type.String()) }),
  Type.Object({ literal: Type.String({ description: 'Organisation or group author.' }) }),
]);

const CslItem = Type.Object(
  {
    id: Type.String(),
    type: Type.Union([Type.Literal('dataset'), Type.Literal('article-journal')]),
    title: Type.Optional(Type.String()),
    author: Type.Optional(Type.Array(CslName)),
    issued: Type.Optional(Type.Object({ 'date-parts': Type.Array(Type.Array(Type.Integer())) })),
    DOI: Type.String(),
    URL: Type.String(),
    publisher: Type.Optional(Type.String()),
    'container-title': Type.Optional(Type.String()),
    volume: Type.Optional(Type.String()),
    issue: Type.Optional(Type.String()),
    page: Type.Optional(Type.String()),
    note: Type.Optional(Type.String()),
  },
  { description: 'A CSL-JSON item (citation_format csl-json).' },
);

const Citation = Type.Union([Type.String({ description: 'A formatted citation (apa, bibtex, ris).' }), CslItem]);

const CitationsResult = Type.Object({
  format: Type.String({ description: `The format used: one of ${CITATION_FORMATS.join(', ')}.` }),
  count: Type.Integer({ description: 'Number of citations (distinct source DOIs of the cohort).' }),
  dois: Type.Array(Type.String(), { description: 'The DOIs cited, in the order of citations.' }),
  citations: Type.Array(Citation, {
    description: 'One citation per distinct source DOI of the cohort, ordered by DOI: strings for apa, bibtex and ris; CSL-JSON objects for csl-json.',
  }),
  missing_metadata: Type.Array(Type.String(), {
    description: 'DOIs without a stored bibliographic record. They are still cited (DOI and link only); resolve the DOI for the full reference.',
  }),
  idc_acknowledgment: Type.Union([Type.String(), CslItem], { description: `Citation of the data platform paper (DOI ${PLATFORM_DOI}) in the same format.` }),
  recommendation: Type.String(),
  filters_applied: FiltersApplied,
  warnings: Type.Array(Type.String(), { description: 'Caveats about the filter (empty filter, case mismatches, ignored members).' }),
  ...AsOfNames,
});

const CitationsBody = Type.Object(
  {
    filters: Type.Optional(FilterSchema),
    citation_format: Type.Optional(
      Type.String({
        description: `Citation format, case-insensitive: ${CITATION_FORMATS.join(', ')}. Default ${DEFAULT_CITATION_FORMAT}. An unknown format is a 400 invalid_query.`,
        examples: ['apa'],
      }),
    ),
    as_of: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: AS_OF_DESCRIPTION })),
  },
  { additionalProperties: false, examples: [{ filters: { terms: { collection_id: ['nlst'] } }, citation_format: 'apa' }] },
);

const ViewerResult = Type.Object({
  viewer_url: Type.String({ description: 'Link that opens the study (and the series, when given) in the viewer.' }),
  viewer: Type.String({ description: `The viewer used: one of ${VIEWERS.join(', ')}.` }),
  study_instance_uid: Type.String({ description: 'The study opened (looked up from the series when not given).' }),
  series_instance_uid: Type.Union([Type.String(), Type.Null()], { description: 'The series given, or null.' }),
  modalities: Type.Array(Type.String(), { description: 'Modalities present in the study, ascending.' }),
});

export async function toolsRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  // Examples that resolve against the served data: computed before the route is declared.
  const ex = await viewerExample(ctx);
  const smHint = ex?.sm_study_instance_uid ? ` For example study ${ex.sm_study_instance_uid} contains slide microscopy and opens in slim.` : '';

  const ViewerQuery = Type.Object(
    {
      study_instance_uid: Type.Optional(
        Type.String({
          description: 'DICOM StudyInstanceUID. Optional when series_instance_uid is given; when both are given the series must belong to this study.',
          ...(ex ? { examples: [ex.study_instance_uid] } : {}),
        }),
      ),
      series_instance_uid: Type.Optional(
        Type.String({
          description: 'DICOM SeriesInstanceUID; its study is looked up. The viewer opens the study with this series selected.',
          ...(ex ? { examples: [ex.series_instance_uid] } : {}),
        }),
      ),
      viewer: Type.Optional(
        Type.String({
          description: `One of ${VIEWERS.join(', ')} (case-sensitive). Default: slim when the study has a slide-microscopy (SM) series, else ohif_v3. volview links the series (the one given, or the study's) as ?urls=[s3://<bucket>/<crdc_series_uuid>,…]; SM or XC, or a study spread over several buckets, is a 422. Another value is a 400 invalid_query.`,
          examples: ['ohif_v3'],
        }),
      ),
    },
    { additionalProperties: false },
  );

  app.get<{ Querystring: Static<typeof ViewerQuery> }>(
    '/viewer-url',
    {
      config: { cacheable: true },
      schema: {
        tags: ['tools'],
        summary: 'Viewer URL',
        description:
          'Link to the web DICOM viewer for a study or a series: OHIF v3 for radiology, Slim for slide microscopy (or the viewer requested). ' +
          'Give series_instance_uid, study_instance_uid, or both (then the series must be part of the study). ' +
          `Neither, or an unknown viewer, is a 400; an unknown UID is a 404; viewer=volview for slide microscopy, photographs (XC) or a study in several buckets is a 422 saying why.${smHint}`,
        querystring: ViewerQuery,
        response: { 200: ViewerResult, ...errors(400, 404, 422) },
      },
    },
    async (req) => viewerUrl(ctx, req.query),
  );

  app.post<{ Body: Static<typeof CitationsBody> }>(
    '/citations',
    {
      schema: {
        tags: ['tools'],
        summary: 'Cohort citations',
        description:
          'Citations for the datasets of a cohort: one per distinct source DOI of the series matching filters (all series when filters is omitted), ' +
          `produced offline from the bibliography stored with the data. Formats: ${CITATION_FORMATS.join(', ')} (default ${DEFAULT_CITATION_FORMAT}). ` +
          `A DOI without a stored record is still cited by DOI and listed in missing_metadata. idc_acknowledgment is the platform paper (DOI ${PLATFORM_DOI}), ` +
          'to be cited in addition to the datasets.',
        body: CitationsBody,
        response: { 200: CitationsResult, ...errors(400, 422) },
      },
    },
    async (req) => citations(ctx, { filters: req.body?.filters, citation_format: req.body?.citation_format, ...(req.body?.as_of === undefined ? {} : { as_of: req.body.as_of }) }),
  );
}
