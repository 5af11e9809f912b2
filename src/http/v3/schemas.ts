// Request and response schemas, written once: Fastify validates with them and
// the OpenAPI document is generated from them.

import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code, e.g. invalid_query, not_found, query_timeout.' }),
      message: Type.String({ description: 'What went wrong and how to fix it.' }),
    }),
  },
  { $id: 'ErrorBody', description: 'Error envelope used by every error response.' },
);

/** Standard error responses of a route, to declare in OpenAPI. */
export function errors(...codes: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const c of codes) out[c] = Type.Ref('ErrorBody');
  return out;
}
