// The DNS-rebinding guard of every route (rule: src/contract/rebinding.ts),
// the first onRequest hook, so a refused request does no work at all. A
// route answers the refusal in its interface's envelope: /v3 and /v2 here,
// others (the agent endpoint) through their route config; routes that ask
// for it (checkOrigin) also have their Origin checked.

import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { rebindingGuard } from '../contract/rebinding.ts';
import { sendError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Refuse a present Origin outside the allowed hosts, whatever the listening address. */
    checkOrigin?: boolean;
    /** Answer a refusal in this route's own envelope (default: the /v3 or /v2 one). */
    refuse?: (req: FastifyRequest, reply: FastifyReply, status: number, message: string) => unknown;
  }
}

export function rebindingHook(config: Config, log: Logger | null): onRequestHookHandler {
  const guard = rebindingGuard(config);
  return (req, reply, done) => {
    const routeConfig = req.routeOptions.config;
    const why = guard.host(req.headers.host) ?? (routeConfig?.checkOrigin ? guard.origin(req.headers.origin) : null);
    if (why === null) return done();
    log?.warn({ req_id: req.id, method: req.method, path: req.url.split('?')[0], host: req.headers.host, origin: req.headers.origin }, 'refused: host or origin not allowed');
    reply.header('X-Request-Id', req.id).header('X-Content-Type-Options', 'nosniff');
    if (routeConfig?.refuse) routeConfig.refuse(req, reply, 403, why);
    else sendError(req, reply, 403, 'forbidden', why);
  };
}
