// The two real releases the tests of saved manifests, as_of and changes
// compare (test/real-release.json: the pinned one and an earlier one), got
// through the product's own fetch code (a no-op when .ci/run or an earlier run
// put them in the cache), and a DuckDB connection with views over their
// Parquet files read directly into tables (cur_index/cur_prior for the pinned release, prev_index/prev_prior for
// the earlier one): the tests' independent SQL never reads our database.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { defaultCacheDir } from '../src/config.ts';
import { lit } from '../src/core/data/sql.ts';
import { ensureRelease, type EnsuredRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';

export const PIN = JSON.parse(readFileSync(new URL('./real-release.json', import.meta.url), 'utf8')) as { release: string; source: string; previous: string };

/** IDQS_SKIP_REAL_DATA=1 (and nothing else) skips the real-release tests on purpose, saying so. */
export const SKIP_REAL: string | false = process.env.IDQS_SKIP_REAL_DATA ? 'IDQS_SKIP_REAL_DATA is set: the tests on the real releases are skipped on purpose' : false;
if (SKIP_REAL) process.stdout.write(`# ${SKIP_REAL}\n`);

export interface TwoReleases {
  current: EnsuredRelease;
  previous: EnsuredRelease;
  raw: DuckDBConnection;
  rows: (sql: string) => Promise<Record<string, unknown>[]>;
  close: () => void;
}

async function ensure(release: string): Promise<EnsuredRelease> {
  try {
    return await ensureRelease({ release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  } catch (e) {
    throw new Error(`the real release ${release} is not in the cache (${defaultCacheDir()}) and could not be fetched: ${(e as Error).message}. Fetch it with: idqs data fetch --source ${PIN.source} --release ${release}`, { cause: e });
  }
}

/** The pinned release alone, fetched and built (for benchmarks). */
export const pinnedRelease = () => ensure(PIN.release);

export async function twoReleases(): Promise<TwoReleases> {
  const current = await ensure(PIN.release);
  const previous = await ensure(PIN.previous);
  const inst = await DuckDBInstance.create(':memory:');
  const raw = await inst.connect();
  // Tables of the columns the tests read, loaded once: scanning the files for every subquery would take minutes.
  const INDEX = `collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, crdc_series_uuid, aws_bucket, Modality, series_size_MB,
    instanceCount, license_short_name, source_DOI, analysis_result_id, series_init_idc_version, series_revised_idc_version`;
  for (const [table, rel, file, cols] of [
    ['cur_index', current, 'idc_index', INDEX],
    ['cur_prior', current, 'prior_versions_index', '*'],
    ['prev_index', previous, 'idc_index', INDEX],
    ['prev_prior', previous, 'prior_versions_index', '*'],
  ] as const) {
    await raw.run(`CREATE TABLE ${table} AS SELECT ${cols} FROM read_parquet(${lit(join(rel.fetch.folder, `${file}.parquet`))})`);
  }
  return {
    current,
    previous,
    raw,
    rows: async (sql) => (await raw.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[],
    close: () => {
      raw.closeSync();
      inst.closeSync();
    },
  };
}
