// The security headers every response carries, whoever answers it: a route,
// the 404/405 handler, an error raised before routing (bad URL, overlong
// path parameter, body too large), the HTTP parser's own errors written on
// the raw socket (400, 408, 431), the API docs pages and CORS preflights.
// Built once from the configuration: hooks run on every request and dominate
// the cost of small responses.

import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

/** The API docs pages (Swagger UI): their own scripts and styles, inline styles, data: images. */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every other answer is data or an error: nothing in it may run, load or be framed. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'";

const isDocs = (url: string) => url.startsWith('/v3/docs') || url.startsWith('/v2/swagger');

export interface SecurityHeaders {
  /** The headers of a response to `url` (the explorer's page replaces the CSP with its own). */
  forUrl(url: string): Record<string, string>;
  /** The same as header lines (each ending in CRLF), for answers written on the raw socket. */
  rawLines(url: string): string;
}

export function securityHeaders(config: Config): SecurityHeaders {
  const common: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Resource-Policy': 'cross-origin',
  };
  if (config.hstsMaxAge > 0) common['Strict-Transport-Security'] = `max-age=${config.hstsMaxAge}; includeSubDomains`;
  const api = { ...common, 'Content-Security-Policy': API_CSP };
  const docs = { ...common, 'Content-Security-Policy': DOCS_CSP };
  const lines = (h: Record<string, string>) => Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const apiLines = lines(api);
  const docsLines = lines(docs);
  return {
    forUrl: (url) => (isDocs(url) ? docs : api),
    rawLines: (url) => (isDocs(url) ? docsLines : apiLines),
  };
}

/**
 * Sets the headers and X-Request-Id first thing on every request. Register it
 * before any plugin whose hook may answer on its own (CORS preflights).
 */
export function addSecurityHeaders(app: FastifyInstance, headers: SecurityHeaders): void {
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-Id', req.id);
    reply.headers(headers.forUrl(req.url));
    done();
  });
}
