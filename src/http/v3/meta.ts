// Root document, health, version and headline totals.

import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { stats, version } from '../../core/services/version.ts';
import { readiness } from '../../core/services/readiness.ts';
import { sendError } from '../errors.ts';
import { ReleaseTotals, errors } from './schemas.ts';

const Version = Type.Object({
  idc_version: Type.String({ description: 'Data release served, e.g. v24.' }),
  idc_index_data_version: Type.String({ description: 'Version of the index tables, e.g. 24.2.2.' }),
  api_version: Type.String({ description: "This server's software version." }),
  build: Type.Union([Type.String(), Type.Null()], { description: 'Build stamp of the deployment (IDQS_BUILD); null when none is set.' }),
  synthetic: Type.Boolean({ description: 'True when the served data is the generated demonstration dataset.' }),
  engines: Type.Array(Type.String(), {
    description: 'The engines configured to answer, in the order they are asked: cohort-index (in memory), trino (a cluster, when IDQS_TRINO_URL is set; asked only while it serves this release), duckdb (always last).',
  }),
  releases: Type.Optional(
    Type.Array(Type.Object({ release: Type.String(), idc_version: Type.String(), default: Type.Boolean() }), {
      description: 'Present when the server serves several releases: each (the one above is the one asked for, by default the newest); GET /v3/releases has their totals.',
    }),
  ),
});

const Stats = Type.Composite([Type.Object({ idc_version: Type.String() }), ReleaseTotals]);

export async function metaRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  app.get(
    '',
    {
      config: { cacheable: true },
      schema: {
        tags: ['meta'],
        summary: 'API root',
        description: 'Names the service and points to the documentation, the OpenAPI document and the version endpoint.',
        response: {
          200: Type.Object({
            name: Type.String(),
            server_version: Type.String(),
            docs: Type.String(),
            openapi: Type.String(),
            version_endpoint: Type.String(),
          }),
        },
      },
    },
    async () => ({ name: 'IDQS', server_version: ctx.serverVersion, docs: '/v3/docs', openapi: '/v3/openapi.json', version_endpoint: '/v3/version' }),
  );
  app.get(
    '/health',
    {
      schema: {
        tags: ['meta'],
        summary: 'Health check',
        description: 'Liveness: answers {"status":"ok"} while the server runs.',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  const Budget = Type.Object(
    {
      slots: Type.Integer(),
      busy: Type.Integer(),
      queued: Type.Integer(),
      admitted: Type.Integer(),
      rejected: Type.Integer({ description: 'Refused since start: the queue was full.' }),
      expired: Type.Integer({ description: 'Gave up since start at the queue deadline.' }),
      cancelled: Type.Integer({ description: 'Stopped since start because nobody waited any more.' }),
      timed_out: Type.Integer({ description: 'Stopped since start at the run deadline.' }),
      leaked: Type.Integer({ description: 'Slots held now far past any deadline.' }),
    },
    { additionalProperties: true },
  );
  app.get(
    '/ready',
    {
      schema: {
        tags: ['meta'],
        summary: 'Readiness check',
        description:
          'Whether this server should receive traffic now (for load balancers and supervisors; /v3/health is liveness). 503 when it is shutting down, ' +
          'when the database cannot be read, when a budget of work is saturated (its queue is full) or when a slot is held far past its deadline; the message lists every problem.',
        response: {
          200: Type.Object({
            status: Type.Literal('ready'),
            checks: Type.Object({
              draining: Type.Boolean(),
              database: Type.String({ description: 'ok, or unreadable.' }),
              budgets: Type.Record(Type.String(), Budget, { description: 'Each budget of work: curated queries, streamed exports, facet counts, caller SQL.' }),
            }),
          }),
          ...errors(503),
        },
      },
    },
    async (req, reply) => {
      const r = await readiness(ctx, app.draining);
      reply.header('Cache-Control', 'no-store');
      if (!r.ready) return sendError(req, reply, 503, 'not_ready', `Not ready: ${r.problems.join('; ')}.`);
      return { status: 'ready' as const, checks: r.checks };
    },
  );
  app.get(
    '/version',
    {
      config: { cacheable: true },
      schema: {
        tags: ['discovery'],
        summary: 'Data release and server version',
        description: 'The data release served, the version of its index tables, and this server’s software version (plus its build stamp when set). Call it to know what answers are based on.',
        response: { 200: Version },
      },
    },
    async () => version(ctx),
  );
  app.get(
    '/stats',
    {
      config: { cacheable: true },
      schema: {
        tags: ['discovery'],
        summary: 'Headline totals',
        description: 'Totals of the release: collections, analysis results, patients, studies, series, instances and size.',
        response: { 200: Stats },
      },
    },
    async () => stats(ctx),
  );
}
