// The agent tools over stdio, for a local MCP client that spawns `idqs mcp`.
// stdout carries protocol messages only: logs go to stderr.

import type { Logger } from 'pino';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { AppContext } from '../core/context.ts';
import { publicBase } from '../contract/public-base.ts';
import { createMcpServer } from './server.ts';

/** Serve until the client closes stdin. */
export async function serveStdio(ctx: AppContext, log: Logger | null): Promise<void> {
  // Download commands call the HTTP API: the configured public URL, else where `idqs serve` listens.
  const server = createMcpServer(ctx, { apiBase: publicBase(ctx.config), log });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
