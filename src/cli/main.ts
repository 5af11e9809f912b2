// The `idqs` command line: serve the API (the synthetic default or a real
// release), fetch real releases, generate and build datasets, and run
// read-only SQL locally through the same service and guard as the API.
// A composition root: it may load every adapter, each only when its command runs.

import { Command, InvalidArgumentError, Option } from 'commander';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, configWarnings, loadConfig, type Config } from '../config.ts';
import { onCacheLockEvent } from '../core/cache-lock.ts';
import { IdqsError } from '../core/errors.ts';
import { applyLimit, restLimits } from '../contract/limits.ts';
import { registerDownload } from '../download/command.ts';
import { registerResolve } from './resolve.ts';
import { reportCoreError } from './errors.ts';
import { fetchReporter } from './fetch-progress.ts';
import { progressReporter } from './progress.ts';
import { announceBanner, EXIT_CUT, fleetWorkerId, isFleetWorker, reportStartFailure, reportSwept, runFleet, workerSignals } from './serve-workers.ts';
import { sweepStaleWorkerTempDirs } from '../core/engine/worker-temp.ts';
import { dieWithParent } from '../core/engine/parent-watch.ts';

// The engine, the server and the generator are imported when a command needs
// them, so client commands (idqs download) start fast and never load DuckDB.
const createContext = async (...a: Parameters<typeof import('../core/context.ts').createContext>) => (await import('../core/context.ts')).createContext(...a);
const build = async (...a: Parameters<typeof import('../core/data/build.ts').build>) => (await import('../core/data/build.ts')).build(...a);
const ensureDefaultDataset = async (...a: Parameters<typeof import('../datagen/dataset.ts').ensureDefaultDataset>) =>
  (await import('../datagen/dataset.ts')).ensureDefaultDataset(...a);
const generate = async (...a: Parameters<typeof import('../datagen/generate.ts').generate>) => (await import('../datagen/generate.ts')).generate(...a);
const calibrate = async (...a: Parameters<typeof import('../datagen/calibrate/calibrate.ts').calibrate>) => (await import('../datagen/calibrate/calibrate.ts')).calibrate(...a);
const compareRelease = async () => import('../datagen/calibrate/compare.ts');
const writeObjects = async (...a: Parameters<typeof import('../datagen/objects.ts').writeObjects>) => (await import('../datagen/objects.ts')).writeObjects(...a);
const release = () => import('../core/release/fetch.ts');
const releaseSources = () => import('../core/release/sources.ts');
const openRelease = async (...a: Parameters<typeof import('../core/release/open.ts').openRelease>) => (await import('../core/release/open.ts')).openRelease(...a);
const runMcpStdio = async (...a: Parameters<typeof import('./mcp.ts').runMcpStdio>) => (await import('./mcp.ts')).runMcpStdio(...a);
const buildServer = async (...a: Parameters<typeof import('../server.ts').buildServer>) => (await import('../server.ts')).buildServer(...a);
const drain = async (...a: Parameters<typeof import('../server.ts').drain>) => (await import('../server.ts')).drain(...a);
const runSql = async (...a: Parameters<typeof import('../core/services/sql.ts').runSql>) => (await import('../core/services/sql.ts')).runSql(...a);
const API_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function positiveNumber(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number.`);
    return n;
  };
}
function port(v: string) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('port must be an integer from 0 to 65535.');
  return n;
}
function workersArg(v: string) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 256) throw new InvalidArgumentError('workers must be an integer from 0 to 256 (1 or unset = a single process, 0 = one per core).');
  return n;
}
function integer(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer.`);
    return n;
  };
}

interface ReleaseFlags {
  release?: string;
  source?: string;
  mirror?: string;
}

