// Error responses of the /v3 routes, declared in OpenAPI with the envelope
// of src/contract/error-envelope.ts (registered once by the app as ErrorBody).

import { Type, type TSchema } from '@sinclair/typebox';

/** Standard error responses of a route, to declare in OpenAPI. */
/** The totals of a release: in /v3/stats and, per release, in /v3/releases. */
export const ReleaseTotals = Type.Object({
  collections: Type.Integer(),
  analysis_results: Type.Integer(),
  patients: Type.Integer(),
  studies: Type.Integer(),
  series: Type.Integer(),
  instances: Type.Integer(),
  size_TB: Type.Number({ description: 'Total size in decimal terabytes (MB / 1e6), six decimals.' }),
  size_MB: Type.Number({ description: 'Total size in decimal megabytes.' }),
});

export function errors(...codes: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const c of codes) out[c] = Type.Ref('ErrorBody');
  return out;
}
