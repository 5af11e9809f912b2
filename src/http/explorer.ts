// The web explorer's files: the page at / (revalidated on every load) and its
// fingerprinted assets under /assets/ (cached for a year, sent pre-compressed),
// as built into dist/web by `npm run build`. The portal's filter links
// (/explore/filters/?Modality=CT&...) open the same cohort here. The page
// gets a Content-Security-Policy of its own: its scripts, styles and API
// calls come from this origin only; nothing inline, nothing from elsewhere.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const WEB_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

export const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>IDQS</title>
<p>The web explorer is not built in this installation (dist/web is missing): run <code>npm run build</code>
(<code>npm ci</code> does it). The API works: see <a href="/v3/docs">/v3/docs</a>.</p>`;

/** The query string of a request, as sent (with its leading "?"), or "". */
function query(req: FastifyRequest): string {
  const i = req.url.indexOf('?');
  return i >= 0 ? req.url.slice(i) : '';
}

export async function explorer(app: FastifyInstance): Promise<void> {
  const indexFile = `${WEB_DIR}index.html`;
  const built = existsSync(indexFile);
  const page = built ? readFileSync(indexFile) : null;
  const etag = page ? `"${createHash('sha256').update(page).digest('base64url').slice(0, 22)}"` : null;

  app.get('/', { schema: { hide: true } }, (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('Content-Security-Policy', EXPLORER_CSP).header('Content-Type', 'text/html; charset=utf-8');
    if (!page) return reply.code(503).header('Cache-Control', 'no-store').send(NOT_BUILT);
    reply.header('Cache-Control', 'no-cache').header('ETag', etag!);
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.send(page);
  });

  // Portal links: /explore/filters/?<attr>=<value>&... and /explore/?... open the explorer with the same query.
  for (const path of ['/explore', '/explore/filters']) {
    app.get(path, { schema: { hide: true } }, (req, reply) => reply.redirect(`/${query(req)}`, 302));
  }

  if (built) {
    await app.register(fastifyStatic, {
      root: `${WEB_DIR}assets`,
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      preCompressed: true,
      immutable: true,
      maxAge: '365d',
      lastModified: false,
      etag: false,
    });
  }
}
