// Streamed responses (manifest.txt, /v2 pages) under the export budget. A
// slot is taken before any work (503 busy when the budget and its queue are
// full) and held until the response is written or cut. While writing, a
// client that takes no byte for IDQS_WRITE_TIMEOUT_MS, or whose response runs
// past IDQS_STREAM_MAX_S, is cut: its socket is closed, which frees the slot
// and stops what still produces for it. A body that fails half-way ends with a
// comment line saying so and an aborted transfer, never a clean end.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { IdqsError } from '../core/errors.ts';
import { REST_WORDS } from '../contract/words.ts';
import { clientSignal, cutResponse } from './client-signal.ts';

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

/**
 * Send a body of blocks: the transfer ends cleanly only when the body does; a
 * failure writes `# ERROR: ...` and aborts the transfer, so no client takes a
 * cut manifest for a whole one.
 */
export function sendBlocks(req: FastifyRequest, reply: FastifyReply, body: AsyncGenerator<Buffer>) {
  writeDeadlines(req, reply);
  async function* guarded(): AsyncGenerator<Buffer> {
    try {
      yield* body;
    } catch (e) {
      const why = (e as Partial<IdqsError>).text ? (e as IdqsError).text(REST_WORDS) : 'internal error';
      yield Buffer.from(`# ERROR: the manifest was cut here: ${why.replace(/\s+/g, ' ')}\n`);
      // Let the line go out, then abort the chunked transfer instead of ending it.
      await new Promise((r) => setImmediate(r));
      cutResponse(req);
    }
  }
  return reply.send(Readable.from(guarded(), { objectMode: false }));
}