/** Fetch (when not cached) and build a real release, with progress on stderr; returns the database. */
async function ensureReleaseDb(cfg: Config, o: ReleaseFlags & { tables?: string; out?: string }): Promise<string> {
  const { parseRelease, parseSource } = await releaseSources();
  const reporter = fetchReporter();
  let buildProgress: ReturnType<typeof progressReporter> | undefined;
  try {
    const r = await (await release()).ensureRelease({
      release: parseRelease(o.release ?? cfg.release ?? 'latest'),
      source: parseSource(o.source ?? cfg.releaseSource),
      tables: parseTables(o.tables),
      cacheDir: cfg.cacheDir,
      out: o.out ? resolve(o.out) : undefined,
      mirror: o.mirror,
      env: process.env,
      metadata: { endpoint: cfg.metadataEndpoint, bucket: cfg.metadataBucket },
      onEvent: reporter.onEvent,
      onBuildProgress: (s, d, t) => {
        buildProgress ??= progressReporter('building database');
        buildProgress(s, d, t);
      },
    });
    reporter.stop();
    for (const w of r.build.warnings) process.stderr.write(`warning: ${w}\n`);
    return r.db;
  } finally {
    reporter.stop();
  }
}

/** The cohort index's file beside a built database, so a server's first start loads it (said on stderr). */
async function writeIndexFile(cfg: Config, db: string): Promise<void> {
  const { prepareIndexFile } = await import('../core/services/cohort-index/prepare.ts');
  process.stderr.write('cohort index: preparing its file…\n');
  const r = await prepareIndexFile(cfg, db);
  if (!r) return;
  const size = `${r.mb.toFixed(0)} MB`;
  process.stderr.write(
    r.outcome === 'written' ? `cohort index: wrote ${r.file} (${size}, ${r.seconds.toFixed(1)} s)\n`
    : r.outcome === 'present' ? `cohort index: ${r.file} is up to date (${size})\n`
    : `warning: cohort index file not written (${r.outcome}); servers build the index at each start instead\n`,
  );
}

/** --tables; unset = all the source has (the wheel: the core tables, without a warning). */
function parseTables(v: string | undefined): 'all' | 'core' | string[] | undefined {
  if (v === undefined) return undefined;
  const s = v.trim().toLowerCase();
  return s === 'all' || s === 'core' ? s : v.split(',');
}

interface DataFlags extends ReleaseFlags {
  demo?: boolean;
}

/**
 * The database to serve: --db / IDQS_DB, --release / IDQS_RELEASE, --demo /
 * IDQS_DEMO (the generated dataset, no network), else the default: the newest
 * real release in the cache, else the latest one fetched from the first source
 * that answers, else the generated dataset. Says on stderr, in one line, which
 * data it is and how to get the other.
 */
async function resolveDb(cfg: Config, db: string | undefined, rel: DataFlags = {}): Promise<string> {
  const explicit = db ?? cfg.db;
  const demo = rel.demo ?? cfg.demo;
  const named = [explicit ? 'a database (--db, IDQS_DB)' : null, (rel.release ?? cfg.release) ? 'a release (--release, IDQS_RELEASE)' : null, demo ? 'the demo data (--demo, IDQS_DEMO)' : null].filter(Boolean);
  if (named.length > 1) throw new InvalidArgumentError(`give one dataset, not ${named.join(' and ')}.`);
  if (explicit) {
    const p = resolve(explicit);
    if (!existsSync(p)) throw new Error(`database ${p} does not exist; build one with "idqs data build --from DIR --db ${explicit}"`);
    return p;
  }
  if (rel.release ?? cfg.release) return ensureReleaseDb(cfg, rel);
  if (demo) {
    say(`data: the generated demo dataset (identifiers are not real), as asked (--demo or IDQS_DEMO); without it the real release is served`);
    return demoDb(cfg);
  }
  const { defaultRelease } = await import('../core/release/default-release.ts');
  const { parseSource } = await releaseSources();
  const reporter = fetchReporter();
  let buildProgress: ReturnType<typeof progressReporter> | undefined;
  try {
    const r = await defaultRelease({
      cacheDir: cfg.cacheDir,
      env: process.env,
      connectTimeoutMs: cfg.sourceTimeoutMs,
      // A source named on the command line (or IDQS_RELEASE_SOURCE) is the only one tried.
      sources: rel.source ? [parseSource(rel.source)] : undefined,
      onNote: (line) => {
        reporter.stop();
        say(line);
      },
      onEvent: reporter.onEvent,
      onBuildProgress: (s, d, t) => {
        buildProgress ??= progressReporter('building database');
        buildProgress(s, d, t);
      },
    });
    reporter.stop();
    if (r.found) {
      const f = r.found;
      say(`data: the real release ${f.release} (index ${f.indexVersion}, from ${f.source}, ${f.fetched ? 'just fetched' : 'cached'} in ${f.folder}); the generated demo data instead: --demo`);
      return f.db;
    }
    say(
      `data: GENERATED DEMO DATA, identifiers are not real: no release source answered (${r.tried.map((t) => t.source).join(', ')}); ` +
        'for the real release restart with the network, or fetch it where there is one: idqs data fetch --release latest',
    );
    return demoDb(cfg);
  } finally {
    reporter.stop();
  }
}

