// The signal of a request's client: aborted when its connection closes before
// the response is finished (the client left, or a deadline cut it). Created
// on first use only, so requests that start no engine work pay nothing.
// (Fastify's request.signal follows the request stream, which Node closes as
// soon as the body is read, so it cannot tell a client that left.)

import type { FastifyRequest } from 'fastify';
import { WorkCancelled } from '../core/engine/work.ts';

const controllers = new WeakMap<FastifyRequest, AbortController>();
const cut = new WeakSet<FastifyRequest>();

/** Close the connection of a response that must not finish (a deadline passed, its body failed). */
export function cutResponse(req: FastifyRequest): void {
  cut.add(req);
  req.raw.socket?.destroy();
}

/** Whether the response was cut (its end may still have looked written). */
export function wasCut(req: FastifyRequest): boolean {
  return cut.has(req);
}

export function clientSignal(req: FastifyRequest): AbortSignal {
  let ac = controllers.get(req);
  if (!ac) {
    ac = new AbortController();
    controllers.set(req, ac);
    // Already gone before anyone asked.
    if (!req.raw.socket || req.raw.socket.destroyed) ac.abort(new WorkCancelled('the client went away'));
  }
  return ac.signal;
}

/** Called when the response closes: abort the client's signal unless the response was finished. */
export function responseClosed(req: FastifyRequest, finished: boolean): void {
  const ac = controllers.get(req);
  if (ac && (!finished || cut.has(req)) && !ac.signal.aborted) ac.abort(new WorkCancelled('the client went away'));
}
