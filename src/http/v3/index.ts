// The /v3 route families with possibly large bodies (meta routes are
// registered apart, outside the compression scope), one plugin per family.

import type { FastifyInstance } from 'fastify';
import { discoveryRoutes } from './discovery.ts';
import { tableRoutes } from './tables.ts';
import { clinicalRoutes } from './clinical.ts';
import { cohortRoutes } from './cohort.ts';
import { facetsRoutes } from './facets.ts';
import { cohortTableRoutes } from './cohort-table.ts';
import { sqlRoutes } from './sql.ts';
import { toolsRoutes } from './tools.ts';
import { releaseRoutes } from './releases.ts';
import { servedReleaseRoutes } from './served-releases.ts';

export async function v3Routes(app: FastifyInstance): Promise<void> {
  await app.register(discoveryRoutes);
  await app.register(tableRoutes);
  await app.register(clinicalRoutes);
  await app.register(cohortRoutes);
  await app.register(facetsRoutes);
  await app.register(cohortTableRoutes);
  await app.register(sqlRoutes);
  await app.register(toolsRoutes);
  await app.register(releaseRoutes);
  await app.register(servedReleaseRoutes);
}
