// `idqs download`: the command-line downloader the manifests and the
// download payload point to. A client only: it talks to the service over HTTP
// and to the public object stores over anonymous S3 HTTP.

import { Command, InvalidArgumentError, Option } from 'commander';
import { setMaxListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { existsSync, statSync } from 'node:fs';
import { DEFAULT_LAYOUT } from './layout.ts';
import { Reporter, type Mode } from './report.ts';
import { RESOLVE_CHUNK } from './service.ts';
import { runDownload, StoreUnreachable, UsageError, type DownloadOptions } from './run.ts';
import { STORE_ALIASES, type StoreKey } from '../core/rules/stores.ts';

export const DEFAULT_API = 'http://127.0.0.1:8000';

function source(v: string): StoreKey {
  const k = STORE_ALIASES.get(v.trim().toLowerCase());
  if (!k) throw new InvalidArgumentError('allowed: cloud1 (or aws), cloud2 (or gcs).');
  return k;
}

function jobs(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new InvalidArgumentError('must be an integer from 1 to 256.');
  return n;
}

function count(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 100) throw new InvalidArgumentError('must be an integer from 0 to 100.');
  return n;
}

/** A size such as 10GB, 500MB, 1.5TB or a byte count (decimal units). */
export function parseSize(v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g|tb|t)?\s*$/i.exec(v);
  if (!m) throw new InvalidArgumentError('must be a size such as 500MB, 10GB or 2TB.');
  const mult: Record<string, number> = { b: 1, k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12 };
  return Math.round(Number(m[1]) * mult[(m[2] ?? 'b').toLowerCase()]!);
}

function url(v: string): string {
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new InvalidArgumentError('must be an http:// or https:// URL.');
  }
  return v.replace(/\/+$/, '');
}

/** What commander parses: the options of the run, with the booleans optional, plus the output mode. */
type Flags = Omit<DownloadOptions, 'dryRun' | 'yes' | 'checksum' | 'retryBaseMs' | 'listPageSize' | 'resolveChunk' | 'interactive' | 'asSaved'> & {
  asSaved?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  checksum?: boolean;
  quiet?: boolean;
  json?: boolean;
};

