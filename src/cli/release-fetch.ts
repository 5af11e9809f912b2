// Fetching a real release from the command line: the --release, --source and --mirror flags, the one builder of
// the fetch's options that every command uses (so `idqs data fetch`, `idqs serve --release` and the others take
// the source from --source, then IDQS_RELEASE_SOURCE, then the default gcs), the fetch-and-build with its progress
// on stderr, and the cohort index's file written beside a built database.

import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { fetchReporter } from './fetch-progress.ts';
import { progressReporter } from './progress.ts';

export interface ReleaseFlags {
  release?: string;
  source?: string;
  mirror?: string;
}

/** --release, --source and --mirror, shared by serve, mcp and data fetch (serve and mcp also read them from the environment). */
export function releaseOptions(cmd: Command, withEnv: boolean): Command {
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

/** --tables; unset = all the source has (the wheel: the core tables, without a warning). */
function parseTables(v: string | undefined): 'all' | 'core' | string[] | undefined {
  if (v === undefined) return undefined;
  const s = v.trim().toLowerCase();
  return s === 'all' || s === 'core' ? s : v.split(',');
}

/**
 * The options of a release fetch, the same for every command: the release of --release (else IDQS_RELEASE, else
 * latest), from the source of --source (else IDQS_RELEASE_SOURCE, else gcs: config.ts holds that default).
 */
export async function releaseFetchOptions(cfg: Config, o: ReleaseFlags & { tables?: string; out?: string }) {
  const { parseRelease, parseSource } = await import('../core/release/sources.ts');
  return {
    release: parseRelease(o.release ?? cfg.release ?? 'latest'),
    source: parseSource(o.source ?? cfg.releaseSource),
    tables: parseTables(o.tables),
    cacheDir: cfg.cacheDir,
    out: o.out ? resolve(o.out) : undefined,
    mirror: o.mirror,
    env: process.env,
    metadata: { endpoint: cfg.metadataEndpoint, bucket: cfg.metadataBucket },
  };
}

/** Progress of a fetch and of the build after it, on stderr; `stop` ends the fetch's line. */
export function fetchAndBuildProgress() {
  const reporter = fetchReporter();
  let buildProgress: ReturnType<typeof progressReporter> | undefined;
  return {
    onEvent: reporter.onEvent,
    onBuildProgress: (s: string, d: number, t: number) => {
      buildProgress ??= progressReporter('building database');
      buildProgress(s, d, t);
    },
    stop: () => reporter.stop(),
  };
}

/** Fetch (when not cached) and build a real release, with progress on stderr; returns the database. */
export async function ensureReleaseDb(cfg: Config, o: ReleaseFlags & { tables?: string; out?: string }): Promise<string> {
  const progress = fetchAndBuildProgress();
  try {
    const r = await (await import('../core/release/fetch.ts')).ensureRelease({ ...(await releaseFetchOptions(cfg, o)), onEvent: progress.onEvent, onBuildProgress: progress.onBuildProgress });
    progress.stop();
    for (const w of r.build.warnings) process.stderr.write(`warning: ${w}\n`);
    return r.db;
  } finally {
    progress.stop();
  }
}

/** The cohort index's file beside a built database, so a server's first start loads it (said on stderr). */
export async function writeIndexFile(cfg: Config, db: string): Promise<void> {
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
