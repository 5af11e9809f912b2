// The one place where an HTTP request becomes the work of one release: every
// /v3 and /v2 route takes `release` (in the query, or as a member of a JSON
// body; declared on its schema here when several releases are served); the
// handler then runs on that release's context (src/core/releases.ts) and never
// sees the member itself. With one release served the schemas are unchanged,
// and a query naming another release is still refused.

import type { FastifyRequest, RouteOptions } from 'fastify';
import type { AppContext } from '../core/context.ts';
import { invalidQuery, field, msg } from '../core/errors.ts';
import { pickRelease } from '../core/releases.ts';
import { RELEASE_PARAM, ReleaseParam } from '../contract/release-param.ts';

/** Routes that answer from a release: the API, not the explorer, metrics or the agent tools (which take it per tool). */
export function takesRelease(url: string): boolean {
  return url.startsWith('/v3/') || url.startsWith('/v2/');
}

type Schema = Record<string | symbol, unknown> & { properties?: Record<string, unknown> };

/** An object schema with `release` among its members (a copy: schemas are shared with other routes and tools). */
function withMember(s: Schema | undefined): Schema | undefined {
  if (!s) return { type: 'object', properties: { [RELEASE_PARAM]: ReleaseParam } };
  if (s.type !== 'object' || !s.properties || RELEASE_PARAM in s.properties) return s;
  return { ...s, properties: { ...s.properties, [RELEASE_PARAM]: ReleaseParam } };
}

/** The route's schema with `release` declared: in the query of every route, and in a JSON object body. */
export function declareRelease(r: RouteOptions): void {
  const schema = r.schema as Record<string, unknown> | undefined;
  if (!schema || schema.hide || !takesRelease(r.url)) return;
  r.schema = {
    ...schema,
    querystring: withMember(schema.querystring as Schema | undefined),
    ...(schema.body ? { body: withMember(schema.body as Schema) } : {}),
  };
}

/** The release a request names (query or body member), removed from both so route bodies see what they always did. */
function takeReleaseName(req: FastifyRequest): string | undefined {
  const q = req.query as Record<string, unknown> | null | undefined;
  const b = req.body as Record<string, unknown> | null | undefined;
  const fromQuery = q && typeof q === 'object' ? q[RELEASE_PARAM] : undefined;
  const fromBody = b && typeof b === 'object' && !Array.isArray(b) ? b[RELEASE_PARAM] : undefined;
  if (q && typeof q === 'object') delete q[RELEASE_PARAM];
  if (b && typeof b === 'object' && !Array.isArray(b)) delete b[RELEASE_PARAM];
  const name = (v: unknown) => (v === undefined || v === null ? undefined : Array.isArray(v) ? String(v[0]) : String(v as string));
  const a = name(fromQuery);
  const c = name(fromBody);
  if (a !== undefined && c !== undefined && a !== c) {
    throw invalidQuery(msg`The query names ${field(RELEASE_PARAM)} ${JSON.stringify(a)} and the body ${JSON.stringify(c)}; name one release.`);
  }
  return a ?? c;
}

/** The context of the release a request names (the default when it names none); an unknown one is a 400 that lists those served. */
export function requestRelease(ctx: AppContext, req: FastifyRequest): AppContext {
  return pickRelease(ctx, takeReleaseName(req));
}

/** For a cacheable GET, before its handler: the release named in its query, or null when it names none served (the handler says why). */
export function queryRelease(ctx: AppContext, req: FastifyRequest): AppContext | null {
  const q = req.query as Record<string, unknown> | null | undefined;
  const v = q && typeof q === 'object' ? q[RELEASE_PARAM] : undefined;
  try {
    return pickRelease(ctx, v === undefined ? undefined : String(Array.isArray(v) ? v[0] : v));
  } catch {
    return null;
  }
}