const say = (line: string) => void process.stderr.write(`${line}\n`);

/** A list given as one value separated by commas (a database file whose name has a comma is one file). */
function listOf(v: string | null | undefined, isFile = false): string[] {
  if (!v) return [];
  if (isFile && existsSync(v)) return [v];
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * The databases to serve: several when --release (IDQS_RELEASE) or --db
 * (IDQS_DB) lists several, separated by commas (each release fetched and built
 * through the cache as a single one is); else the one resolveDb chooses.
 */
async function resolveDbs(cfg: Config, db: string | undefined, rel: DataFlags = {}): Promise<string[]> {
  const dbs = listOf(db ?? cfg.db, true);
  const releases = listOf(rel.release ?? cfg.release);
  if (dbs.length <= 1 && releases.length <= 1) return [await resolveDb(cfg, db, rel)];
  if ((dbs.length > 0 && releases.length > 0) || (rel.demo ?? cfg.demo)) {
    throw new InvalidArgumentError('give the releases to serve either as databases (--db a.duckdb,b.duckdb) or as releases (--release 25.0.5,24.2.2), without --demo.');
  }
  const out: string[] = [];
  for (const d of dbs) {
    const p = resolve(d);
    if (!existsSync(p)) throw new Error(`database ${p} does not exist; build one with "idqs data build --from DIR --db ${d}"`);
    out.push(p);
  }
  for (const r of releases) out.push(await ensureReleaseDb(cfg, { ...rel, release: r }));
  return out;
}

/** The generated dataset, built on first use with its progress. */
async function demoDb(cfg: Config): Promise<string> {
  // Each phase's clock starts when that phase does.
  const reporters: Partial<Record<'generate' | 'build', ReturnType<typeof progressReporter>>> = {};
  const r = await ensureDefaultDataset(cfg.cacheDir, cfg.scale, cfg.seed, (phase, s, d, t) => {
    reporters[phase] ??= progressReporter(phase === 'generate' ? 'generating default dataset' : 'building database');
    reporters[phase](s, d, t);
  });
  return r.db;
}

/** --release, --source and --mirror, shared by serve, mcp and data fetch. */
function releaseOptions(cmd: Command, withEnv: boolean): Command {
  const rel = new Option(
    '--release <version>',
    withEnv
      ? 'real release: a version such as 25.0.5, or latest (fetched and built when not in the cache); several separated by commas (25.0.5,24.2.2) are served together, each request naming one (default the newest)'
      : 'real release: a version such as 25.0.5, or latest (fetched and built when not in the cache)',
  );
  const src = new Option('--source <source>', 'where to fetch the release: gcs (public bucket, default), github (release assets) or pypi (the wheel: core tables only; --tables clinical adds the clinical tables from the metadata bucket)');
  return cmd
    .addOption(withEnv ? rel.env('IDQS_RELEASE') : rel)
    .addOption(withEnv ? src.env('IDQS_RELEASE_SOURCE') : src)
    .option('--mirror <url>', 'base URL replacing the public one of --source (an air-gapped mirror in the same layout)');
}

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

const serve = program
  .command('serve')
  .description('Serve the HTTP API and the web explorer at / (default: the newest real release in the cache, else the latest one fetched, else the generated demo data; --demo: the demo data, offline)')
  .addOption(new Option('--port <port>', 'port to listen on').argParser(port).env('PORT').default(8000))
  .addOption(new Option('--host <host>', 'interface to bind').env('HOST').default('127.0.0.1'))
  .option('--db <path>', 'prebuilt database file to serve, or several separated by commas (env IDQS_DB)')
  .option('--demo', 'serve the generated demo dataset (identifiers are not real) without touching the network (env IDQS_DEMO=1)')
  .addOption(new Option('--workers <n>', 'worker processes sharing the port, each with its own engine (default 1: a single process; 0 = one per core)').argParser(workersArg).env('IDQS_WORKERS'));
releaseOptions(serve, true)
  .addHelpText(
    'after',
    '\nExamples:\n  idqs serve                       # the newest real release in the cache; none: the latest one, fetched (bucket, then GitHub, then PyPI) and built once; no network: the demo data\n  idqs serve --demo                # the generated demo dataset, offline\n  idqs serve --release latest      # the newest real release (fetched and built once, then cached)\n  idqs serve --release 25.0.5 --source pypi\n  idqs serve --release 25.0.5,24.2.2 --source pypi   # two releases; a request names one with release (default the newest)\n  idqs serve --db idc.duckdb --workers 4   # one port, four processes; a dead one is replaced\n\nSIGTERM or SIGINT drains: in-flight requests finish within IDQS_SHUTDOWN_S, then the server exits.',
  )
  .action(async (o: { port: number; host: string; db?: string; workers?: number } & DataFlags) => {
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
    const { createReleaseContexts, servedView } = await import('../core/releases.ts');
    const contexts = await createReleaseContexts(cfg, dbs);
    // One release: its context; several: the view that answers each request from the release it names.
    const ctx = servedView(contexts);
    const several = contexts.length > 1;
    const named = contexts.map((c, i) => `${c.dataset.release} (${c.dataset.index_version}${i === 0 ? ', the default' : ''})`).join(', ');
    if (several && !worker) say(`data: ${contexts.length} releases, each its own database, newest first: ${contexts.map((c, i) => `${c.dataset.index_version} (${c.dataset.release}${i === 0 ? ', the default' : ''}) in ${c.engine.options.path}`).join('; ')}`);
    // On a terminal, readable lines (one per request); otherwise JSON lines for a log collector.
    const stream = process.stdout.isTTY ? (await import('./pretty-log.ts')).prettyLog() : undefined;
    const app = await buildServer(ctx, { logger: { level: cfg.logLevel, stream } });
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
      const { warmCohortIndex } = await import('../core/services/cohort-index/build.ts');
      for (const c of contexts.slice(1)) warmCohortIndex(c);
    }
    // Graceful stop within IDQS_SHUTDOWN_S whatever the clients do; a second signal stops at once.
    // Exit 0 when every request finished in time, else EXIT_CUT. The caller-SQL workers are killed
    // and waited for before the process exits (and the kernel kills any left when it does).
    let stopping = false;
    const hardExit = (code: number) => {
      for (const c of contexts) c.engine.sql.abandon();
      process.exit(code);
    };
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.once('SIGINT', () => hardExit(130));
      process.once('SIGTERM', () => hardExit(143));
      const deadlineMs = cfg.shutdownS * 1000;
      setTimeout(() => hardExit(EXIT_CUT), deadlineMs + 2000).unref();
      process.stderr.write(`${signal}: finishing in-flight requests${who} (at most ${cfg.shutdownS} s)\n`);
      const outcome = await drain(app, deadlineMs);
      for (const c of contexts) c.engine.close();
      await Promise.all(contexts.map((c) => c.engine.sql.stopped(1500)));
      process.stderr.write(outcome === 'clean' ? `stopped${who}\n` : `stopped${who}: requests still running at the deadline were cut (exit ${EXIT_CUT})\n`);
      process.exit(outcome === 'clean' ? 0 : EXIT_CUT);
    };
    if (worker) workerSignals((why) => void stop(why), () => contexts.forEach((c) => c.engine.sql.abandon()));
    else process.once('SIGINT', () => void stop('SIGINT'));
    process.once('SIGTERM', () => void stop('SIGTERM'));
  });

