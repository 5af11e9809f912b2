// GET /v3/releases: the releases this process serves, newest (the default) first.

import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { listReleases } from '../../core/releases.ts';
import { ReleaseTotals, errors } from './schemas.ts';

const Release = Type.Composite([
  Type.Object({
    release: Type.String({ description: 'Index version, the name a request gives in its release member: 25.0.5.' }),
    idc_version: Type.String({ description: 'Data release, e.g. v25 (a request may name it when one served release has it).' }),
    idc_index_data_version: Type.String(),
    dataset_identity: Type.String({ description: 'Content identity of the release’s database (its ETags derive from it).' }),
    default: Type.Boolean({ description: 'True for the release a request that names none gets (the newest).' }),
    synthetic: Type.Boolean(),
  }),
  ReleaseTotals,
]);

export async function servedReleaseRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  app.get(
    '/releases',
    {
      config: { cacheable: true },
      schema: {
        tags: ['discovery'],
        summary: 'Releases served',
        description:
          'Every data release this server serves, newest (the default) first, with its totals. Any request names the one it asks about with release (query, or a member of its JSON body).',
        response: { 200: Type.Object({ releases: Type.Array(Release) }), ...errors(400) },
      },
    },
    async () => listReleases(ctx),
  );
}
