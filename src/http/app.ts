// The HTTP adapter: a Fastify app over the core services. Cross-cutting
// behaviour lives here (errors, CORS, compression, caching validators,
// security headers, one log line per request); routes live in ./v3.

import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import compress from '@fastify/compress';
import { keepSchemaIds } from './openapi.ts';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { pino, type Logger } from 'pino';
import type { AppContext } from '../core/context.ts';
import { IdqsError } from '../core/errors.ts';
import { v3Routes } from './v3/index.ts';
import { metaRoutes } from './v3/meta.ts';
import { mcpHttp } from '../mcp/http.ts';
import { validationMessage } from './validation.ts';
import { ErrorBody } from './v3/schemas.ts';
import { v2Plugin } from './v2/index.ts';
import { explorer } from './explorer.ts';

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
  interface FastifyRequest {
    /** What the log line records of caller SQL (snippet or hash). */
    sqlLog?: string;
  }
  interface FastifyContextConfig {
    /** Response depends only on the data release: send ETag and Cache-Control, answer 304. */
    cacheable?: boolean;
  }
}

const EXPOSED_HEADERS = ['ETag', 'X-Total-Count', 'X-Returned-Count', 'X-Truncated', 'X-Manifest-Limit', 'X-Filter-Warnings'].join(', ');

export interface AppOptions {
  /** pino options (level, stream) for the request log; omitted = no logging. */
  logger?: { level?: string; stream?: NodeJS.WritableStream };
}

/** Errors must not be cached as the resource they were asked for. */
function noStore(reply: FastifyReply): void {
  reply.removeHeader('ETag');
  reply.header('Cache-Control', 'no-store');
}

export function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/** Messages /v2 answers with in place of ours, where its clients expect the earlier interface's words. */
const V2_MESSAGES: Record<string, string> = {
  invalid_json: 'The browser (or proxy) sent a request that this server could not understand.',
  not_found: 'Method does not exist.',
};

/** The error envelope of the interface a request is for: /v2 mirrors the status in {code, message}. */
function envelope(req: FastifyRequest, status: number, code: string, message: string) {
  if (req.url.startsWith('/v2/') || req.url === '/v2') return { code: status, message: V2_MESSAGES[code] ?? message };
  return errorBody(code, message);
}