const mcp = program
  .command('mcp')
  .description('Serve the agent tools (MCP) over stdio, for a local MCP client (logs go to stderr); the data as idqs serve chooses it')
  .option('--db <path>', 'prebuilt database file to serve, or several separated by commas (env IDQS_DB)')
  .option('--demo', 'the generated demo dataset, offline (env IDQS_DEMO=1)');
releaseOptions(mcp, true)
  .action(async (o: { db?: string } & DataFlags) => {
    const cfg = loadConfig();
    await runMcpStdio(cfg, await resolveDbs(cfg, o.db, o));
    process.exit(0);
  });

const data = program.command('data').description('Fetch real releases, generate synthetic datasets, build databases');
const fetchCmd = data
  .command('fetch')
  .description('Download a real release of the public index files into the cache (or --out), check every published sha256, then build its database')
  .option('--tables <list>', 'all (every release file and the clinical tables), core (the five tables of the wheel), or names separated by commas (index = idc_index, clinical = the clinical tables, core; e.g. core,clinical); default: every release file (for pypi: core), without the clinical tables')
  .option('--out <dir>', 'folder to fetch into (default: <cache>/releases/<release>-<source>)')
  .option('--no-build', 'download and check only');
releaseOptions(fetchCmd, false)
  .addHelpText(
    'after',
    `
Sources (base URLs replaced by --mirror, or IDQS_RELEASE_GCS_URL, IDQS_RELEASE_GITHUB_URL, IDQS_PYPI_INDEX / PIP_INDEX_URL):
  gcs     <base>/<release>/release_artifacts/<file> (latest: current/), every table with .sha256, _schema.json, .sql
  github  <base>/<release>/<file>, the release assets of idc-index-data
  pypi    the idc-index-data wheel of that version on a simple index: the five core tables (with
          --tables clinical, the clinical tables from the metadata bucket, into the same folder)
Clinical tables (--tables all, or clinical): s3://idc-open-metadata/bigquery_export/idc_v<N>_clinical/<table>/*.parquet,
  read anonymously (IDQS_METADATA_S3_ENDPOINT, IDQS_METADATA_BUCKET for a mirror); a table that cannot be fetched is named.

Downloads run in parallel, resume after an interruption (rerun the command) and are retried; a file
that does not match its published sha256 is refused and kept aside as <file>.rejected. A release
already in the cache is reused without the network. Examples:
  idqs data fetch --release latest
  idqs data fetch --release 25.0.5 --source pypi
  idqs data fetch --release 24.2.2 --tables core,seg_index --out ./idc-v24`,
  )
  .action(async (o: ReleaseFlags & { tables?: string; out?: string; build: boolean }) => {
    const cfg = loadConfig();
    const { parseRelease, parseSource } = await releaseSources();
    const rel = await release();
    const opts = {
      release: parseRelease(o.release ?? 'latest'),
      source: parseSource(o.source ?? 'gcs'),
      tables: parseTables(o.tables),
      cacheDir: cfg.cacheDir,
      out: o.out ? resolve(o.out) : undefined,
      mirror: o.mirror,
      env: process.env,
      metadata: { endpoint: cfg.metadataEndpoint, bucket: cfg.metadataBucket },
    };
    if (!o.build) {
      const reporter = fetchReporter();
      try {
        const r = await rel.fetchRelease({ ...opts, onEvent: reporter.onEvent });
        reporter.stop();
        process.stdout.write(JSON.stringify(r, null, 2) + '\n');
      } finally {
        reporter.stop();
      }
      return;
    }
    const reporter = fetchReporter();
    let buildProgress: ReturnType<typeof progressReporter> | undefined;
    try {
      const r = await rel.ensureRelease({
        ...opts,
        onEvent: reporter.onEvent,
        onBuildProgress: (s, d, t) => {
          buildProgress ??= progressReporter('building database');
          buildProgress(s, d, t);
        },
      });
      reporter.stop();
      process.stdout.write(JSON.stringify({ db: r.db, fetch: r.fetch, build: r.build }, null, 2) + '\n');
      for (const w of r.build.warnings) process.stderr.write(`warning: ${w}\n`);
      await writeIndexFile(cfg, r.db);
      process.stderr.write(`release ${r.build.release} (${r.build.index_version}) ready: serve it with "idqs serve --db ${r.db}"\n`);
    } finally {
      reporter.stop();
    }
  });
