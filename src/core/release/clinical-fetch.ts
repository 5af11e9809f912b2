// Fetch the per-collection clinical tables of a release from the public
// metadata bucket (s3://<bucket>/bigquery_export/idc_v<N>_clinical/<table>/*.parquet),
// anonymously, into <folder>/clinical/<table>/. Every part is checked against
// the listing's size and (single-part objects) its ETag's MD5. A table is
// staged under .clinical-partial/ and moved into clinical/ only when all its
// parts are there, so the build never sees half a table; verified parts stay
// staged after a failure, so a repeated fetch resumes. A table that cannot be
// fetched is named (not_fetched: clinical.<table>) and the others are kept.

import { DuckDBInstance } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { S3Client, type S3Object } from '../s3.ts';
import { lit } from '../data/sql.ts';
import { fetchTableParts, tablesOfListing, TABLE_NAME as TABLE } from './bucket-tables.ts';
import type { FetchEvent } from './fetch.ts';

export interface MetadataBucket {
  /** S3-compatible endpoint (path-style requests), e.g. https://s3.amazonaws.com. */
  endpoint: string;
  bucket: string;
}

export const METADATA_DEFAULTS: MetadataBucket = { endpoint: 'https://s3.amazonaws.com', bucket: 'idc-open-metadata' };

/** The bucket from the settings (IDQS_METADATA_S3_ENDPOINT, IDQS_METADATA_BUCKET; see src/config.ts), else the public one. */
export function metadataBucket(env: NodeJS.ProcessEnv = process.env): MetadataBucket {
  return {
    endpoint: env.IDQS_METADATA_S3_ENDPOINT || METADATA_DEFAULTS.endpoint,
    bucket: env.IDQS_METADATA_BUCKET || METADATA_DEFAULTS.bucket,
  };
}

export interface ClinicalFetchOptions {
  folder: string;
  /** Data release number (25 for index version 25.0.5). */
  releaseNumber: number;
  store: MetadataBucket;
  /** Relative path → checksum of what the folder holds; updated in place ("s3:<etag>:<size>" for clinical parts). */
  checksums: Record<string, string>;
  urls: Record<string, string>;
  /** The release files brought clinical_index: the bucket's copy (if any) is not needed. */
  haveIndex: boolean;
  concurrency?: number;
  retries?: number;
  retryBaseMs?: number;
  signal?: AbortSignal;
  emit: (e: FetchEvent) => void;
}

export interface ClinicalFetchResult {
  prefix: string;
  tables: string[];
  downloaded: string[];
  reused: string[];
  /** Tables that could not be fetched, with why; a whole-listing failure is table "*". */
  failed: { table: string; reason: string }[];
  bytes: number;
}

const STAGING = '.clinical-partial';

