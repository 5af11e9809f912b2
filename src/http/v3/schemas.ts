// Error responses of the /v3 routes, declared in OpenAPI with the envelope
// of src/contract/error-envelope.ts (registered once by the app as ErrorBody).

import { Type, type TSchema } from '@sinclair/typebox';

/** Standard error responses of a route, to declare in OpenAPI. */
export function errors(...codes: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const c of codes) out[c] = Type.Ref('ErrorBody');
  return out;
}
