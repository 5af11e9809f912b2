// The `idqs` command line: serve the API (the synthetic default or a real
// release), fetch real releases, generate and build datasets, and run
// read-only SQL locally through the same service and guard as the API.
// A composition root: it registers the commands (src/cli/commands/, one file
// each); each loads the engine, the server or the generator only when it runs,
// so client commands (idqs download) start fast and never load DuckDB.

import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { ConfigError, configWarnings, loadConfig } from '../config.ts';
import { onCacheLockEvent } from '../core/cache-lock.ts';
import { IdqsError } from '../core/errors.ts';
import { registerDownload } from '../download/command.ts';
import { registerDataBuild } from './commands/data-build.ts';
import { registerDataCalibrate } from './commands/data-calibrate.ts';
import { registerDataCompare } from './commands/data-compare.ts';
import { registerDataFetch } from './commands/data-fetch.ts';
import { registerDataGenerate } from './commands/data-generate.ts';
import { registerMcp } from './commands/mcp.ts';
import { registerResolve } from './commands/resolve.ts';
import { registerServe } from './commands/serve.ts';
import { registerSql } from './commands/sql.ts';
import { reportCoreError } from './errors.ts';
import { isFleetWorker, reportStartFailure } from './serve-workers.ts';
import { resolveDb } from './serving-policy.ts';

const API_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

// Another process writing the same cache entry: say whom we wait for, or that we take its work over.
onCacheLockEvent((e) => {
  const who = e.owner ? `process ${e.owner.pid}${e.owner.host ? ` on ${e.owner.host}` : ''} (${e.owner.what}, since ${e.owner.since})` : 'another process';
  process.stderr.write(
    e.kind === 'wait'
      ? `waiting for ${who} to finish ${e.target}${e.waitedS > 0 ? ` (${e.waitedS} s so far)` : ''}\n`
      : `${who} stopped without finishing ${e.target}: taking its work over\n`,
  );
});

const program = new Command();
program
  .name('idqs')
  .description('IDQS: a read-only query service over public DICOM imaging metadata')
  .version(API_VERSION)
  .showHelpAfterError()
  // Once per command (not again in each worker of a fleet), on stderr: stdout may carry data or JSON-RPC.
  .hook('preAction', () => {
    if (!isFleetWorker()) for (const w of configWarnings()) process.stderr.write(`warning: ${w}\n`);
  });

registerServe(program);
registerMcp(program);
const data = program.command('data').description('Fetch real releases, generate synthetic datasets, build databases');
registerDataFetch(data);
registerDataGenerate(data);
registerDataBuild(data);
registerDataCompare(data);
registerDataCalibrate(data);
registerSql(program);
registerDownload(program);
registerResolve(program, { loadConfig, database: (cfg, o) => resolveDb(cfg, o.db, o) });

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof IdqsError) process.exit(reportCoreError(e));
  // A configuration that cannot start is a mistake in the command's environment, like a bad flag.
  if (e instanceof ConfigError) {
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(2);
  }
  const reason = e instanceof Error ? e.message : String(e);
  process.stderr.write(`error: ${reason}\n`);
  // A fleet worker that cannot start tells its primary why, so the primary's own exit can say it.
  if (isFleetWorker() && process.connected) reportStartFailure(reason, () => process.exit(1));
  else process.exit(1);
});
