// `idqs mcp`: the agent tools over stdio. Only protocol messages go to
// stdout; the audit log and any progress go to stderr.

import { pino } from 'pino';
import type { Config } from '../config.ts';
import { createContext } from '../core/context.ts';
import { serveStdio } from '../mcp/stdio.ts';
import { sweepStaleWorkerTempDirs } from '../core/engine/worker-temp.ts';
import { reportSwept } from './serve-workers.ts';

export async function runMcpStdio(cfg: Config, db: string): Promise<void> {
  // Caller-SQL folders left by servers that were killed: its own workers use the same temporary root.
  reportSwept(sweepStaleWorkerTempDirs());
  const ctx = await createContext(cfg, db);
  const log = pino({ level: cfg.logLevel }, pino.destination(2));
  process.stderr.write(`IDQS ${ctx.serverVersion} agent tools (MCP) on stdio, data release ${ctx.dataset.release}${ctx.dataset.synthetic ? ' (synthetic)' : ''}\n`);
  try {
    await serveStdio(ctx, log);
  } finally {
    ctx.engine.close();
  }
}
