// The full metadata in the release's database: each table of FULL_TABLES whose
// Parquet parts are in the release folder (bigquery_export/idc_v<N>/<table>/,
// as `data fetch --tables full` or the generator leave them) is copied into a
// table of the same name when the database is built. Caller SQL and the
// schema routes then see it like any other table: read-only, under the
// engine's memory limits, and with no file access opened to the caller (a
// view over the files would need the sandbox to allow that folder, which
// DuckDB then allows for writing too).

import type { DuckDBConnection } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FULL_RECORD, FULL_TABLES } from '../registry/full-metadata.ts';
import { qi } from '../registry/tables.ts';
import { lit } from './sql.ts';

/** The export folders of a release folder: bigquery_export/idc_v<N>, newest first (not the _clinical ones). */
async function exportFolders(dir: string): Promise<string[]> {
  const root = join(dir, 'bigquery_export');
  if (!existsSync(root)) return [];
  const names = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() && /^idc_v\d+$/.test(e.name)).map((e) => e.name);
  return names.sort((a, b) => Number(b.slice(5)) - Number(a.slice(5))).map((n) => join(root, n));
}

const hasParts = async (folder: string) => existsSync(folder) && (await readdir(folder)).some((f) => f.endsWith('.parquet'));

/**
 * Lines for the dataset's identity: the fetch's record of each export folder
 * (its parts' checksums), so fetching a table rebuilds the database.
 */
export async function fullMetadataIdentity(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const folder of await exportFolders(dir)) {
    const record = join(folder, FULL_RECORD);
    if (existsSync(record)) out.push(`${folder.slice(dir.length + 1)}/${FULL_RECORD} ${createHash('sha256').update(await readFile(record)).digest('hex')}`);
  }
  return out;
}

export interface FullMetadataLoad {
  tables: { name: string; rows: number }[];
  docs: { table: string; column: string; description: string }[];
}

/** Copy the release's full-metadata tables (the newest export folder's) into the database being built. */
export async function loadFullMetadata(conn: DuckDBConnection, dir: string): Promise<FullMetadataLoad> {
  const out: FullMetadataLoad = { tables: [], docs: [] };
  const folder = (await exportFolders(dir))[0];
  if (!folder) return out;
  for (const def of FULL_TABLES) {
    const parts = join(folder, def.file);
    if (!(await hasParts(parts))) continue;
    // union_by_name: parts written at different times may order (or lack) columns differently.
    await conn.run(`CREATE TABLE ${qi(def.name)} AS SELECT * FROM read_parquet(${lit(join(parts, '*.parquet'))}, union_by_name = true)`);
    const n = await conn.runAndReadAll(`SELECT count(*) FROM ${qi(def.name)}`);
    out.tables.push({ name: def.name, rows: Number(n.getRows()[0]![0]) });
    out.docs.push({ table: def.name, column: '', description: def.description });
    for (const c of def.columns) out.docs.push({ table: def.name, column: c.name, description: c.description });
  }
  return out;
}