data
  .command('generate')
  .description('Write a synthetic dataset as Parquet files in the public release layout, plus dataset.json')
  .requiredOption('--out <dir>', 'output folder (replaced atomically)')
  .option('--scale <s>', 'size relative to the real release (1.0 = its 86k patients and 1.04M series)', positiveNumber('scale'), 0.03)
  .option('--seed <n>', 'random seed; the same seed and scale give identical files', integer('seed'), 42)
  .option('--no-instances', 'skip the instance-level /v2 table (much faster at large scales)')
  .option('--objects <n>', 'also write small DICOM files of N series into <out>/objects/<bucket>/<crdc_series_uuid>/ (whole collections first)', integer('objects'))
  .action(async (o: { out: string; scale: number; seed: number; instances: boolean; objects?: number }) => {
    if (o.objects && !o.instances) throw new InvalidArgumentError('--objects needs the instance table; drop --no-instances.');
    const m = await generate({ scale: o.scale, seed: o.seed, out: resolve(o.out), instances: o.instances, onProgress: progressReporter('generate') });
    const objects = o.objects ? await writeObjects({ from: resolve(o.out), out: join(resolve(o.out), 'objects'), series: o.objects }) : undefined;
    process.stdout.write(JSON.stringify({ out: resolve(o.out), release: m.release, totals: m.totals, row_counts: m.row_counts, objects }, null, 2) + '\n');
  });
