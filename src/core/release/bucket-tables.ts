// One table of a BigQuery export in the metadata bucket (<prefix>/<table>/
// *.parquet) brought into a folder: every part checked against the listing's
// size and (single-part objects) its ETag's MD5, staged under a folder of its
// own and moved into place only when all its parts are there, so nothing ever
// reads half a table; verified parts stay staged after a failure, so a repeated
// fetch resumes. Shared by the clinical fetch and the full-metadata fetch.

import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client, S3Object } from '../s3.ts';
import type { FetchEvent } from './fetch.ts';

export const TABLE_NAME = /^[A-Za-z0-9_]+$/;
export const PART_NAME = /^[A-Za-z0-9_.=-]+\.parquet$/;

/** What a folder records of a fetched part: its ETag and size. */
export function partChecksum(o: S3Object): string {
  return `s3:${o.etag ?? ''}:${o.size}`;
}

export const partName = (p: S3Object) => p.key.slice(p.key.lastIndexOf('/') + 1);

/** The parts of each table under a listed prefix (<prefix><table>/<part>.parquet; anything else is ignored). */
export function tablesOfListing(objects: S3Object[], prefix: string): Map<string, S3Object[]> {
  const byTable = new Map<string, S3Object[]>();
  for (const obj of objects) {
    const [table, part, ...rest] = obj.key.slice(prefix.length).split('/');
    if (!table || !part || rest.length > 0 || !TABLE_NAME.test(table) || !PART_NAME.test(part)) continue;
    byTable.set(table, [...(byTable.get(table) ?? []), obj]);
  }
  return byTable;
}

export interface TablePlace {
  /** The table's folder relative to the fetched folder (the keys of checksums). */
  rel: string;
  dest: string;
  stage: string;
}

export interface TableFetchState {
  /** Relative path → checksum of what the folder holds; updated in place. */
  checksums: Record<string, string>;
  urls: Record<string, string>;
  emit: (e: FetchEvent) => void;
}

/** Bytes a table still needs: its parts minus those in place or verified in staging. */
export async function bytesToFetch(state: TableFetchState, parts: S3Object[], place: TablePlace): Promise<number> {
  if (await unchanged(state, parts, place)) return 0;
  let n = 0;
  for (const p of parts) if (!(await stagedPart(join(place.stage, partName(p)), p))) n += p.size;
  return n;
}

async function unchanged(state: TableFetchState, parts: S3Object[], place: TablePlace): Promise<boolean> {
  const have = existsSync(place.dest) ? (await readdir(place.dest)).filter((f) => f.endsWith('.parquet')).sort() : [];
  return have.length === parts.length && parts.every((p) => state.checksums[`${place.rel}/${partName(p)}`] === partChecksum(p) && have.includes(partName(p)));
}

/** A part verified by an earlier, interrupted run (same size and ETag as listed now). */
async function stagedPart(file: string, p: S3Object): Promise<boolean> {
  const mark = `${file}.etag`;
  return existsSync(file) && existsSync(mark) && (await readFile(mark, 'utf8')) === partChecksum(p) && (await stat(file)).size === p.size;
}

export async function fetchTableParts(
  state: TableFetchState,
  client: S3Client,
  parts: S3Object[],
  place: TablePlace,
  result: { downloaded: string[]; reused: string[]; bytes: number },
  signal: AbortSignal,
  limit?: <T>(f: () => Promise<T>) => Promise<T>,
): Promise<void> {
  const { rel, dest, stage } = place;
  const o = state;
  // Unchanged since the last fetch (same parts, sizes and ETags): nothing to do.
  if (await unchanged(state, parts, place)) {
    for (const p of parts) {
      result.reused.push(`${rel}/${partName(p)}`);
      o.emit({ type: 'bytes', delta: p.size });
      o.emit({ type: 'file', file: `${rel}/${partName(p)}`, status: 'reused', bytes: 0 });
    }
    return;
  }
  // The table changed or is new: whatever copy the folder holds is not this release's; it is replaced (or gone on failure).
  for (const k of Object.keys(o.checksums)) if (k.startsWith(`${rel}/`)) delete o.checksums[k];
  await rm(dest, { recursive: true, force: true });
  await mkdir(stage, { recursive: true });
  for (const f of await readdir(stage)) if (!parts.some((p) => f === partName(p) || f === `${partName(p)}.etag`)) await rm(join(stage, f), { force: true });
  // Parts in parallel when a limit is given (one table of many parts), else one after another.
  const run = limit ?? (<T>(f: () => Promise<T>) => f());
  const one = async (p: S3Object) => {
    const file = join(stage, partName(p));
    const mark = `${file}.etag`;
    if (await stagedPart(file, p)) {
      o.emit({ type: 'bytes', delta: p.size });
      o.emit({ type: 'file', file: `${rel}/${partName(p)}`, status: 'reused', bytes: 0, resumed: p.size });
      result.reused.push(`${rel}/${partName(p)}`);
      return;
    }
    await rm(mark, { force: true });
    await client.download(p, `${file}.tmp-${process.pid}`, file, signal, (d) => o.emit({ type: 'bytes', delta: d }));
    await writeFile(mark, partChecksum(p));
    result.bytes += p.size;
    result.downloaded.push(`${rel}/${partName(p)}`);
    o.emit({ type: 'file', file: `${rel}/${partName(p)}`, status: 'downloaded', bytes: p.size });
  };
  if (limit) await Promise.all(parts.map((p) => run(() => one(p))));
  else for (const p of parts) await one(p);
  // Every part is there and verified: the table moves into place whole.
  for (const p of parts) await rm(join(stage, `${partName(p)}.etag`), { force: true });
  await mkdir(join(dest, '..'), { recursive: true });
  await rename(stage, dest);
  for (const p of parts) {
    o.checksums[`${rel}/${partName(p)}`] = partChecksum(p);
    o.urls[`${rel}/${partName(p)}`] = client.objectUrl(p.bucket, p.key);
  }
}
