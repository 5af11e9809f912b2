// The HTTP adapter: a Fastify app over the core services. Cross-cutting
// behaviour lives here (errors, CORS, compression, caching validators,
// request ids (security headers in ./security-headers.ts), one log line and metrics per request, the
// work scope that carries each request's cancellation down to the engine);
// connection hygiene in ./server-options.ts; routes live in ./v3 and ./v2.
// Other adapters served on the same port (the agent tools at /mcp) are
// mounted by the composition root (src/server.ts) through `extensions`.

import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import { keepSchemaIds } from './openapi.ts';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { pino, type Logger } from 'pino';
import type { AppContext } from '../core/context.ts';
import { IdqsError } from '../core/errors.ts';
import { WorkCancelled, currentWork, runWork } from '../core/engine/work.ts';
import { AJV_OPTIONS } from '../contract/validation.ts';
import { ErrorBody } from '../contract/error-envelope.ts';
import { v3Routes } from './v3/index.ts';
import { metaRoutes } from './v3/meta.ts';
import { sendCoreError, sendError, validationMessage } from './errors.ts';
import { v2Plugin } from './v2/index.ts';
import { explorer } from './explorer.ts';
import { clientSignal, responseClosed, wasCut } from './client-signal.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { largeBodyLane } from './large-bodies.ts';
import { serverOptions } from './server-options.ts';
import { lazyCompilers } from './lazy-compilers.ts';
import { addSecurityHeaders, securityHeaders } from './security-headers.ts';
import { rebindingHook } from './rebinding.ts';
import { declareRelease, queryRelease, requestRelease, takesRelease } from './release-scope.ts';
import { inRelease, servedReleases } from '../core/releases.ts';

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    metrics: Metrics;
    /** Set when shutdown begins: /v3/ready says so and responses close their connection. */
    draining: boolean;
  }
  interface FastifyRequest {
    /** What the log line records of caller SQL (snippet or hash). */
    sqlLog?: string;
    /** The release a request was answered from, logged when several are served. */
    release?: string;
  }
  interface FastifyContextConfig {
    /** Response depends only on the data release: send ETag and Cache-Control, answer 304. */
    cacheable?: boolean;
  }
}

const EXPOSED_HEADERS = ['ETag', 'X-Total-Count', 'X-Returned-Count', 'X-Truncated', 'X-Manifest-Limit', 'X-Filter-Warnings', 'X-As-Of', 'X-Computed-On', 'X-Cache'].join(', ');

/** A plugin served by the same app (registered last, at the root), given the request logger. */
export type Extension = (app: FastifyInstance, log: Logger | null) => Promise<void>;

export interface AppOptions {
  /** pino options (level, stream) for the request log; omitted = no logging. */
  logger?: { level?: string; stream?: NodeJS.WritableStream };
  extensions?: Extension[];
}