data
  .command('build')
  .description('Build the read-only DuckDB file from a dataset folder (ours or a real release) or an idc-index-data wheel; skipped when unchanged')
  .requiredOption('--from <dir|wheel>', 'folder with idc_index.parquet and the other index files, or a wheel (pip download idc-index-data==X --no-deps)')
  .requiredOption('--db <path>', 'database file to write (written aside, then renamed)')
  .option('--force', 'rebuild even when the dataset is unchanged')
  .action(async (o: { from: string; db: string; force?: boolean }) => {
    const opened = await openRelease(resolve(o.from), { cacheDir: loadConfig().cacheDir });
    const r = await build({ from: opened.folder, db: resolve(o.db), force: o.force, versionHint: opened.index_version, onProgress: progressReporter('build') });
    for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
    await writeIndexFile(loadConfig(), resolve(o.db));
    process.stdout.write(JSON.stringify(r, null, 2) + '\n');
    if (!r.rebuilt) process.stderr.write('database is up to date with the dataset; nothing to do (use --force to rebuild)\n');
  });

data
  .command('compare')
  .description('Print the distributions the generator is calibrated on, for a real release and a generated dataset side by side')
  .requiredOption('--real <wheel-or-dir>', 'the real release: an idc-index-data wheel (.whl) or a folder of its Parquet files')
  .option('--from <dir>', 'generated dataset folder (default: the default dataset, generated on first use)')
  .option('--json', 'print the distributions as JSON instead of tables')
  .action(async (o: { real: string; from?: string; json?: boolean }) => {
    const { compare, formatComparison, checkReleasePath } = await compareRelease();
    checkReleasePath(o.real);
    const cfg = loadConfig();
    let ours = o.from ? resolve(o.from) : undefined;
    if (!ours) {
      await resolveDb({ ...cfg, db: null, release: null }, undefined, { demo: true });
      ours = (await import('../datagen/dataset.ts')).defaultDatasetPaths(cfg.cacheDir, cfg.scale, cfg.seed).folder;
    }
    const c = await compare({ real: resolve(o.real), ours });
    process.stdout.write(o.json ? JSON.stringify(c, null, 2) + '\n' : formatComparison(c));
  });
