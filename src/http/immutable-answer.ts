// Answers that depend only on the release (the collections, the attributes,
// the tables): serialised by the route's own response schema once per
// release, compressed once with gzip and brotli, and then sent as they are,
// by the client's Accept-Encoding. A request costs a lookup instead of a
// serialisation of hundreds of KB and its compression. The route's ETag and
// 304 come from the cacheable rule of app.ts, like any other GET of the release.

import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { releaseContext, type AppContext } from '../core/context.ts';

interface Encoded {
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

/** Below this a compressed copy is not worth its header (the compression plugin's threshold). */
const THRESHOLD = 1024;

/**
 * The handler of a route whose answer is `compute(ctx)` for the request's release, kept encoded.
 * The route must say `compress: false` (its body is compressed here).
 */
export function immutableAnswer(ctx: AppContext, compute: (ctx: AppContext) => unknown | Promise<unknown>) {
  const kept = new WeakMap<AppContext, Promise<Encoded>>();
  return async (req: FastifyRequest, reply: FastifyReply): Promise<Buffer> => {
    const release = releaseContext(ctx);
    let p = kept.get(release);
    if (!p) {
      // Serialised by this route's schema: the same bytes the route would send without the cache.
      p = Promise.resolve(compute(ctx)).then((value) => encode(Buffer.from(String(reply.serialize(value)))));
      kept.set(release, p);
      p.catch(() => kept.delete(release));
    }
    const e = await p;
    const accepted = req.headers['accept-encoding'];
    const encoding = e.identity.length >= THRESHOLD && typeof accepted === 'string' ? negotiate(accepted, ['br', 'gzip', 'identity']) : null;
    reply.header('Vary', 'Accept-Encoding').type('application/json; charset=utf-8');
    if (encoding === 'br' || encoding === 'gzip') {
      reply.header('Content-Encoding', encoding);
      return e[encoding];
    }
    return e.identity;
  };
}

function encode(identity: Buffer): Encoded {
  // Made once per release: strong levels (brotli 9 takes tens of ms on the collections, 11 ten times that).
  return {
    identity,
    gzip: gzipSync(identity, { level: 9 }),
    br: brotliCompressSync(identity, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
  };
}
