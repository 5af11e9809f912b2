// The /v2 interface as one encapsulated plugin with its own OpenAPI document
// (/v2/openapi.json) and interactive documentation (/v2/swagger). Requests
// are not checked by the schema validator here: the core checks them and
// answers with the earlier interface's exact messages, which its clients
// match on. The schemas still document every route and shape responses.

import type { FastifyInstance } from 'fastify';
import compress from '@fastify/compress';
import zlib from 'node:zlib';
import { keepSchemaIds } from '../openapi.ts';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { V2Error } from './schemas.ts';
import { v2Routes } from './routes.ts';

export async function v2Plugin(app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler(() => () => true);
  app.addSchema(V2Error);
  await app.register(swagger, {
    refResolver: keepSchemaIds,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'IDQS: earlier interface (v2)',
        version: app.ctx.serverVersion,
        summary: 'The /v2 interface of the Imaging Data Query Service',
        description:
          'Read-only, no authentication, always the current data version. Filter sets with suffixed range filters, manifest previews with stateless next_page tokens. ' +
          'Errors are {"code": <status>, "message": ...}. The newer interface is documented at /v3/docs.',
      },
      tags: [
        { name: 'about', description: 'About this interface' },
        { name: 'data model', description: 'Versions, collections, analysis results, filters and fields' },
        { name: 'manifests', description: 'Manifest preview and paging' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/v2/swagger', staticCSP: false });
  await app.register(async (scope) => {
    // Manifest pages are large and paged in loops: the fastest levels keep
    // most of the gain (UIDs and URLs compress well) at a fraction of the CPU.
    await scope.register(compress, {
      global: true,
      threshold: 1024,
      encodings: ['br', 'gzip', 'deflate'],
      zlibOptions: { level: 1 },
      brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } },
    });
    scope.get('/v2/openapi.json', { schema: { hide: true }, config: { cacheable: true } }, () => app.swagger());
    await scope.register(v2Routes, { prefix: '/v2' });
  });
}
