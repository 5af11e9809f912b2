// The /v2 routes: discovery in the record shapes of the earlier interface,
// and the manifest preview with its next pages (200, or 202 when a page
// outlives the deadline). Bodies are checked by the core in the public
// interface's words; this file only maps requests and outcomes.

import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidQuery } from '../../core/errors.ts';
import {
  checkFieldsVersion,
  v2AnalysisResults,
  v2Collections,
  v2FieldsList,
  v2FilterValues,
  v2Filters,
  versions,
} from '../../core/services/v2/metadata.ts';
import { nextPage, preview, TIMEOUT_MESSAGE, type CohortDefEcho, type PageOutcome } from '../../core/services/v2/preview.ts';
import {
  About,
  Accepted,
  AnalysisResults,
  Collections,
  Fields,
  FilterValues,
  Filters,
  NextPageBody,
  NextPageResponse,
  PreviewBody,
  PreviewResponse,
  Versions,
  v2Errors,
} from './schemas.ts';
import { publicBase } from '../../contract/public-base.ts';
import { holdExport, writeDeadlines } from '../streams.ts';

const cacheable = { cacheable: true };

/** 200 with the page, or 202 with the token that collects it; a client that stops reading is cut. */
function sendPage(req: FastifyRequest, reply: FastifyReply, outcome: PageOutcome, cohortDef?: CohortDefEcho) {
  writeDeadlines(req, reply);
  if (outcome.status === 'pending') {
    return reply.code(202).send({
      code: 202,
      message: TIMEOUT_MESSAGE,
      next_page: outcome.next_page,
      query_info: {
        cohortObjects: { collections: [], rowsReturned: 0, totalFound: 0 },
        ...(cohortDef ? { cohort_def: cohortDef } : {}),
        next_page: outcome.next_page,
      },
    });
  }
  // The rows arrive as JSON text from the engine: the body is assembled, not re-serialized.
  const m = outcome.manifest;
  const body =
    `{"code":200,${cohortDef ? `"cohort_def":${JSON.stringify(cohortDef)},` : ''}` +
    `"manifest":{"manifest_data":[${m.manifest_data.join(',')}],"rowsReturned":${m.rowsReturned},"totalFound":${m.totalFound}},` +
    `"next_page":${JSON.stringify(outcome.next_page)}}`;
  return reply.type('application/json; charset=utf-8').send(body);
}

/** page_size of nextPage: absent, or a positive integer (as a query string or a JSON number). */
function pageSizeParam(v: unknown, message: string): number | null {
  if (v === undefined || v === null || v === '') return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*[+]?\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n)) throw invalidQuery(message);
  if (n < 1) throw invalidQuery(`page_size must be at least 1; got ${n}`);
  return n;
}

