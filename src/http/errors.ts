// How the HTTP adapter answers a failure: the status of each core error
// kind, the /v3 envelope in REST words (routes and request members) with
// Retry-After on busy answers, the /v2 envelope, and the message of a request
// that failed schema validation.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorKind, IdqsError } from '../core/errors.ts';
import { envelopeOf, errorEnvelope, withRequestId } from '../contract/error-envelope.ts';
import { ajvErrorMessage, type AjvError } from '../contract/validation.ts';
import { REST_WORDS } from '../contract/words.ts';

export const HTTP_STATUS: Record<ErrorKind, number> = {
  invalid_query: 400,
  invalid_request: 422,
  not_found: 404,
  unavailable: 503,
  busy: 503,
  query_timeout: 504,
  resource_exhausted: 503,
  too_large: 413,
  // nginx's "client closed request": only ever logged, the client is gone.
  cancelled: 499,
};

/** Messages /v2 answers with in place of ours, where its clients expect the earlier interface's words. */
const V2_MESSAGES: Record<string, string> = {
  invalid_json: 'The browser (or proxy) sent a request that this server could not understand.',
  not_found: 'Method does not exist.',
};

/** Whether a path belongs to the /v2 interface (its errors use the /v2 envelope). */
export const isV2Path = (url: string) => url.startsWith('/v2/') || url === '/v2' || url.startsWith('/v2?');
const isV2 = (req: FastifyRequest) => isV2Path(req.url);

/** Errors must not be cached as the resource they were asked for. */
export function noStore(reply: FastifyReply): void {
  reply.removeHeader('ETag');
  reply.header('Cache-Control', 'no-store');
}

/** The /v2 envelope: the status mirrored, the message, the request id. */
export function v2Envelope(status: number, code: string, message: string, requestId: string): { code: number; message: string; request_id: string } {
  return { code: status, message: V2_MESSAGES[code] ?? message, request_id: requestId };
}

/** Send an error the adapter itself detected (no core error behind it), in the envelope of the interface asked. */
export function sendError(req: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string) {
  noStore(reply);
  const body = isV2(req) ? v2Envelope(status, code, message, req.id) : withRequestId(errorEnvelope(code, message), req.id);
  return reply.code(status).send(body);
}

/** Send a core error: /v3 in REST words with its suggestions and references, /v2 as {code, message}. */
export function sendCoreError(req: FastifyRequest, reply: FastifyReply, err: IdqsError) {
  noStore(reply);
  const status = HTTP_STATUS[err.code];
  if (err.retryAfterSeconds !== undefined) reply.header('Retry-After', String(err.retryAfterSeconds));
  if (isV2(req)) return reply.code(status).send(v2Envelope(status, err.code, err.text(REST_WORDS), req.id));
  return reply.code(status).send(withRequestId(envelopeOf(err, REST_WORDS), req.id));
}

/** The message of a request that failed its schema: where, what and what is accepted. */
export function validationMessage(err: FastifyError): string {
  return ajvErrorMessage((err.validation ?? []) as unknown as AjvError[], err.validationContext) ?? err.message;
}
