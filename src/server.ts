// The composition root of the served API: the HTTP adapter (REST routes of
// /v3 and /v2) with the agent tools (MCP) at /mcp, on one Fastify app. Only
// entry points (the CLI's serve command) and tests import it; the adapters
// it joins never import each other.

import type { FastifyInstance } from 'fastify';
import type { AppContext } from './core/context.ts';
import { buildApp, type AppOptions } from './http/app.ts';
import { mcpHttp } from './mcp/http.ts';

export { drain } from './http/shutdown.ts';

export async function buildServer(ctx: AppContext, opts: Omit<AppOptions, 'extensions'> = {}): Promise<FastifyInstance> {
  return buildApp(ctx, { ...opts, extensions: [async (app, log) => void (await app.register(mcpHttp, { log }))] });
}