data
  .command('calibrate')
  .description('Extract the release profile the generator draws from (maintainers: run when a new release comes out)')
  .requiredOption('--real <wheel-or-dir>', 'the real release: an idc-index-data wheel (.whl) or a folder of its Parquet files')
  .requiredOption('--out <file>', 'profile to write (the shipped one is data/synth/release-profile.json)')
  .action(async (o: { real: string; out: string }) => {
    const p = await calibrate({ real: resolve(o.real), out: resolve(o.out), onProgress: (m) => process.stderr.write(`${m}\n`) });
    process.stdout.write(JSON.stringify({ out: resolve(o.out), source: p.provenance.source, totals: p.totals }, null, 2) + '\n');
  });

program
  .command('sql')
  .description('Run one read-only SELECT/WITH statement locally through the same service and guard as POST /v3/sql')
  .argument('<query>', 'the SQL statement')
  .option('--db <path>', 'database file (default: the data idqs serve would serve)')
  .option('--demo', 'the generated demo dataset, offline (env IDQS_DEMO=1)')
  .option('--max-rows <n>', 'most rows to print (default IDQS_SQL_MAX_ROWS, 5000; values above IDQS_SQL_MAX_ROWS_CAP, 10000, are lowered to it)', integer('max-rows'))
  .addOption(new Option('--format <f>', 'output format').choices(['json', 'table', 'csv']).default('table'))
  .action(async (query: string, o: { db?: string; demo?: boolean; maxRows?: number; format: string }) => {
    const cfg = loadConfig();
    const limits = restLimits(cfg);
    // The row cap follows the API's rule: the same default and ceiling; 0 is refused by the service.
    const maxRows = applyLimit('--max-rows', o.maxRows, limits.sqlRows);
    if (maxRows.warning) process.stderr.write(`warning: ${maxRows.warning}\n`);
    const dbFile = await resolveDb(cfg, o.db, { demo: o.demo });
    reportSwept(sweepStaleWorkerTempDirs());
    const ctx = await createContext(cfg, dbFile);
    // IDQS_DB is silent in resolveDb (the other defaults say which data they chose): say it here (stdout stays the result).
    if (!o.db && cfg.db) process.stderr.write(`answering from IDQS_DB (${dbFile}): data release ${ctx.dataset.release}${ctx.dataset.synthetic ? ', synthetic' : ''}; --db FILE picks another database\n`);
    try {
      const r = await runSql(ctx, query, maxRows.value);
      if (o.format === 'json') process.stdout.write(JSON.stringify(r, null, 2) + '\n');
      else if (o.format === 'csv') {
        const esc = (v: unknown) => {
          const s = v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
          return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
        };
        process.stdout.write([r.columns.map(esc).join(','), ...r.rows.map((row) => r.columns.map((c) => esc(row[c])).join(','))].join('\n') + '\n');
      } else {
        console.table(r.rows);
      }
      if (r.truncated) process.stderr.write(`truncated at ${r.max_rows} rows; raise --max-rows (cap ${limits.sqlRows.cap}) or aggregate\n`);
    } finally {
      ctx.engine.close();
    }
  });

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