export async function v2Routes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;

  app.get(
    '/about',
    {
      schema: { tags: ['about'], summary: 'About this interface', description: 'Welcome message and where the documentation is.', response: { 200: About } },
      config: cacheable,
    },
    (req) => ({
      code: 200,
      documentation: `SwaggerUI interface available at <${publicBase(ctx.config, req)}/v2/swagger/>. The OpenAPI document is at /v2/openapi.json; the newer interface is documented at /v3/docs.`,
      message: 'Welcome to the IDQS API, Version 2 (compatible with the NCI IDC API, Version 2)',
    }),
  );

  app.get(
    '/versions',
    {
      schema: { tags: ['data model'], summary: 'Data versions', description: 'Every data version, oldest first; exactly one is active: the current one, which every request uses.', response: { 200: Versions } },
      config: cacheable,
    },
    async () => ({ code: 200, versions: await versions(ctx) }),
  );

  app.get(
    '/collections',
    {
      schema: { tags: ['data model'], summary: 'Original collections', description: 'Original collections of the current version with their metadata, by collection_id.', response: { 200: Collections } },
      config: cacheable,
    },
    async () => ({ code: 200, collections: await v2Collections(ctx) }),
  );

  app.get(
    '/analysis_results',
    {
      schema: { tags: ['data model'], summary: 'Analysis results', description: 'Analysis results (derived data) of the current version with their metadata.', response: { 200: AnalysisResults } },
      config: cacheable,
    },
    async () => ({ code: 200, analysisResults: await v2AnalysisResults(ctx) }),
  );

  app.get(
    '/filters',
    {
      schema: {
        tags: ['data model'],
        summary: 'Filter attributes',
        description: 'Filter names and data types per data source. Ranged attributes are listed with their nine suffixed names.',
        response: { 200: Filters },
      },
      config: cacheable,
    },
    () => ({ code: 200, data_sources: v2Filters(ctx) }),
  );

  app.get(
    '/filters/values/:filter',
    {
      schema: {
        tags: ['data model'],
        summary: 'Values of a categorical filter',
        description: 'Accepted values of a Categorical String or Categorical Numeric filter (name in any casing): distinct values, null first, at most 5000.',
        params: Type.Object({ filter: Type.String({ examples: ['Modality'] }) }),
        response: { 200: FilterValues, ...v2Errors(400) },
      },
      config: cacheable,
    },
    async (req) => {
      const { values, truncated } = await v2FilterValues(ctx, (req.params as { filter: string }).filter);
      return truncated ? { code: 200, values, truncated } : { code: 200, values };
    },
  );

  const fieldsSchema = {
    tags: ['data model'],
    summary: 'Manifest fields',
    description: 'Fields a manifest may list, per data source. The store fields are cloud1_url/cloud2_url and cloud1_bucket/cloud2_bucket; aws_url, gcs_url, aws_bucket and gcs_bucket are accepted too.',
    response: { 200: Fields, ...v2Errors(400) },
  };
  app.get('/fields', { schema: fieldsSchema, config: cacheable }, async () => ({
    code: 200,
    idc_data_version: await checkFieldsVersion(ctx, 'current'),
    data_sources: v2FieldsList(ctx),
  }));
  app.get(
    '/fields/:version',
    { schema: { ...fieldsSchema, params: Type.Object({ version: Type.String({ description: '`current` or a version of /v2/versions ("24.0").', examples: ['current'] }) }) }, config: cacheable },
    async (req) => ({
      code: 200,
      idc_data_version: await checkFieldsVersion(ctx, (req.params as { version: string }).version),
      data_sources: v2FieldsList(ctx),
    }),
  );

  app.post(
    '/cohorts/manifest/preview',
    {
      schema: {
        tags: ['manifests'],
        summary: 'Manifest of a filter set',
        description:
          'Selects the instances that satisfy every filter (values of one filter ORed); returns one row per distinct combination of the requested fields, in their order, ' +
          'at the first granularity that applies (instance, series, study, patient, collection, version) with its count members when counts is true. ' +
          'TCGA clinical and biospecimen filters select patients through case_barcode = PatientID, so patients without TCGA data are excluded by them. ' +
          'Paged: follow next_page with nextPage until it is empty. 202 when the page takes longer than the deadline: resubmit its next_page.',
        body: PreviewBody,
        response: { 200: PreviewResponse, 202: Accepted, ...v2Errors(400, 415, 503) },
      },
    },
    async (req, reply) => {
      await holdExport(req, reply);
      const out = await preview(ctx, req.body);
      return sendPage(req, reply, out.page, out.cohort_def);
    },
  );

  app.post(
    '/cohorts/manifest/preview/nextPage',
    {
      schema: {
        tags: ['manifests'],
        summary: 'Next page of a manifest',
        description: 'The page a next_page token points to (also the page a 202 promised).',
        body: NextPageBody,
        response: { 200: NextPageResponse, 202: Accepted, ...v2Errors(400, 415, 503) },
      },
    },
    async (req, reply) => {
      const b = req.body as Record<string, unknown> | null;
      if (b === null || typeof b !== 'object' || Array.isArray(b)) throw invalidQuery('The body must be a JSON object: {"next_page": "<token>", "page_size": 1000}.');
      for (const k of Object.keys(b)) if (k !== 'next_page' && k !== 'page_size') throw invalidQuery(`${k} is an invalid body key`);
      const size = pageSizeParam(b.page_size, 'page_size value must be an integer');
      await holdExport(req, reply);
      return sendPage(req, reply, await nextPage(ctx, b.next_page, size));
    },
  );

  app.get(
    '/cohorts/manifest/preview/nextPage',
    {
      schema: {
        tags: ['manifests'],
        summary: 'Next page of a manifest (query parameters)',
        description: 'As the POST form, with next_page and page_size as query parameters (names in any casing).',
        querystring: Type.Object({ next_page: Type.String(), page_size: Type.Optional(Type.Integer({ minimum: 1 })) }),
        response: { 200: NextPageResponse, 202: Accepted, ...v2Errors(400, 503) },
      },
    },
    async (req, reply) => {
      let token: string | undefined;
      let size: string | undefined;
      for (const [k, v] of Object.entries(req.query as Record<string, string | string[]>)) {
        const value = Array.isArray(v) ? v[v.length - 1] : v;
        if (k.toLowerCase() === 'next_page') token = value;
        else if (k.toLowerCase() === 'page_size') size = value;
        else throw invalidQuery(`Invalid query parameter ${k}`);
      }
      const pageSize = pageSizeParam(size, 'Invalid page_size');
      await holdExport(req, reply);
      return sendPage(req, reply, await nextPage(ctx, token, pageSize));
    },
  );
}