export async function buildApp(ctx: AppContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  const log: Logger | null = opts.logger
    ? opts.logger.stream
      ? pino({ level: opts.logger.level ?? 'info' }, opts.logger.stream)
      : pino({ level: opts.logger.level ?? 'info' })
    : null;
  const app = Fastify({
    ...serverOptions(ctx.config, () => log),
    // Fastify's own logger makes a child logger per request; one shared pino
    // logger written when the response closes costs far less on small requests.
    logger: false,
    logController: new LogController({ disableRequestLogging: true }),
    exposeHeadRoutes: true,
    ajv: { customOptions: { ...AJV_OPTIONS } },
    // Each route's validators and serializers are compiled on its first request (faster start, less memory).
    schemaController: { compilersFactory: lazyCompilers() },
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.server.maxConnections = ctx.config.maxConnections;
  app.decorate('ctx', ctx);
  app.decorate('draining', false);
  const lane = largeBodyLane(ctx.config);
  const metrics = createMetrics(ctx.engine, () => ({ large_bodies: lane.stats() }));
  app.decorate('metrics', metrics);
  // Bodies are JSON only: a text/plain body is 415, not a string that fails validation.
  app.removeContentTypeParser('text/plain');

  // Known route patterns, to tell 405 (path exists, method does not) from 404.
  const routes: { method: string[]; re: RegExp }[] = [];
  app.addHook('onRoute', (r) => {
    // Every handler runs as the work of its request: the engine sees the request's
    // signal (aborted when the client leaves) and id without each service passing them.
    // An API route also runs on the release its request names (see ./release-scope.ts).
    const handler = r.handler;
    const onRelease = takesRelease(r.url);
    // One release served: the schemas stay as they are (a query naming another release is still refused).
    if (servedReleases(ctx).length > 1) declareRelease(r);
    r.handler = function (this: FastifyInstance, req, reply) {
      return runWork({ requestId: req.id, get signal() { return clientSignal(req); } }, () => {
        if (!onRelease) return handler.call(this, req, reply);
        let release: AppContext;
        try {
          release = requestRelease(ctx, req);
        } catch (e) {
          return Promise.reject(e as Error);
        }
        if (release.served) req.release = release.dataset.index_version;
        return inRelease(release, () => handler.call(this, req, reply));
      });
    };
    if (r.url.includes('*')) return; // the CORS preflight catch-all says nothing about a path
    const pattern = r.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+').replace(/\*/g, '.*');
    routes.push({ method: ([] as string[]).concat(r.method as string | string[]), re: new RegExp(`^${pattern}/?$`) });
  });

  // Each release its own validator: a cached answer of one release never stands for another's.
  const cacheHeaders = new Map(servedReleases(ctx).map((c) => [c, { ETag: c.etag, 'Cache-Control': 'public, max-age=3600' }]));

  // First of all hooks, so that answers given by a hook (CORS preflights, 304s, rebinding refusals) carry them too.
  addSecurityHeaders(app, securityHeaders(ctx.config));
  // Then, before any work: a request naming a host this server does not answer for (DNS rebinding) is refused.
  app.addHook('onRequest', rebindingHook(ctx.config, log));

  // CORS for any origin, without credentials (the data is public); any route may be called with a JSON body.
  // Its hook runs first, so a 304 from the hook below carries the CORS headers too.
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false,
  });

  const logRequests = log?.isLevelEnabled('info') ?? false;
  app.addHook('onRequest', (req, reply, done) => {
    const started = performance.now();
    // One record per request when its response closes: finished, or abandoned by its client (499).
    // 'finish' means every byte reached the kernel; a response cut after end() can still look finished otherwise.
    let finished = false;
    reply.raw.once('finish', () => (finished = true));
    reply.raw.once('close', () => {
      responseClosed(req, finished);
      const status = finished && !wasCut(req) ? reply.statusCode : 499;
      const ms = performance.now() - started;
      const route = req.routeOptions.url ?? 'unmatched';
      metrics.observe(route, req.method, status, ms / 1000);
      if (!logRequests) return;
      const line: Record<string, unknown> = { req_id: req.id, method: req.method, route: req.routeOptions.url ?? null, path: req.url.split('?')[0], status, duration_ms: Math.round(ms * 100) / 100 };
      if (req.sqlLog) line.sql = req.sqlLog;
      if (req.release) line.release = req.release;
      log!.info(line, 'request');
    });
    if (app.draining) reply.header('Connection', 'close');
    if (req.method === 'POST') {
      reply.header('Cache-Control', 'no-store');
    } else if (req.routeOptions.config?.cacheable) {
      // Set up front (no onSend hook on the hot path); the error handlers
      // replace them, so an error is never cached as the resource. A release
      // not served has none: its handler answers why.
      const release = queryRelease(ctx, req);
      if (release) {
        reply.headers(cacheHeaders.get(release)!);
        const inm = req.headers['if-none-match'];
        if (inm && inm.split(',').some((t) => t.trim() === release.etag || t.trim() === '*')) {
          reply.code(304).send();
          return;
        }
      }
    }
    done();
  });
  // Then requests with large bodies wait for their lane before their body is read (./large-bodies.ts).
  app.addHook('onRequest', lane.hook);

  // Operator-facing events of the engine (database read errors, SQL workers), with the request they hit.
  const onOperator = (ev: { level?: string; msg?: string; req_id?: string; [k: string]: unknown }) => {
    if (!log) return;
    const { level = 'warn', msg = 'engine event', ...fields } = ev;
    const line = { ...fields, req_id: fields.req_id ?? currentWork()?.requestId };
    if (level === 'error') log.error(line, msg);
    else if (level === 'info') log.info(line, msg);
    else log.warn(line, msg);
  };
  for (const c of servedReleases(ctx)) c.engine.events.on('operator', onOperator);
  app.addHook('onClose', async () => {
    for (const c of servedReleases(ctx)) c.engine.events.off('operator', onOperator);
    lane.close();
  });

  app.setErrorHandler((err: FastifyError | IdqsError | Error, req, reply) => {
    if (err instanceof IdqsError) return sendCoreError(req, reply, err);
    // Work cut short by a client that left (Fastify aborts request.signal with an AbortError).
    if (err instanceof WorkCancelled) return reply.code(499).send();
    const fe = err as FastifyError;
    if (fe.validation) return sendError(req, reply, 422, 'invalid_request', validationMessage(fe));
    switch (fe.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendError(req, reply, 413, 'payload_too_large', `Request body exceeds the ${ctx.config.bodyLimit}-byte limit.`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendError(req, reply, 415, 'unsupported_media_type', `Unsupported content-type ${JSON.stringify(req.headers['content-type'] ?? '')}; send application/json.`);
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendError(req, reply, 400, 'invalid_json', 'The request body is empty; send a JSON object (at least {}).');
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendError(req, reply, 400, 'invalid_json', `The request body is not valid JSON: ${fe.message}`);
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) return sendError(req, reply, fe.statusCode, 'bad_request', fe.message);
    log?.error({ err, req_id: req.id, method: req.method, path: req.url.split('?')[0] }, 'unhandled error');
    return sendError(req, reply, 500, 'internal_error', 'Internal error while handling the request; it has been logged.');
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const allowed = [...new Set(routes.filter((r) => r.re.test(path)).flatMap((r) => r.method))];
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      reply.header('Allow', [...allowed, 'OPTIONS'].join(', '));
      const use = allowed.filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      return sendError(req, reply, 405, 'method_not_allowed', `${req.method} is not allowed on ${path}; use ${use.join(' or ')}.`);
    }
    return sendError(req, reply, 404, 'not_found', `No route ${req.method} ${path}. The API lives under /v3; see /v3/docs.`);
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('Cache-Control', 'no-store').type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
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
  for (const extension of opts.extensions ?? []) await extension(app, log);
  return app;
}
