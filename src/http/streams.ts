// Streamed responses (manifest.txt, /v2 pages) under the export budget. A
// slot is taken before any work (503 busy when the budget and its queue are
// full) and held until the response is written or cut. While writing, a
// client that takes no byte for IDQS_WRITE_TIMEOUT_MS, or whose response runs
// past IDQS_STREAM_MAX_S, is cut: its socket is closed, which frees the slot
// and stops what still produces for it. A body that fails half-way ends with a
// comment line saying so and an aborted transfer, never a clean end.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { negotiate } from '@fastify/accept-negotiator';
import type { IdqsError } from '../core/errors.ts';
import { REST_WORDS } from '../contract/words.ts';
import { clientSignal, cutResponse } from './client-signal.ts';
import { parallelGzip } from './parallel-gzip.ts';

/** Take an export slot for this request, released when its response closes (finished or cut). */
export async function holdExport(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const lease = await req.server.ctx.engine.exports.acquire(clientSignal(req));
  reply.raw.once('close', lease.release);
  if (reply.raw.destroyed) lease.release();
}

/** Cut the response when its client stops reading, or when it has taken too long in all. */
export function writeDeadlines(req: FastifyRequest, reply: FastifyReply): void {
  const { writeTimeoutMs, streamMaxS } = req.server.ctx.config;
  const socket = req.raw.socket;
  const started = Date.now();
  // Bytes the kernel took: what the client has made room for.
  const flushed = () => socket.bytesWritten - socket.writableLength;
  let last = flushed();
  let since = started;
  const timer = setInterval(
    () => {
      const now = Date.now();
      const f = flushed();
      if (f !== last) {
        last = f;
        since = now;
      }
      if (now - since >= writeTimeoutMs || now - started >= streamMaxS * 1000) cutResponse(req);
    },
    Math.max(50, Math.min(1000, Math.floor(writeTimeoutMs / 4))),
  );
  timer.unref();
  reply.raw.once('close', () => clearInterval(timer));
}

/** Options of sendBlocks. */
export interface SendBlocksOptions {
  /**
   * gzip on every core (parallel-gzip.ts) when gzip is what the client takes best of br, gzip and deflate; other
   * encodings stay with the compression plugin. For long bodies made before they are sent (a resolve's answer).
   */
  gzipOnCores?: boolean;
}

/** Add a name to the response's Vary header (CORS may have set one already). */
function addVary(reply: FastifyReply, name: string): void {
  const had = reply.getHeader('vary');
  const list = had === undefined ? [] : String(had).split(',').map((s) => s.trim()).filter(Boolean);
  if (!list.some((v) => v === '*' || v.toLowerCase() === name.toLowerCase())) reply.header('vary', [...list, name].join(', '));
}

/**
 * Send a body of blocks: the transfer ends cleanly only when the body does; a
 * failure writes `# ERROR: ...` and aborts the transfer, so no client takes a
 * cut manifest for a whole one.
 */
export function sendBlocks(req: FastifyRequest, reply: FastifyReply, body: AsyncIterable<Buffer> | Iterable<Buffer>, opts: SendBlocksOptions = {}) {
  writeDeadlines(req, reply);
  let failed = false;
  async function* guarded(): AsyncGenerator<Buffer> {
    try {
      yield* body;
    } catch (e) {
      failed = true;
      const why = (e as Partial<IdqsError>).text ? (e as IdqsError).text(REST_WORDS) : 'internal error';
      yield Buffer.from(`# ERROR: the manifest was cut here: ${why.replace(/\s+/g, ' ')}\n`);
    }
  }
  let out = guarded();
  const accepted = req.headers['accept-encoding'];
  if (opts.gzipOnCores && typeof accepted === 'string' && req.headers['x-no-compression'] === undefined && negotiate(accepted, ['br', 'gzip', 'deflate']) === 'gzip') {
    reply.header('content-encoding', 'gzip');
    addVary(reply, 'Accept-Encoding');
    out = parallelGzip(out);
  }
  async function* cutOnFailure(): AsyncGenerator<Buffer> {
    yield* out;
    if (failed) {
      // Let the error line go out, then abort the chunked transfer instead of ending it.
      await new Promise((r) => setImmediate(r));
      cutResponse(req);
    }
  }
  return reply.send(Readable.from(cutOnFailure(), { objectMode: false }));
}

/** A JSON value safe for a header (X-Filter-Warnings of a streamed answer): ASCII only, no line breaks. */
export function headerJson(v: unknown): string {
  return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