export function registerDownload(program: Command): void {
  program
    .command('download')
    .description(
      'Download series from the public object stores straight to disk (anonymous S3): from a manifest file, or a cohort resolved through a running IDQS service',
    )
    .argument('[target]', 'as the idc CLI takes it: a manifest file, or collection ids separated by commas (same as --manifest / --collection)')
    .option('--manifest <file>', 'a manifest as saved from any release (s3:// or gs:// URLs, s5cmd "cp" lines, UIDs, # comments): each line is resolved by the API to the current version of its series')
    .option('--as-saved', 'with --manifest: download the versions the lines named (earlier versions stay in the stores), not the current ones')
    .option('--collection <id...>', 'download these collections (collection_id)')
    .option('--series <uid...>', 'download these series (SeriesInstanceUID)')
    .option('--filters <json>', 'download the cohort of a filter object, e.g. \'{"terms":{"collection_id":["nlst"],"Modality":["CT"]}}\'')
    .addOption(new Option('--collection-id <id...>', 'alias of --collection').hideHelp())
    .addOption(new Option('--filter <json>', 'alias of --filters').hideHelp())
    .addOption(new Option('--dir <dir>', 'alias of --out').hideHelp())
    .addOption(new Option('--download-dir <dir>', 'alias of --out (the idc CLI spelling)').hideHelp())
    .addOption(new Option('--api <url>', 'IDQS API that resolves cohorts and series folders').env('IDQS_API').argParser(url).default(DEFAULT_API))
    .option('--release <version>', 'with an API that serves several releases: the one to download from, e.g. 24.2.2 (GET /v3/releases lists them); default: the newest it serves')
    .addOption(new Option('--source <store>', 'object store: cloud1 (aws) or cloud2 (gcs)').argParser(source).default('cloud1'))
    .option('--endpoint <url>', "S3 endpoint to use instead of the store's (from the API, else the public default)", url)
    .option('--out <dir>', 'folder to download into', './idqs-data')
    .option('--layout <template>', `folders under --out: %collection_id %PatientID %StudyInstanceUID %SeriesInstanceUID %Modality %crdc_series_uuid %bucket, or "flat"`, DEFAULT_LAYOUT)
    .option('--dry-run', 'list the objects and print the count and total size; download nothing')
    .option('--jobs <n>', 'parallel transfers (and connections)', jobs, 8)
    .option('-y, --yes', 'do not ask before a large download')
    .addOption(new Option('--confirm-above <size>', 'ask for confirmation above this size (decimal units)').argParser(parseSize).default(parseSize('10GB'), '10GB'))
    .option('--retries <n>', 'retries of a request after a 5xx, 429 or connection error (exponential backoff)', count, 5)
    .option('--checksum', 'also check the MD5 of each single-part object against its ETag (CPU-bound: about 600 MB/s per core)')
    .option('-q, --quiet', 'no progress or information; failures and their summary only')
    .option('--json', 'JSON lines on stdout (cohort, plan, start, progress, file, warning, summary events)')
    .addHelpText(
      'after',
      `
Examples:
  idqs download --collection nlst --out ./data --dry-run
  idqs download --filters '{"terms":{"collection_id":["nlst"],"Modality":["CT"]}}' --out ./data --jobs 16
  idqs download --manifest manifest.txt --out ./data --source cloud2
  idqs download --manifest saved_in_v19.s5cmd --as-saved --out ./data   (the versions the manifest named)
  idqs download --series 1.2.3.4 --layout flat --out ./one-series
  idqs download nlst --download-dir ./data             (the idc CLI form: a collection id, or a manifest file)

Files land as <out>/<layout>/<crdc_instance_uuid>.dcm, written under a temporary name and renamed when
complete; a rerun skips files whose size matches the store's listing. With --manifest, the folders
of the default layout come from the API (--api); when it cannot be reached, files go to
<out>/<crdc_series_uuid>/. Each line of a manifest is resolved by the API: revised series download their
current version (or, with --as-saved, the one named), removed ones only with --as-saved; every line that
names nothing downloaded is reported and counts as a failure. Exit status: 0 all files present, 1 some failed, 2 usage or refusal
(e.g. a large cohort without --yes and no terminal to ask on), 130 interrupted.`,
    )
    .action(async (target: string | undefined, f: Flags & { collectionId?: string[]; filter?: string; dir?: string; downloadDir?: string }, cmd: Command) => {
      // The downloader's memory floor was V8's young generation: its steady stream of short-lived
      // answers (resolve chunks, listings) made V8 grow it to 128 MB, twice what the process holds.
      // Kept at its initial size, the process peaks about 90 MB lower (a 20,000-series dry run: 155
      // against 245 MB; a real download: 206 against 306 MB), as fast. The growth factor is read at
      // each scavenge, so setting it now takes effect.
      setFlagsFromString('--semi-space-growth-factor=1');
      const collection = [...(f.collection ?? []), ...(f.collectionId ?? [])];
      // The idc CLI's positional argument: an existing file is a manifest, anything else collection ids.
      if (target !== undefined) {
        if (target.length < 260 && existsSync(target) && statSync(target).isFile()) {
          if (f.manifest) cmd.error('error: give the manifest either as the argument or with --manifest, not both', { exitCode: 2 });
          f.manifest = target;
        } else collection.push(...target.split(',').map((v) => v.trim()).filter(Boolean));
      }
      const filters = f.filters ?? f.filter;
      const sourceOfOut = cmd.getOptionValueSource('out');
      const out = sourceOfOut === 'default' && (f.downloadDir ?? f.dir) ? (f.downloadDir ?? f.dir)! : f.out;
      const cohortGiven = collection.length > 0 || (f.series?.length ?? 0) > 0 || filters !== undefined;
      if (f.manifest && cohortGiven) cmd.error('error: --manifest cannot be combined with --collection, --series or --filters', { exitCode: 2 });
      if (!f.manifest && !cohortGiven) cmd.error('error: say what to download: --manifest FILE, --collection ID, --series UID or --filters JSON', { exitCode: 2 });
      if (f.asSaved && !f.manifest) cmd.error('error: --as-saved applies to --manifest only', { exitCode: 2 });
      if (f.quiet && f.json) cmd.error('error: --quiet and --json exclude each other', { exitCode: 2 });
      const mode: Mode = f.json ? 'json' : f.quiet ? 'quiet' : process.stderr.isTTY ? 'tty' : 'plain';
      const opts: DownloadOptions = {
        manifest: f.manifest,
        asSaved: f.asSaved ?? false,
        collection,
        series: f.series,
        filters,
        api: f.api,
        release: f.release,
        source: f.source,
        endpoint: f.endpoint,
        out,
        layout: f.layout,
        dryRun: f.dryRun ?? false,
        jobs: f.jobs,
        yes: f.yes ?? false,
        checksum: f.checksum ?? false,
        confirmAbove: f.confirmAbove,
        retries: f.retries,
        // Knobs for tests: a short first backoff, small listing pages (to exercise paging).
        retryBaseMs: Number(process.env.IDQS_DOWNLOAD_RETRY_BASE_MS ?? 250) || 250,
        listPageSize: Math.min(1000, Number(process.env.IDQS_DOWNLOAD_LIST_PAGE ?? 1000) || 1000),
        // Small manifest chunks make a test manifest span many of them.
        resolveChunk: Math.min(RESOLVE_CHUNK, Number(process.env.IDQS_DOWNLOAD_RESOLVE_CHUNK ?? RESOLVE_CHUNK) || RESOLVE_CHUNK),
        interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY) && mode !== 'json',
      };
      const rep = new Reporter(mode);
      const ac = new AbortController();
      // Every transfer and backoff listens on the one signal.
      setMaxListeners(0, ac.signal);
      const onSignal = () => {
        if (ac.signal.aborted) process.exit(130);
        rep.warn('interrupted: stopping transfers (partial files are removed; a rerun resumes)');
        ac.abort(new Error('interrupted'));
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const summary = await runDownload(opts, rep, ac.signal);
        rep.end(summary);
        process.exitCode = summary.interrupted ? 130 : summary.failed > 0 ? 1 : 0;
      } catch (e) {
        if (e instanceof UsageError || e instanceof StoreUnreachable) {
          if (mode === 'json') process.stdout.write(JSON.stringify({ event: 'error', message: e.message }) + '\n');
          process.stderr.write(`error: ${e.message}\n`);
          // A mistake in the command is 2; a store out of reach is a failure of the run.
          process.exitCode = ac.signal.aborted ? 130 : e instanceof UsageError ? 2 : 1;
          return;
        }
        throw e;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
