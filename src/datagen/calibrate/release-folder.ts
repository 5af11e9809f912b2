// A real release to calibrate against or compare with: a folder of Parquet
// files in the public layout, or an idc-index-data wheel, whose Parquet and
// schema files are unpacked into a temporary folder by the small ZIP reader
// below (stored and deflated entries, which is all a wheel holds).

import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { inflateRawSync } from 'node:zlib';

export interface ReleaseFolder {
  /** Folder that holds idc_index.parquet. */
  dir: string;
  /** What was opened, for reports (the wheel or folder given). */
  source: string;
  /** Remove what was unpacked (no-op for a folder). */
  close: () => Promise<void>;
}

interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
}

/** Entries of a ZIP archive from its central directory. */
function zipEntries(buf: Buffer): ZipEntry[] {
  // The end-of-central-directory record is within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a ZIP archive (no end of central directory)');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('corrupt ZIP central directory');
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    out.push({
      method: buf.readUInt16LE(p + 10),
      compressedSize: buf.readUInt32LE(p + 20),
      localOffset: buf.readUInt32LE(p + 42),
      name: buf.toString('utf8', p + 46, p + 46 + nameLen),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

function entryData(buf: Buffer, e: ZipEntry): Buffer {
  const p = e.localOffset;
  if (e.compressedSize === 0xffffffff || p === 0xffffffff) throw new Error(`ZIP entry ${e.name} needs ZIP64, which this reader does not support`);
  if (buf.readUInt32LE(p) !== 0x04034b50) throw new Error(`corrupt ZIP entry ${e.name}`);
  const start = p + 30 + buf.readUInt16LE(p + 26) + buf.readUInt16LE(p + 28);
  const raw = buf.subarray(start, start + e.compressedSize);
  if (e.method === 0) return raw;
  if (e.method === 8) return inflateRawSync(raw);
  throw new Error(`ZIP entry ${e.name} uses unsupported compression method ${e.method}`);
}

/** Unpack the Parquet and schema files of a wheel into `out`; returns the folder holding idc_index.parquet. */
export async function unpackWheel(wheel: string, out: string): Promise<string> {
  const buf = readFileSync(wheel);
  let indexDir: string | null = null;
  for (const e of zipEntries(buf)) {
    if (!/(\.(parquet|json|sql)|\/_version\.py)$/.test(e.name) || e.name.includes('..')) continue;
    const target = join(out, e.name);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, entryData(buf, e));
    if (e.name.endsWith('/idc_index.parquet') || e.name === 'idc_index.parquet') indexDir = dirname(target);
  }
  if (!indexDir) throw new Error(`${wheel} holds no idc_index.parquet: not an idc-index-data wheel`);
  return indexDir;
}

/** Fail early, with what to give instead, when `path` cannot be a release (before any slow work). */
export function checkReleasePath(path: string): void {
  const p = resolve(path);
  if (!existsSync(p)) throw new Error(`${path} does not exist: give an idc-index-data wheel or a folder of release Parquet files`);
  if (statSync(p).isFile() && !p.endsWith('.whl')) throw new Error(`${path} is a file but not a wheel (.whl)`);
}

/** Open a release given as a wheel (.whl) or a folder with idc_index.parquet (searched one level down). */
export async function openRelease(path: string): Promise<ReleaseFolder> {
  checkReleasePath(path);
  const p = resolve(path);
  if (statSync(p).isFile()) {
    const tmp = await mkdtemp(join(tmpdir(), 'idqs-wheel-'));
    try {
      return { dir: await unpackWheel(p, tmp), source: p, close: () => rm(tmp, { recursive: true, force: true }) };
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      throw e;
    }
  }
  if (existsSync(join(p, 'idc_index.parquet'))) return { dir: p, source: p, close: async () => {} };
  for (const e of await readdir(p, { withFileTypes: true })) {
    if (e.isDirectory() && existsSync(join(p, e.name, 'idc_index.parquet'))) return { dir: join(p, e.name), source: p, close: async () => {} };
  }
  throw new Error(`${path} has no idc_index.parquet (nor a sub-folder with one): not a release folder`);
}
