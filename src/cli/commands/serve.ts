// `idqs serve`: the HTTP API and the web explorer over the data the serving policy chooses, as one process or a
// fleet of workers sharing the port; the engine and the server are loaded when the command runs.

import { Option, type Command } from 'commander';
import { realpathSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { loadConfig, type Config } from '../../config.ts';
import { dieWithParent } from '../../core/engine/parent-watch.ts';
import { sweepStaleWorkerTempDirs } from '../../core/engine/worker-temp.ts';
import { port, workersArg } from '../args.ts';
import { releaseOptions } from '../release-fetch.ts';
import { announceBanner, fleetWorkerId, isFleetWorker, reportSwept, runFleet } from '../serve-workers.ts';
import { listOf, resolveDbs, say, type DataFlags } from '../serving-policy.ts';
import { drainOnSignals } from '../signals.ts';

const EXAMPLES = `
Examples:
  idqs serve                       # the newest real release in the cache; none: the latest one, fetched (bucket, then GitHub, then PyPI) and built once; no network: the demo data
  idqs serve --demo                # the generated demo dataset, offline
  idqs serve --release latest      # the newest real release (fetched and built once, then cached)
  idqs serve --release 25.0.5 --source pypi
  idqs serve --release 25.0.5,24.2.2 --source pypi   # two releases; a request names one with release (default the newest)
  idqs serve --db idc.duckdb --workers 4   # one port, four processes; a dead one is replaced
  idqs serve --release 25.0.5 --trino http://127.0.0.1:18300   # heavy cohort questions on a Trino cluster

SIGTERM or SIGINT drains: in-flight requests finish within IDQS_SHUTDOWN_S, then the server exits.`;

export function registerServe(program: Command): void {
  const serve = program
    .command('serve')
    .description('Serve the HTTP API and the web explorer at / (default: the newest real release in the cache, else the latest one fetched, else the generated demo data; --demo: the demo data, offline)')
    .addOption(new Option('--port <port>', 'port to listen on').argParser(port).env('PORT').default(8000))
    .addOption(new Option('--host <host>', 'interface to bind').env('HOST').default('127.0.0.1'))
    .option('--db <path>', 'prebuilt database file to serve, or several separated by commas (env IDQS_DB)')
    .option('--demo', 'serve the generated demo dataset (identifiers are not real) without touching the network (env IDQS_DEMO=1)')
    .option('--trino <url>', 'a Trino coordinator serving this release (deploy/trino/cluster.sh): cohort questions the index cannot answer go to it before DuckDB, and caller SQL may ask for it (env IDQS_TRINO_URL)')
    .addOption(new Option('--workers <n>', 'worker processes sharing the port, each with its own engine (default 1: a single process; 0 = one per core)').argParser(workersArg).env('IDQS_WORKERS'));
  releaseOptions(serve, true).addHelpText('after', EXAMPLES).action(serveAction);
}

async function serveAction(o: { port: number; host: string; db?: string; workers?: number; trino?: string } & DataFlags): Promise<void> {
  // Through the environment, so the setting is checked as every other and a fleet's workers inherit it.
  if (o.trino !== undefined) process.env.IDQS_TRINO_URL = o.trino;
  // The flags win: where it listens decides the absolute URLs it falls back to and its DNS-rebinding guard.
  const cfg: Config = { ...loadConfig(), host: o.host, port: o.port };
  const worker = isFleetWorker();
  // A fleet worker dies with its primary, even one killed outright (see workerSignals).
  if (worker) dieWithParent();
  // Caller-SQL folders left by a server that was killed (its primary sweeps for a fleet).
  else reportSwept(sweepStaleWorkerTempDirs());
  // The real file, not a link to it: a release switch that repoints the link reaches a server only when it restarts.
  // Several files when several releases are served (a fleet's workers get them as one list).
  const dbs = worker ? listOf(o.db!, true) : (await resolveDbs(cfg, o.db, o)).map((p) => realpathSync(p));
  // One process unless asked: its engine already uses every core (docs/deploy.md has the figures).
  const workers = (o.workers ?? cfg.workers) || availableParallelism();
  if (!worker && workers > 1) {
    // The workers open the databases; the banner they announce names each release.
    if (dbs.length > 1) say(`data: ${dbs.length} releases, each its own database: ${dbs.join('; ')}`);
    runFleet({ db: dbs.join(','), port: o.port, host: o.host, workers, shutdownS: cfg.shutdownS });
    return;
  }
  const { createReleaseContexts, servedView } = await import('../../core/releases.ts');
  const contexts = await createReleaseContexts(cfg, dbs);
  // One release: its context; several: the view that answers each request from the release it names.
  const ctx = servedView(contexts);
  const several = contexts.length > 1;
  const named = contexts.map((c, i) => `${c.dataset.release} (${c.dataset.index_version}${i === 0 ? ', the default' : ''})`).join(', ');
  if (several && !worker) say(`data: ${contexts.length} releases, each its own database, newest first: ${contexts.map((c, i) => `${c.dataset.index_version} (${c.dataset.release}${i === 0 ? ', the default' : ''}) in ${c.engine.options.path}`).join('; ')}`);
  // On a terminal, readable lines (one per request); otherwise JSON lines for a log collector.
  const stream = process.stdout.isTTY ? (await import('../pretty-log.ts')).prettyLog() : undefined;
  const app = await (await import('../../server.ts')).buildServer(ctx, { logger: { level: cfg.logLevel, stream } });
  const address = await app.listen({ port: o.port, host: o.host });
  // No caller-SQL worker is started here: the first query starts one (idle ones are stopped after IDQS_SQL_IDLE_S).
  if (!worker) {
    const caller = ctx.engine.options.caller;
    say(`caller SQL: up to ${caller.workers} worker process(es) of ${(caller.memoryBytes / caller.workers / 1024 ** 3).toFixed(1)} GB each, IDQS_SQL_MEMORY_LIMIT=${caller.memoryLimit}`);
  }
  const who = worker ? ` (fleet worker ${fleetWorkerId()}, pid ${process.pid})` : '';
  const serving = several ? `data releases ${named}` : `data release ${ctx.dataset.release}${ctx.dataset.synthetic ? ' (synthetic)' : ''}`;
  const banner = `IDQS ${ctx.serverVersion} serving ${serving} at ${address} (explorer: ${address}/, docs: ${address}/v3/docs)`;
  // A fleet's primary prints the banner once, for every worker.
  if (worker) announceBanner(banner);
  else process.stderr.write(`${banner}\n`);
  // The default release's index was read before listening; the others' are read (or built) now, in the
  // background, so the first request naming one does not wait for it (SQL answers until then).
  if (several) {
    const { warmCohortIndex } = await import('../../core/services/cohort-index/build.ts');
    for (const c of contexts.slice(1)) warmCohortIndex(c);
  }
  drainOnSignals({ app, contexts, cfg, worker, who });
}
