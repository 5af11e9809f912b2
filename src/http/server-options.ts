// How the HTTP server treats connections before any route runs: deadlines for
// headers, for the whole request (a body that trickles in) and for idle
// kept-alive connections, a cap on connections, which proxies to believe, the
// request id (a sane incoming X-Request-Id, else a new one), and the envelope
// of errors raised before routing (malformed requests, oversized headers, a
// bad URL encoding, an overlong path parameter), in the words of the
// interface the request was for.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyHttpOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { errorEnvelope, withRequestId } from '../contract/error-envelope.ts';
import { isV2Path, sendError, v2Envelope } from './errors.ts';
import { securityHeaders } from './security-headers.ts';

const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The id of a request: the caller's X-Request-Id when it is a sane token, else a new one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Status, code and message of an error the HTTP parser raised. */
function clientErrorOf(err: NodeJS.ErrnoException): [number, string, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'headers_too_large', 'The request line and headers exceed the size this server reads (16 KB); send a shorter URL or fewer headers.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'request_timeout', 'The request did not arrive in time: headers and body must be sent within the server’s deadline (IDQS_HEADERS_TIMEOUT_MS, IDQS_REQUEST_TIMEOUT_MS).'];
    default:
      return [400, 'bad_request', `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'}).`];
  }
}

/** The path a raw request named, as far as the parser got (to pick the envelope). */
function pathOf(raw: Buffer | undefined): string {
  const line = raw?.subarray(0, 512).toString('latin1').split('\r\n')[0] ?? '';
  return line.split(' ')[1] ?? '';
}

export function serverOptions(config: Config, log: () => Logger | null): FastifyHttpOptions<Server> {
  const security = securityHeaders(config);
  return {
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    genReqId: requestId,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Nothing else closes a connection for being slow: deadlines are per phase.
    connectionTimeout: 0,
    // While draining, requests already on a connection are served (with Connection: close), not refused in Fastify's words.
    return503OnClosing: false,
    http: {
      headersTimeout: config.headersTimeoutMs,
      // How often the deadlines above are checked (Node's default is every 30 s).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(config.headersTimeoutMs / 2))),
    },
    frameworkErrors: (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
      // Raised before any hook runs.
      reply.header('X-Request-Id', req.id).headers(security.forUrl(req.url));
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        return sendError(req, reply, 414, 'uri_too_long', 'A path segment of the URL is too long (over 100 characters); no identifier is that long.');
      }
      if (error.code === 'FST_ERR_BAD_URL') {
        return sendError(req, reply, 400, 'bad_url', 'The URL is not valid: each % must start an escape of two hexadecimal digits encoding UTF-8 (e.g. %20).');
      }
      return sendError(req, reply, 400, 'bad_request', error.message);
    },
    clientErrorHandler: (e, socket: Socket) => {
      const err = e as unknown as NodeJS.ErrnoException & { rawPacket?: Buffer };
      // A reset connection has no one to answer.
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, code, message] = clientErrorOf(err);
      const id = randomUUID();
      const path = pathOf(err.rawPacket);
      const body = JSON.stringify(isV2Path(path) ? v2Envelope(status, code, message, id) : withRequestId(errorEnvelope(code, message), id));
      log()?.info({ req_id: id, status, error: err.code, path: path.split('?')[0]?.slice(0, 200) }, 'client error');
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
            `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\n` +
            `X-Request-Id: ${id}\r\n${security.rawLines(path)}Connection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  };
}
