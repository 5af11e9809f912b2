// Which data a command serves (serve, mcp, sql, resolve, data compare): --db / IDQS_DB, --release / IDQS_RELEASE,
// --demo / IDQS_DEMO, else the newest real release in the cache, else the latest one fetched from the first source
// that answers, else the generated demo data; and the one `data:` line on stderr that says which it is and how to
// get the other.

import { InvalidArgumentError } from 'commander';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { progressReporter } from './progress.ts';
import { ensureReleaseDb, fetchAndBuildProgress, type ReleaseFlags } from './release-fetch.ts';

export interface DataFlags extends ReleaseFlags {
  demo?: boolean;
}

export const say = (line: string) => void process.stderr.write(`${line}\n`);

/**
 * The database to serve: --db / IDQS_DB, --release / IDQS_RELEASE, --demo /
 * IDQS_DEMO (the generated dataset, no network), else the default: the newest
 * real release in the cache, else the latest one fetched from the first source
 * that answers, else the generated dataset. Says on stderr, in one line, which
 * data it is and how to get the other.
 */
export async function resolveDb(cfg: Config, db: string | undefined, rel: DataFlags = {}): Promise<string> {
  const explicit = db ?? cfg.db;
  const demo = rel.demo ?? cfg.demo;
  const named = [explicit ? 'a database (--db, IDQS_DB)' : null, (rel.release ?? cfg.release) ? 'a release (--release, IDQS_RELEASE)' : null, demo ? 'the demo data (--demo, IDQS_DEMO)' : null].filter(Boolean);
  if (named.length > 1) throw new InvalidArgumentError(`give one dataset, not ${named.join(' and ')}.`);
  if (explicit) return existingDb(explicit);
  if (rel.release ?? cfg.release) return ensureReleaseDb(cfg, rel);
  if (demo) {
    say(`data: the generated demo dataset (identifiers are not real), as asked (--demo or IDQS_DEMO); without it the real release is served`);
    return demoDb(cfg);
  }
  const { defaultRelease } = await import('../core/release/default-release.ts');
  const { parseSource } = await import('../core/release/sources.ts');
  const progress = fetchAndBuildProgress();
  try {
    const r = await defaultRelease({
      cacheDir: cfg.cacheDir,
      env: process.env,
      connectTimeoutMs: cfg.sourceTimeoutMs,
      // A source named on the command line (or IDQS_RELEASE_SOURCE) is the only one tried.
      sources: rel.source ? [parseSource(rel.source)] : undefined,
      onNote: (line) => {
        progress.stop();
        say(line);
      },
      onEvent: progress.onEvent,
      onBuildProgress: progress.onBuildProgress,
    });
    progress.stop();
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
    progress.stop();
  }
}

/** A database file named by --db or IDQS_DB, as an absolute path; a missing one says how to build it. */
function existingDb(file: string): string {
  const p = resolve(file);
  if (!existsSync(p)) throw new Error(`database ${p} does not exist; build one with "idqs data build --from DIR --db ${file}"`);
  return p;
}

/** A list given as one value separated by commas (a database file whose name has a comma is one file). */
export function listOf(v: string | null | undefined, isFile = false): string[] {
  if (!v) return [];
  if (isFile && existsSync(v)) return [v];
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * The databases to serve: several when --release (IDQS_RELEASE) or --db
 * (IDQS_DB) lists several, separated by commas (each release fetched and built
 * through the cache as a single one is); else the one resolveDb chooses.
 */
export async function resolveDbs(cfg: Config, db: string | undefined, rel: DataFlags = {}): Promise<string[]> {
  const dbs = listOf(db ?? cfg.db, true);
  const releases = listOf(rel.release ?? cfg.release);
  if (dbs.length <= 1 && releases.length <= 1) return [await resolveDb(cfg, db, rel)];
  if ((dbs.length > 0 && releases.length > 0) || (rel.demo ?? cfg.demo)) {
    throw new InvalidArgumentError('give the releases to serve either as databases (--db a.duckdb,b.duckdb) or as releases (--release 25.0.5,24.2.2), without --demo.');
  }
  const out = dbs.map(existingDb);
  for (const r of releases) out.push(await ensureReleaseDb(cfg, { ...rel, release: r }));
  return out;
}

/** The generated dataset, built on first use with its progress. */
export async function demoDb(cfg: Config): Promise<string> {
  const { ensureDefaultDataset } = await import('../datagen/dataset.ts');
  // Each phase's clock starts when that phase does.
  const reporters: Partial<Record<'generate' | 'build', ReturnType<typeof progressReporter>>> = {};
  const r = await ensureDefaultDataset(cfg.cacheDir, cfg.scale, cfg.seed, (phase, s, d, t) => {
    reporters[phase] ??= progressReporter(phase === 'generate' ? 'generating default dataset' : 'building database');
    reporters[phase](s, d, t);
  });
  return r.db;
}