export async function buildApp(ctx: AppContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Fastify's own logger makes a child logger per request; one shared pino
    // logger written from onResponse costs far less on small requests.
    logger: false,
    // One line per request is written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.bodyLimit,
    exposeHeadRoutes: true,
    ajv: { customOptions: { removeAdditional: false, allErrors: false, verbose: true, coerceTypes: 'array', useDefaults: true } },
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.decorate('ctx', ctx);
  // Bodies are JSON only: a text/plain body is 415, not a string that fails validation.
  app.removeContentTypeParser('text/plain');

  // Known route patterns, to tell 405 (path exists, method does not) from 404.
  const routes: { method: string[]; re: RegExp }[] = [];
  app.addHook('onRoute', (r) => {
    if (r.url.includes('*')) return; // the CORS preflight catch-all says nothing about a path
    const pattern = r.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+').replace(/\*/g, '.*');
    routes.push({ method: ([] as string[]).concat(r.method as string | string[]), re: new RegExp(`^${pattern}/?$`) });
  });

  // Headers every response carries, built once: hooks run on every request
  // and dominate the cost of small responses.
  const common: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Resource-Policy': 'cross-origin',
  };
  if (ctx.config.hstsMaxAge > 0) common['Strict-Transport-Security'] = `max-age=${ctx.config.hstsMaxAge}; includeSubDomains`;
  const framed = { ...common, 'X-Frame-Options': 'DENY', 'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'" };
  const corsHeaders = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS };
  const cacheHeaders = { ETag: ctx.etag, 'Cache-Control': 'public, max-age=3600' };

  app.addHook('onRequest', (req, reply, done) => {
    reply.headers(req.url.startsWith('/v3/docs') || req.url.startsWith('/v2/swagger') ? common : framed);
    // CORS for any origin, without credentials: the data is public.
    if (req.headers.origin !== undefined) reply.headers(corsHeaders);
    if (req.method === 'POST') {
      reply.header('Cache-Control', 'no-store');
    } else if (req.routeOptions.config?.cacheable) {
      // Set up front (no onSend hook on the hot path); the error handlers
      // replace them, so an error is never cached as the resource.
      reply.headers(cacheHeaders);
      const inm = req.headers['if-none-match'];
      if (inm && inm.split(',').some((t) => t.trim() === ctx.etag || t.trim() === '*')) {
        reply.code(304).send();
        return;
      }
    }
    done();
  });

  // Preflight: any origin may call any route with a JSON body.
  app.options('*', { schema: { hide: true } }, (req, reply) => {
    reply
      .headers({
        'Access-Control-Allow-Methods': 'GET, HEAD, POST, OPTIONS',
        'Access-Control-Allow-Headers': String(req.headers['access-control-request-headers'] ?? 'content-type'),
        'Access-Control-Max-Age': '600',
        Vary: 'Access-Control-Request-Headers',
      })
      .code(204)
      .send();
  });

  const log: Logger | null = opts.logger
    ? opts.logger.stream
      ? pino({ level: opts.logger.level ?? 'info' }, opts.logger.stream)
      : pino({ level: opts.logger.level ?? 'info' })
    : null;
  const logRequests = log?.isLevelEnabled('info') ?? false;
  if (log && logRequests) {
    app.addHook('onResponse', (req, reply, done) => {
      const line: Record<string, unknown> = {
        method: req.method,
        route: req.routeOptions.url ?? null,
        path: req.url.split('?')[0],
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      };
      if (req.sqlLog) line.sql = req.sqlLog;
      log.info(line, 'request');
      done();
    });
  }


  app.setErrorHandler((err: FastifyError | IdqsError | Error, req, reply) => {
    noStore(reply);
    if (err instanceof IdqsError) return reply.code(err.status).send(envelope(req, err.status, err.code, err.message));
    const fe = err as FastifyError;
    if (fe.validation) {
      return reply.code(422).send(envelope(req, 422, 'invalid_request', validationMessage(fe, req)));
    }
    switch (fe.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(envelope(req, 413, 'payload_too_large', `Request body exceeds the ${ctx.config.bodyLimit}-byte limit.`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(envelope(req, 415, 'unsupported_media_type', `Unsupported content-type ${JSON.stringify(req.headers['content-type'] ?? '')}; send application/json.`));
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.code(400).send(envelope(req, 400, 'invalid_json', 'The request body is empty; send a JSON object (at least {}).'));
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.code(400).send(envelope(req, 400, 'invalid_json', `The request body is not valid JSON: ${fe.message}`));
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply.code(fe.statusCode).send(envelope(req, fe.statusCode, 'bad_request', fe.message));
    }
    log?.error({ err, method: req.method, path: req.url.split('?')[0] }, 'unhandled error');
    return reply.code(500).send(envelope(req, 500, 'internal_error', 'Internal error while handling the request; it has been logged.'));
  });

  app.setNotFoundHandler((req, reply) => {
    noStore(reply);
    const path = req.url.split('?')[0]!;
    const allowed = [...new Set(routes.filter((r) => r.re.test(path)).flatMap((r) => r.method))];
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      reply.header('Allow', [...allowed, 'OPTIONS'].join(', '));
      const use = allowed.filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      return reply.code(405).send(envelope(req, 405, 'method_not_allowed', `${req.method} is not allowed on ${path}; use ${use.join(' or ')}.`));
    }
    return reply.code(404).send(envelope(req, 404, 'not_found', `No route ${req.method} ${path}. The API lives under /v3; see /v3/docs.`));
  });

  await app.register(explorer); // the web explorer at /
  // Each interface in its own scope, with its own OpenAPI document.
  await app.register(async (v3) => {
    v3.addSchema(ErrorBody);
    await v3.register(swagger, {
      refResolver: keepSchemaIds,
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'IDQS: Imaging Data Query Service',
          version: ctx.serverVersion,
          summary: 'Read-only HTTP/JSON API over public DICOM imaging metadata',
          description:
            'Find a cohort, size it, get manifests of object-store URLs and download commands, run read-only SQL, read clinical tables, open viewers, and collect citations and licenses. No authentication; nothing is ever modified.',
        },
        tags: [
          { name: 'meta', description: 'Service health and root document' },
          { name: 'discovery', description: 'Collections, analysis results, attributes and their values' },
          { name: 'query', description: 'Tables and read-only SQL' },
          { name: 'clinical', description: 'Per-collection clinical tables' },
          { name: 'cohort', description: 'Counts, manifests and download commands for a filter' },
          { name: 'tools', description: 'Viewer links, citations, licenses' },
        ],
      },
    });
    await v3.register(swaggerUi, { routePrefix: '/v3/docs', staticCSP: false });
    // Compression only where bodies can be large: its hook is measurable on
    // tiny, high-rate responses such as /v3/version and /v3/health.
    await v3.register(metaRoutes, { prefix: '/v3' });
    await v3.register(async (scope) => {
      await scope.register(compress, { global: true, threshold: 1024, encodings: ['br', 'gzip', 'deflate'] });
      scope.get('/v3/openapi.json', { schema: { hide: true }, config: { cacheable: true } }, () => v3.swagger());
      await scope.register(v3Routes, { prefix: '/v3' });
    });
  });
  await app.register(v2Plugin);
  await app.register(mcpHttp, { log }); // agent tools (MCP) at /mcp
  return app;
}

/** What a log line keeps of caller SQL (shared with the agent tools). */
export { sqlLogValue } from '../core/sql-log.ts';

export type { FastifyReply, FastifyRequest };
