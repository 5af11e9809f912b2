// All /v3 routes, one plugin per route family.

import type { FastifyInstance } from 'fastify';
import { metaRoutes } from './meta.ts';

export async function v3Routes(app: FastifyInstance): Promise<void> {
  await app.register(metaRoutes);
}
