// `idqs mcp`: the agent tools over stdio. Only protocol messages go to
// stdout; the audit log and any progress go to stderr.

import { pino } from 'pino';
import type { Config } from '../config.ts';
import { createReleaseContexts, servedView } from '../core/releases.ts';
import { serveStdio } from '../mcp/stdio.ts';
import { sweepStaleWorkerTempDirs } from '../core/engine/worker-temp.ts';
import { reportSwept } from './serve-workers.ts';

/** The tools over one database, or over several releases (each tool call names one, default the newest). */
export async function runMcpStdio(cfg: Config, dbs: string[]): Promise<void> {
  // Caller-SQL folders left by servers that were killed: its own workers use the same temporary root.
  reportSwept(sweepStaleWorkerTempDirs());
  const contexts = await createReleaseContexts(cfg, dbs);
  const ctx = servedView(contexts);
  const log = pino({ level: cfg.logLevel }, pino.destination(2));
  const what =
    contexts.length > 1
      ? `data releases ${contexts.map((c, i) => `${c.dataset.release} (${c.dataset.index_version}${i === 0 ? ', the default' : ''})`).join(', ')}`
      : `data release ${ctx.dataset.release}${ctx.dataset.synthetic ? ' (synthetic)' : ''}`;
  process.stderr.write(`IDQS ${ctx.serverVersion} agent tools (MCP) on stdio, ${what}\n`);
  try {
    await serveStdio(ctx, log);
  } finally {
    for (const c of contexts) c.engine.close();
  }
}
