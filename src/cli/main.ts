// The `idqs` command line: serve the API, generate and build datasets, and
// run read-only SQL locally through the same guard as the API.

import { Command, InvalidArgumentError, Option } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { IdqsError } from '../core/errors.ts';
import { registerDownload } from '../download/command.ts';
import { progressReporter } from './progress.ts';

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
const runMcpStdio = async (...a: Parameters<typeof import('./mcp.ts').runMcpStdio>) => (await import('./mcp.ts')).runMcpStdio(...a);
const buildApp = async (...a: Parameters<typeof import('../http/app.ts').buildApp>) => (await import('../http/app.ts')).buildApp(...a);
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
function integer(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer.`);
    return n;
  };
}

/** The database to serve: --db, IDQS_DB, or the default dataset (built on first use). */
async function resolveDb(cfg: Config, db: string | undefined): Promise<string> {
  const explicit = db ?? cfg.db;
  if (explicit) {
    const p = resolve(explicit);
    if (!existsSync(p)) throw new Error(`database ${p} does not exist; build one with "idqs data build --from DIR --db ${explicit}"`);
    return p;
  }
  // Each phase's clock starts when that phase does.
  const reporters: Partial<Record<'generate' | 'build', ReturnType<typeof progressReporter>>> = {};
  const r = await ensureDefaultDataset(cfg.cacheDir, cfg.scale, cfg.seed, (phase, s, d, t) => {
    reporters[phase] ??= progressReporter(phase === 'generate' ? 'generating default dataset' : 'building database');
    reporters[phase](s, d, t);
  });
  return r.db;
}

const program = new Command();
program
  .name('idqs')
  .description('IDQS: a read-only query service over public DICOM imaging metadata')
  .version(API_VERSION)
  .showHelpAfterError();

program
  .command('serve')
  .description('Serve the HTTP API (default: the embedded demonstration dataset, built on first use)')
  .addOption(new Option('--port <port>', 'port to listen on').argParser(port).env('PORT').default(8000))
  .addOption(new Option('--host <host>', 'interface to bind').env('HOST').default('127.0.0.1'))
  .option('--db <path>', 'prebuilt database file to serve (env IDQS_DB)')
  .action(async (o: { port: number; host: string; db?: string }) => {
    const cfg = loadConfig();
    const db = await resolveDb(cfg, o.db);
    const ctx = await createContext(cfg, db);
    const app = await buildApp(ctx, { logger: { level: cfg.logLevel } });
    const address = await app.listen({ port: o.port, host: o.host });
    process.stderr.write(`IDQS ${ctx.serverVersion} serving data release ${ctx.dataset.release}${ctx.dataset.synthetic ? ' (synthetic)' : ''} at ${address} (docs: ${address}/v3/docs)\n`);
    const stop = async () => {
      await app.close();
      ctx.engine.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

program
  .command('mcp')
  .description('Serve the agent tools (MCP) over stdio, for a local MCP client (logs go to stderr)')
  .option('--db <path>', 'prebuilt database file to serve (env IDQS_DB)')
  .action(async (o: { db?: string }) => {
    const cfg = loadConfig();
    await runMcpStdio(cfg, await resolveDb(cfg, o.db));
    process.exit(0);
  });

const data = program.command('data').description('Generate and build datasets');
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
  .description('Build the read-only DuckDB file from a dataset folder (ours or a real release); skipped when unchanged')
  .requiredOption('--from <dir>', 'folder with idc_index.parquet and the other index files')
  .requiredOption('--db <path>', 'database file to write (written aside, then renamed)')
  .option('--force', 'rebuild even when the dataset is unchanged')
  .action(async (o: { from: string; db: string; force?: boolean }) => {
    const r = await build({ from: resolve(o.from), db: resolve(o.db), force: o.force, onProgress: progressReporter('build') });
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
      await resolveDb(cfg, undefined);
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
  .description('Run one read-only SELECT/WITH statement locally through the same guard as the API')
  .argument('<query>', 'the SQL statement')
  .option('--db <path>', 'database file (default: the default dataset)')
  .option('--max-rows <n>', 'row cap', integer('max-rows'))
  .addOption(new Option('--format <f>', 'output format').choices(['json', 'table', 'csv']).default('table'))
  .action(async (query: string, o: { db?: string; maxRows?: number; format: string }) => {
    const cfg = loadConfig();
    const ctx = await createContext(cfg, await resolveDb(cfg, o.db));
    try {
      const maxRows = Math.max(1, Math.min(o.maxRows ?? cfg.sqlMaxRows, cfg.sqlMaxRowsCap));
      const r = await ctx.engine.callerSql(query, maxRows);
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
      if (r.truncated) process.stderr.write(`truncated at ${r.max_rows} rows; raise --max-rows (cap ${cfg.sqlMaxRowsCap}) or aggregate\n`);
    } finally {
      ctx.engine.close();
    }
  });

registerDownload(program);

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof IdqsError) process.stderr.write(`error (${e.code}): ${e.message}\n`);
  else process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
