// The streamable HTTP transport of the agent tools at /mcp (and /mcp/),
// stateless: every POST gets a fresh server and transport, so any replica can
// answer any request (no session, no Mcp-Session-Id) and responses are plain
// JSON, except a tools/call that asks for progress: its response is an SSE
// stream carrying the notifications, then the result. The request goes through Fastify's normal pipeline (security
// headers, CORS, request log) and the SDK's web-standard transport.
// Registered as an encapsulated plugin: its body parser (raw text, parsed by
// the transport) and its JSON-RPC error handler apply to /mcp only.

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Logger } from 'pino';
import { publicBase } from '../contract/public-base.ts';

// The SDK and the tools are loaded on first use (a request to /mcp, or the warm-up after listening):
// about 0.2 s of CPU and a good part of the heap that a server answering only REST never needs.
let parts: Promise<[typeof import('./json-rpc-shape.ts'), typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), typeof import('./server.ts')]> | null = null;
const loadParts = () => (parts ??= Promise.all([import('./json-rpc-shape.ts'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('./server.ts')]));

export interface McpHttpOptions {
  log?: Logger | null;
}

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string) {
  reply.removeHeader('ETag');
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .header('Content-Type', 'application/json')
    .send(JSON.stringify({ jsonrpc: '2.0', error: { code, message, data: { request_id: reply.request.id } }, id: null }));
}

/**
 * Headers for the transport. Responses are JSON only, so a client that
 * accepts JSON (or anything) need not also list text/event-stream, which the
 * SDK otherwise requires.
 */
function webHeaders(req: FastifyRequest): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    h.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  const accept = h.get('accept');
  if (accept === null || /application\/json|application\/\*|\*\/\*/.test(accept)) h.set('accept', 'application/json, text/event-stream');
  return h;
}

/**
 * Whether a request gets an SSE response rather than plain JSON: a call whose
 * client asked for progress (params._meta.progressToken) and accepts SSE, so
 * that its progress and log notifications can reach it before the result.
 */
export function wantsStream(body: string, accept: string | undefined): boolean {
  if (!accept?.includes('text/event-stream') || !body.includes('progressToken')) return false;
  try {
    const msg = JSON.parse(body) as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
    const token = msg?.params?._meta?.progressToken;
    return msg?.method === 'tools/call' && (typeof token === 'string' || typeof token === 'number');
  } catch {
    return false; // the transport answers the parse error
  }
}

const WARM_TOOLS_MS = 2000;

export async function mcpHttp(app: FastifyInstance, opts: McpHttpOptions): Promise<void> {
  const ctx = app.ctx;
  // The tool schemas compile once the server listens and has had a moment: not on the path to the first answer, and
  // (unless an agent calls first, which then compiles them) not on the first tool call either.
  app.addHook('onListen', () => void setTimeout(() => void loadParts().then(([, , { toolsetFor }]) => toolsetFor(ctx)), WARM_TOOLS_MS).unref());
  // The transport checks the content type and parses the body itself, answering JSON-RPC errors.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return jsonRpcError(reply, 413, -32600, `Request body exceeds the ${ctx.config.bodyLimit}-byte limit.`);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return jsonRpcError(reply, err.statusCode, -32600, err.message);
    opts.log?.error({ err, req_id: _req.id, path: '/mcp' }, 'unhandled error');
    return jsonRpcError(reply, 500, -32603, 'Internal error while handling the request; it has been logged.');
  });

  // DNS-rebinding guard (the HTTP adapter's first hook): also the Origin here, and refusals as JSON-RPC errors.
  const guarded = { checkOrigin: true, refuse: (_req: FastifyRequest, reply: FastifyReply, status: number, message: string) => jsonRpcError(reply, status, -32000, message) };

  app.post('/mcp', { schema: { hide: true }, config: guarded }, async (req, reply) => {
    const apiBase = publicBase(ctx.config, req);
    const body = typeof req.body === 'string' ? req.body : '';
    const stream = wantsStream(body, req.headers.accept);
    const [{ notJsonRpc }, { WebStandardStreamableHTTPServerTransport }, { createMcpServer }] = await loadParts();
    const server = createMcpServer(ctx, { apiBase, log: opts.log });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !stream });
    const close = async () => {
      await transport.close();
      await server.close();
    };
    let streaming = false;
    try {
      await server.connect(transport);
      // After the transport's own check of the content type, which answers first.
      const invalid = /^application\/json\b/i.test(req.headers['content-type'] ?? '') ? notJsonRpc(body) : null;
      if (invalid) return jsonRpcError(reply, 400, -32600, invalid);
      // The URL's origin is ours (never the raw Host header, which may not even parse).
      const request = new Request(new URL(req.url, apiBase), { method: 'POST', headers: webHeaders(req), body });
      const res = await transport.handleRequest(request);
      reply.code(res.status);
      // Connection handling is the server's own (it closes connections while draining).
      res.headers.forEach((v, k) => k !== 'connection' && reply.header(k, v));
      if (stream && res.body && (res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        // Events (progress, log messages, then the result) go out as they come; the transport ends the stream after the result.
        streaming = true;
        reply.raw.once('close', () => void close());
        return reply.send(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>));
      }
      const text = await res.text();
      return reply.send(text === '' ? undefined : text);
    } finally {
      if (!streaming) await close();
    }
  });

  // Stateless: there is no stream to open (GET) nor session to end (DELETE).
  const notAllowed = (_req: FastifyRequest, reply: FastifyReply) => {
    reply.header('Allow', 'POST, OPTIONS');
    return jsonRpcError(reply, 405, -32000, 'Method not allowed: this endpoint is stateless; send JSON-RPC requests with POST.');
  };
  app.get('/mcp', { schema: { hide: true }, config: guarded }, notAllowed);
  app.delete('/mcp', { schema: { hide: true }, config: guarded }, notAllowed);
}
