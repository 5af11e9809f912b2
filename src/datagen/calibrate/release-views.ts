// Views over a release folder (real or generated, same layout) under fixed
// names, so calibration and comparison queries read either the same way.

import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lit } from '../../core/data/sql.ts';

/** View name -> file stem of the release layout. */
export const RELEASE_VIEWS: Record<string, string> = {
  r_index: 'idc_index',
  r_collections: 'collections_index',
  r_ar: 'analysis_results_index',
  r_versions: 'version_metadata_index',
  r_prior: 'prior_versions_index',
};

/** Create the r_* views over the Parquet files of `dir`; returns the names of the views whose file is absent. */
export async function attachRelease(conn: DuckDBConnection, dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (const [view, stem] of Object.entries(RELEASE_VIEWS)) {
    const file = join(dir, `${stem}.parquet`);
    if (!existsSync(file)) {
      missing.push(view);
      continue;
    }
    await conn.run(`CREATE OR REPLACE VIEW ${view} AS SELECT * FROM read_parquet(${lit(file)})`);
  }
  if (missing.includes('r_index')) throw new Error(`${dir} has no idc_index.parquet`);
  return missing;
}

/** Rows of a query as plain objects (JSON-compatible values). */
export async function query<T = Record<string, unknown>>(conn: DuckDBConnection, sql: string): Promise<T[]> {
  return (await conn.runAndReadAll(sql)).getRowObjectsJson() as unknown as T[];
}
