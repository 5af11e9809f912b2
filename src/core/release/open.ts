// Open a release given as a folder or as the idc-index-data wheel (a zip) and
// hand back a folder of Parquet files in the release layout. A wheel is
// unpacked once (its tables, schema and SQL files only), every file checked
// against the sha256 of the wheel's RECORD; later calls reuse the folder.
// This is the one entry point for code that reads a real release
// (data build --from, data fetch --source pypi, data compare).

import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { removeDeadLeftovers, withCacheLock } from '../cache-lock.ts';

export interface OpenedRelease {
  /** Folder with idc_index.parquet and the other files of the release. */
  folder: string;
  kind: 'folder' | 'wheel';
  /** Version of the index files when the input says it (a wheel's name); null otherwise. */
  index_version: string | null;
}

export interface OpenOptions {
  /** Where to unpack a wheel; default <cacheDir>/releases/wheel-<sha256 prefix>. */
  dir?: string;
  cacheDir?: string;
}

/** What is unpacked from a wheel: tables and their sidecars, nothing executable. */
const WANTED = /^[A-Za-z0-9_]+(\.parquet|_schema\.json|\.sql)$/;

/** `idc_index_data-25.0.5-py3-none-any.whl` → 25.0.5. */
export function wheelVersion(file: string): string | null {
  const m = /^[A-Za-z0-9_.]+?-(\d[^-]*)-[^-]+-[^-]+-[^-]+\.whl$/.exec(basename(file));
  return m ? m[1]! : null;
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * A release from a folder (the files at its top, or in an unpacked wheel's
 * idc_index_data/ folder) or from a wheel file.
 */
export async function openRelease(input: string, opts: OpenOptions = {}): Promise<OpenedRelease> {
  if (!existsSync(input)) throw new Error(`${input} does not exist: give a release folder or an idc-index-data wheel (.whl)`);
  if ((await stat(input)).isDirectory()) {
    for (const folder of [input, join(input, 'idc_index_data')]) {
      if (existsSync(join(folder, 'idc_index.parquet'))) return { folder, kind: 'folder', index_version: null };
    }
    throw new Error(`${input} has no idc_index.parquet: not a release folder (nor an unpacked wheel)`);
  }
  if (!input.endsWith('.whl') && !input.endsWith('.zip')) {
    throw new Error(`${input} is neither a folder nor a wheel (.whl): download one with "pip download idc-index-data==<version> --no-deps"`);
  }
  const version = wheelVersion(input);
  let dir = opts.dir;
  if (!dir) {
    if (!opts.cacheDir) throw new Error('openRelease: a wheel needs opts.dir or opts.cacheDir to unpack into');
    dir = join(opts.cacheDir, 'releases', `wheel-${(await sha256File(input)).slice(0, 16)}`);
  }
  const target = dir;
  if (!existsSync(join(target, 'idc_index.parquet'))) {
    // One process unpacks; the others wait and find the folder there.
    await withCacheLock(target, `unpacking ${basename(input)}`, async () => {
      removeDeadLeftovers(target, '.partial-');
      if (!existsSync(join(target, 'idc_index.parquet'))) await unpackWheel(input, target);
    });
  }
  return { folder: dir, kind: 'wheel', index_version: version };
}

type Zip = yauzl.ZipFile;

function openZip(path: string): Promise<Zip> {
  return new Promise((resolve, reject) => yauzl.open(path, { lazyEntries: true, autoClose: false }, (err, zip) => (err ? reject(err) : resolve(zip))));
}

function entryStream(zip: Zip, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))));
}

async function entries(zip: Zip): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const out: yauzl.Entry[] = [];
    zip.on('entry', (e: yauzl.Entry) => {
      out.push(e);
      zip.readEntry();
    });
    zip.once('end', () => resolve(out));
    zip.once('error', reject);
    zip.readEntry();
  });
}

/** RECORD of a wheel: path → sha256 in hex (the file gives urlsafe base64). */
function parseRecord(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const [path, hash] = line.split(',');
    if (!path || !hash?.startsWith('sha256=')) continue;
    m.set(path, Buffer.from(hash.slice('sha256='.length), 'base64url').toString('hex'));
  }
  return m;
}

async function readEntry(zip: Zip, entry: yauzl.Entry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of await entryStream(zip, entry)) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Unpack the release files of a wheel into `dir` (atomically), checking each against RECORD. */
export async function unpackWheel(wheel: string, dir: string): Promise<string[]> {
  const zip = await openZip(wheel);
  const tmp = `${dir}.partial-${process.pid}`;
  try {
    const all = await entries(zip);
    const recordEntry = all.find((e) => /^[^/]+\.dist-info\/RECORD$/.test(e.fileName));
    const record = recordEntry ? parseRecord(await readEntry(zip, recordEntry)) : new Map<string, string>();
    const wanted = all.filter((e) => {
      const parts = e.fileName.split('/');
      return parts.length === 2 && !parts[0]!.endsWith('.dist-info') && WANTED.test(parts[1]!);
    });
    if (!wanted.some((e) => e.fileName.endsWith('/idc_index.parquet'))) {
      throw new Error(`${wheel} holds no idc_index.parquet: not an idc-index-data wheel`);
    }
    await rm(tmp, { recursive: true, force: true });
    await mkdir(tmp, { recursive: true });
    const names: string[] = [];
    for (const e of wanted) {
      const name = e.fileName.split('/')[1]!;
      const h = createHash('sha256');
      const src = await entryStream(zip, e);
      src.on('data', (c: Buffer) => h.update(c));
      await pipeline(src, createWriteStream(join(tmp, name)));
      const expected = record.get(e.fileName);
      const got = h.digest('hex');
      if (expected && expected !== got) {
        throw new Error(`${e.fileName} in ${wheel} does not match the sha256 of the wheel's RECORD (${got} ≠ ${expected}): the wheel is damaged; download it again`);
      }
      names.push(name);
    }
    await rm(dir, { recursive: true, force: true });
    await mkdir(join(dir, '..'), { recursive: true });
    await rename(tmp, dir);
    return names.sort();
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  } finally {
    zip.close();
  }
}