/** The release number a fetched idc_index.parquet carries (its idc_index_data_version key), for `latest`. */
export async function releaseNumberOfFolder(folder: string): Promise<number | null> {
  const file = join(folder, 'idc_index.parquet');
  if (!existsSync(file)) return null;
  const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await inst.connect();
  try {
    const r = await conn.runAndReadAll(`SELECT decode(value) FROM parquet_kv_metadata(${lit(file)}) WHERE decode(key) = 'idc_index_data_version'`);
    const v = r.getRows()[0]?.[0];
    const m = typeof v === 'string' ? /^(\d+)\./.exec(v) : null;
    return m ? Number(m[1]) : null;
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

/** Where a table's parts go: clinical/<table>/, except the bucket's clinical_index, which is a release table. */
function finalDir(folder: string, table: string): string {
  return table === 'clinical_index' ? join(folder, 'clinical_index') : join(folder, 'clinical', table);
}

function relDir(table: string): string {
  return table === 'clinical_index' ? 'clinical_index' : `clinical/${table}`;
}

export async function fetchClinical(o: ClinicalFetchOptions): Promise<ClinicalFetchResult> {
  const prefix = `bigquery_export/idc_v${o.releaseNumber}_clinical/`;
  const where = `s3://${o.store.bucket}/${prefix} at ${o.store.endpoint}`;
  const result: ClinicalFetchResult = { prefix: `s3://${o.store.bucket}/${prefix}`, tables: [], downloaded: [], reused: [], failed: [], bytes: 0 };
  const client = new S3Client({
    endpoint: o.store.endpoint,
    connections: Math.max(1, o.concurrency ?? 4),
    retries: o.retries ?? 5,
    retryBaseMs: o.retryBaseMs ?? 500,
    checksum: true,
    onRetry: (_what, attempt, err) => o.emit({ type: 'retry', message: `${err.message} (attempt ${attempt})` }),
  });
  const signal = o.signal ?? new AbortController().signal;
  try {
    let objects: S3Object[];
    try {
      objects = await client.list(o.store.bucket, prefix, signal);
    } catch (e) {
      if (signal.aborted) throw e;
      result.failed.push({ table: '*', reason: `cannot list ${where}: ${(e as Error).message} (a mirror: IDQS_METADATA_S3_ENDPOINT, IDQS_METADATA_BUCKET)` });
      o.emit({ type: 'warning', message: `clinical tables not fetched: ${result.failed[0]!.reason}` });
      return result;
    }
    const byTable = tablesOfListing(objects, prefix);
    if (o.haveIndex) byTable.delete('clinical_index');
    if (byTable.size === 0) {
      result.failed.push({ table: '*', reason: `${where} lists no <table>/*.parquet objects (is ${o.releaseNumber} a release with clinical data?)` });
      o.emit({ type: 'warning', message: `clinical tables not fetched: ${result.failed[0]!.reason}` });
      return result;
    }
    result.tables = [...byTable.keys()].sort();
    o.emit({ type: 'clinical', prefix: result.prefix, tables: result.tables.length, files: [...byTable.values()].reduce((n, p) => n + p.length, 0) });
    for (const parts of byTable.values()) for (const p of parts) o.emit({ type: 'length', file: p.key, bytes: p.size });
    const limit = pLimit(Math.max(1, o.concurrency ?? 4));
    await Promise.all(
      result.tables.map((table) =>
        limit(async () => {
          try {
            await fetchTable(o, client, table, byTable.get(table)!, result, signal);
          } catch (e) {
            if (signal.aborted) throw e;
            result.failed.push({ table, reason: (e as Error).message });
            o.emit({ type: 'warning', message: `clinical table ${table} not fetched: ${(e as Error).message}` });
          }
        }),
      ),
    );
    result.failed.sort((a, b) => a.table.localeCompare(b.table));
    return result;
  } finally {
    client.close();
  }
}

async function fetchTable(o: ClinicalFetchOptions, client: S3Client, table: string, parts: S3Object[], result: ClinicalFetchResult, signal: AbortSignal): Promise<void> {
  const place = { rel: relDir(table), dest: finalDir(o.folder, table), stage: join(o.folder, STAGING, table) };
  await fetchTableParts(o, client, parts, place, result, signal);
}

/** Staged parts of tables no longer listed (or all of them after a success): not kept forever. */
export async function dropStaging(folder: string, keep: string[]): Promise<void> {
  const dir = join(folder, STAGING);
  if (!existsSync(dir)) return;
  for (const t of await readdir(dir)) if (!keep.includes(t)) await rm(join(dir, t), { recursive: true, force: true });
  if ((await readdir(dir)).length === 0) await rm(dir, { recursive: true, force: true });
}

/** Where a clinical_index made from the fetched tables is kept (the bucket's own, when it has one, replaces the folder). */
export const DERIVED_INDEX = 'clinical_index/derived-from-tables.parquet';

/**
 * clinical_index for a release whose files and bucket lack it: one row per
 * clinical table and column, as the release's would list them (collection,
 * table, column), without labels or coded values, which only the release
 * knows. A table's collection is the longest collection_id of idc_index that
 * its name starts with (nlst_canc: nlst), else the collection most of its
 * dicom_patient_id values belong to, else null. Returns how many tables it
 * lists (0: no clinical table, and no derived index is kept).
 */
export async function deriveClinicalIndex(folder: string, releaseNumber: number, checksums: Record<string, string>): Promise<number> {
  const dest = join(folder, DERIVED_INDEX);
  const dir = join(folder, 'clinical');
  const tables = existsSync(dir) ? (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory() && TABLE.test(e.name)).map((e) => e.name).sort() : [];
  delete checksums[DERIVED_INDEX];
  if (tables.length === 0) {
    await rm(dest, { force: true });
    return 0;
  }
  const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await inst.connect();
  try {
    const index = join(folder, 'idc_index.parquet');
    await conn.run(`CREATE TABLE patients AS SELECT DISTINCT collection_id, PatientID FROM read_parquet(${lit(index)})`);
    await conn.run('CREATE TABLE derived (collection_id VARCHAR, table_name VARCHAR, short_table_name VARCHAR, "column" VARCHAR, column_label VARCHAR, "values" STRUCT(option_code VARCHAR, option_description VARCHAR)[])');
    for (const t of tables) {
      const src = `read_parquet(${lit(join(dir, t, '*.parquet'))})`;
      const columns = (await conn.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${src})`)).getRows().map((r) => String(r[0]));
      const byName = `SELECT collection_id FROM (SELECT DISTINCT collection_id FROM patients) WHERE ${lit(t)} = collection_id OR starts_with(${lit(t)}, collection_id || '_') ORDER BY length(collection_id) DESC LIMIT 1`;
      const byPatients = columns.includes('dicom_patient_id')
        ? `SELECT p.collection_id FROM (SELECT DISTINCT CAST(dicom_patient_id AS VARCHAR) AS id FROM ${src}) c JOIN patients p ON p.PatientID = c.id GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`
        : 'SELECT NULL';
      const collection = (await conn.runAndReadAll(`SELECT coalesce((${byName}), (${byPatients}))`)).getRows()[0]?.[0];
      await conn.run(
        `INSERT INTO derived SELECT ${lit(collection === null || collection === undefined ? null : String(collection))}, ${lit(`bigquery-public-data.idc_v${releaseNumber}_clinical.${t}`)}, ${lit(t)}, c, NULL, []
         FROM unnest(${lit(columns)}) u(c)`,
      );
    }
    await mkdir(join(folder, 'clinical_index'), { recursive: true });
    const tmp = `${dest}.tmp-${process.pid}`;
    await conn.run(`COPY (SELECT * FROM derived ORDER BY collection_id NULLS LAST, table_name, "column") TO ${lit(tmp)} (FORMAT parquet)`);
    await rename(tmp, dest);
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
  // In the folder's identity, so a database built before it was derived is rebuilt.
  checksums[DERIVED_INDEX] = `derived:${createHash('sha256').update(await readFile(dest)).digest('hex')}`;
  return tables.length;
}
