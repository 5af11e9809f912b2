// Fetch a release's full metadata (dicom_all, segmentations, the measurement
// tables: FULL_TABLES) from the metadata bucket, s3://<bucket>/bigquery_export/
// idc_v<N>/<table>/*.parquet, into <folder>/bigquery_export/idc_v<N>/<table>/,
// the same layout. Listed first; the bytes still needed are checked against
// the free space of the folder's disk before the first byte (a refusal names
// both); parts download in parallel (bounded), each verified (size, ETag MD5),
// staged and moved into place per table (bucket-tables.ts), so a table is
// served whole or not at all and an interrupted fetch resumes. What the folder
// holds is recorded in full-metadata.json beside the tables. Runs under the
// cache lock of the export folder.

import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { withCacheLock } from '../cache-lock.ts';
import { exportDir, FULL_RECORD, FULL_TABLE_NAMES } from '../registry/full-metadata.ts';
import { S3Client, type S3Object } from '../s3.ts';
import { bytesToFetch, fetchTableParts, tablesOfListing, type TablePlace } from './bucket-tables.ts';
import type { MetadataBucket } from './clinical-fetch.ts';
import { ReleaseError, type FetchEvent } from './fetch.ts';

const STAGING = '.full-partial';

export interface FullFetchOptions {
  folder: string;
  releaseNumber: number;
  tables: string[];
  store: MetadataBucket;
  /** Free bytes where the tables go; default the disk's (statfs). IDQS_FREE_SPACE_BYTES replaces the probe (src/config.ts). */
  freeBytes?: (dir: string) => Promise<number>;
  concurrency?: number;
  retries?: number;
  retryBaseMs?: number;
  signal?: AbortSignal;
  emit?: (e: FetchEvent) => void;
}

export interface FullFetchResult {
  prefix: string;
  folder: string;
  tables: string[];
  downloaded: string[];
  reused: string[];
  bytes: number;
  /** Bytes the fetch still needed when it started (what the disk check compared). */
  needed_bytes: number;
  seconds: number;
}

interface FullRecord {
  release: number;
  checksums: Record<string, string>;
  urls: Record<string, string>;
}

/** full, or table names of FULL_TABLES separated by commas; anything else is refused with the list. */
export function parseFullTables(names: string[]): string[] {
  const out: string[] = [];
  for (const raw of names) {
    const n = raw.trim();
    if (n === 'full') out.push(...FULL_TABLE_NAMES);
    else if (FULL_TABLE_NAMES.includes(n)) out.push(n);
    else throw new ReleaseError(`unknown full-metadata table ${JSON.stringify(raw)}: use full or names among ${FULL_TABLE_NAMES.join(', ')}`);
  }
  return [...new Set(out)];
}

export async function diskFree(dir: string): Promise<number> {
  const s = await statfs(dir);
  return Number(s.bavail) * Number(s.bsize);
}

const gb = (n: number) => `${(n / 1e9).toFixed(n < 1e8 ? 3 : 1)} GB`;

async function readRecord(file: string, release: number): Promise<FullRecord> {
  if (!existsSync(file)) return { release, checksums: {}, urls: {} };
  const r = JSON.parse(await readFile(file, 'utf8')) as FullRecord;
  return r.release === release ? r : { release, checksums: {}, urls: {} };
}

export async function fetchFull(o: FullFetchOptions): Promise<FullFetchResult> {
  const started = Date.now();
  const rel = exportDir(o.releaseNumber);
  const base = join(o.folder, rel);
  await mkdir(base, { recursive: true });
  return withCacheLock(base, `fetching the full metadata of v${o.releaseNumber}`, () => fetchLocked(o, rel, base, started), o.signal);
}

async function fetchLocked(o: FullFetchOptions, rel: string, base: string, started: number): Promise<FullFetchResult> {
  const emit = o.emit ?? (() => {});
  const signal = o.signal ?? new AbortController().signal;
  const prefix = `${rel}/`;
  const where = `s3://${o.store.bucket}/${prefix} at ${o.store.endpoint}`;
  const client = new S3Client({
    endpoint: o.store.endpoint,
    connections: Math.max(1, o.concurrency ?? 4),
    retries: o.retries ?? 5,
    retryBaseMs: o.retryBaseMs ?? 500,
    checksum: true,
    onRetry: (_what, attempt, err) => emit({ type: 'retry', message: `${err.message} (attempt ${attempt})` }),
  });
  const recordFile = join(base, FULL_RECORD);
  const record = await readRecord(recordFile, o.releaseNumber);
  const state = { checksums: record.checksums, urls: record.urls, emit };
  const result: FullFetchResult = { prefix: `s3://${o.store.bucket}/${prefix}`, folder: base, tables: o.tables, downloaded: [], reused: [], bytes: 0, needed_bytes: 0, seconds: 0 };
  const place = (t: string): TablePlace => ({ rel: t, dest: join(base, t), stage: join(o.folder, STAGING, `v${o.releaseNumber}`, t) });
  try {
    const byTable = new Map<string, S3Object[]>();
    for (const t of o.tables) {
      let objects: S3Object[];
      try {
        objects = await client.list(o.store.bucket, `${prefix}${t}/`, signal);
      } catch (e) {
        if (signal.aborted) throw e;
        throw new ReleaseError(`cannot list ${where}: ${(e as Error).message} (a mirror: IDQS_METADATA_S3_ENDPOINT, IDQS_METADATA_BUCKET)`, { cause: e });
      }
      const parts = tablesOfListing(objects, prefix).get(t);
      if (!parts?.length) throw new ReleaseError(`${where} has no ${t}/*.parquet: is v${o.releaseNumber} a release IDC exported, and the bucket its export?`);
      byTable.set(t, parts.sort((a, b) => a.key.localeCompare(b.key)));
    }
    const all = [...byTable.values()].flat();
    // The disk check, before the first byte: what is still missing against what is free.
    for (const [t, parts] of byTable) result.needed_bytes += await bytesToFetch(state, parts, place(t));
    const free = await (o.freeBytes ?? diskFree)(base);
    emit({ type: 'full', prefix: result.prefix, tables: o.tables, files: all.length, bytes: all.reduce((n, p) => n + p.size, 0), needed: result.needed_bytes, free });
    if (result.needed_bytes > free) {
      throw new ReleaseError(
        `not enough disk space in ${base}: the full-metadata tables (${o.tables.join(', ')}) need ${gb(result.needed_bytes)}, ${gb(free)} is free; free some space or fetch fewer tables (--tables dicom_all,…)`,
      );
    }
    for (const parts of byTable.values()) for (const p of parts) emit({ type: 'length', file: `${rel}/${p.key.slice(prefix.length)}`, bytes: p.size });
    // Tables one after another (each moves into place whole), the parts of each in parallel.
    const limit = pLimit(Math.max(1, o.concurrency ?? 4));
    for (const [t, parts] of byTable) {
      await fetchTableParts(state, client, parts, place(t), result, signal, limit);
      // Recorded after each table, so a later failure keeps what is complete.
      await writeRecord(recordFile, record);
    }
    await rm(join(o.folder, STAGING, `v${o.releaseNumber}`), { recursive: true, force: true });
    await writeRecord(recordFile, record);
    result.seconds = (Date.now() - started) / 1000;
    return result;
  } finally {
    client.close();
  }
}

async function writeRecord(file: string, record: FullRecord): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, JSON.stringify(record, null, 2) + '\n');
  await rename(tmp, file);
}
