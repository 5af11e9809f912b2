// `idqs mcp`: the agent tools (MCP) over stdio, over the data the serving policy chooses.

import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { releaseOptions } from '../release-fetch.ts';
import { resolveDbs, type DataFlags } from '../serving-policy.ts';

export function registerMcp(program: Command): void {
  const mcp = program
    .command('mcp')
    .description('Serve the agent tools (MCP) over stdio, for a local MCP client (logs go to stderr); the data as idqs serve chooses it')
    .option('--db <path>', 'prebuilt database file to serve, or several separated by commas (env IDQS_DB)')
    .option('--demo', 'the generated demo dataset, offline (env IDQS_DEMO=1)');
  releaseOptions(mcp, true).action(async (o: { db?: string } & DataFlags) => {
    const cfg = loadConfig();
    const dbs = await resolveDbs(cfg, o.db, o);
    await (await import('../mcp.ts')).runMcpStdio(cfg, dbs);
    process.exit(0);
  });
}
