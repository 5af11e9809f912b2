// The large-body lane. A request with a large body (a pasted list of 45,000
// PatientIDs, a saved manifest of 100,000 lines) costs the one main thread tens
// of milliseconds to read, parse, validate, compile and answer, and every other
// request waits behind it; a handful of them at once held a small counts request
// for half a second. Such requests take a slot of their own budget before their
// body is read (the others wait in a bounded queue, their bodies unread: the
// socket's flow control holds them back), so at most IDQS_LARGE_BODIES of them
// use the main thread at a time and small requests run between their steps.
// Large means a declared Content-Length of at least IDQS_LARGE_BODY_BYTES, or a
// body of unknown length (chunked), which could be any size. A slot's body must
// arrive at 1 MB/s at least after a grace of 5 s (else its connection is cut), so a
// slow sender cannot keep the lane to itself.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { slots, type BudgetStats, type Pool } from '../core/engine/budget.ts';
import { IdqsError } from '../core/errors.ts';
import { clientSignal, cutResponse } from './client-signal.ts';
import { sendCoreError } from './errors.ts';

/** A large body holding a slot must arrive within this grace plus its length at this rate, else it is cut. */
const BODY_GRACE_MS = 5000;
const BODY_BYTES_PER_S = 1 << 20;

/** Whether a request's body is large enough (or of unknown size) to go through the lane. */
export function isLargeBody(req: FastifyRequest, threshold: number): boolean {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return false;
  const declared = req.headers['content-length'];
  if (declared !== undefined) return Number(declared) >= threshold;
  return req.headers['transfer-encoding'] !== undefined;
}

export interface LargeBodyLane {
  /** The onRequest hook: add it after the hooks that answer without work (CORS, 304s, rebinding). */
  hook(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  stats(): BudgetStats;
  /** Refuse new requests and fail those waiting (shutdown). */
  close(): void;
}

export function largeBodyLane(config: Pick<Config, 'largeBodyBytes' | 'largeBodies' | 'largeBodyQueue' | 'queueTimeoutMs'>): LargeBodyLane {
  const pool: Pool<number> = slots(config.largeBodies, {
    what: 'requests with large bodies',
    queue: config.largeBodyQueue,
    queueTimeoutMs: config.queueTimeoutMs,
    settings: { slots: 'IDQS_LARGE_BODIES', queue: 'IDQS_LARGE_BODY_QUEUE', queueTimeout: 'IDQS_QUEUE_TIMEOUT_MS' },
  });
  async function hook(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (!isLargeBody(req, config.largeBodyBytes)) return;
    let lease;
    try {
      lease = await pool.acquire(clientSignal(req));
    } catch (e) {
      if (!(e instanceof IdqsError)) throw e;
      // The client left while waiting: nobody reads an answer.
      if (e.code === 'cancelled' || reply.raw.destroyed) return reply.hijack();
      return sendCoreError(req, reply, e);
    }
    // Released when the response is done or abandoned (its client may have left just as the slot came).
    if (reply.raw.closed) {
      lease.release();
      return reply.hijack();
    }
    // A slow sender must not keep the others out: the body must come at BODY_BYTES_PER_S at least (after a grace).
    const declared = Number(req.headers['content-length'] ?? config.largeBodyBytes);
    const due = setTimeout(() => {
      if (!req.raw.complete) cutResponse(req);
    }, BODY_GRACE_MS + (1000 * declared) / BODY_BYTES_PER_S);
    reply.raw.once('close', () => {
      clearTimeout(due);
      lease.release();
    });
    return undefined;
  }
  return { hook, stats: () => pool.stats(), close: () => void pool.close() };
}
