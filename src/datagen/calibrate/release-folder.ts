// A real release to calibrate against or compare with: a folder of Parquet
// files in the public layout, or an idc-index-data wheel, opened by the
// core's release reader (unpacked into a temporary folder, every file checked
// against the wheel's RECORD) and removed again when done.

import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openRelease as openCoreRelease } from '../../core/release/open.ts';

export interface ReleaseFolder {
  /** Folder that holds idc_index.parquet. */
  dir: string;
  /** What was opened, for reports (the wheel or folder given). */
  source: string;
  /** Remove what was unpacked (no-op for a folder). */
  close: () => Promise<void>;
}

/** Fail early, with what to give instead, when `path` cannot be a release (before any slow work). */
export function checkReleasePath(path: string): void {
  const p = resolve(path);
  if (!existsSync(p)) throw new Error(`${path} does not exist: give an idc-index-data wheel or a folder of release Parquet files`);
  if (statSync(p).isFile() && !p.endsWith('.whl')) throw new Error(`${path} is a file but not a wheel (.whl)`);
}

/** Open a release given as a wheel (.whl) or a folder with idc_index.parquet (also searched one level down). */
export async function openRelease(path: string): Promise<ReleaseFolder> {
  checkReleasePath(path);
  const p = resolve(path);
  if (statSync(p).isFile()) {
    const tmp = await mkdtemp(join(tmpdir(), 'idqs-wheel-'));
    try {
      const r = await openCoreRelease(p, { dir: join(tmp, 'release') });
      return { dir: r.folder, source: p, close: () => rm(tmp, { recursive: true, force: true }) };
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      throw e;
    }
  }
  for (const dir of [p, ...(await readdir(p, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => join(p, e.name))]) {
    if (existsSync(join(dir, 'idc_index.parquet'))) return { dir, source: p, close: async () => {} };
  }
  throw new Error(`${path} has no idc_index.parquet (nor a sub-folder with one): not a release folder`);
}
