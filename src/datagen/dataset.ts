// The default dataset: generated on first use into the cache folder, built
// into a DuckDB file next to it, and reused on every later start.

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDeadLeftovers, withCacheLock } from '../core/cache-lock.ts';
import { build, builtIdentity, datasetIdentity, type BuildReport } from '../core/data/build.ts';
import { generate } from './generate.ts';

/** Bump when generated data changes, so caches of older generators are not reused. */
export const GENERATOR_VERSION = 5;

export interface DefaultDataset {
  folder: string;
  db: string;
}

export function defaultDatasetPaths(cacheDir: string, scale: number, seed: number): DefaultDataset {
  const label = `synthetic-g${GENERATOR_VERSION}-s${scale}-seed${seed}`;
  return { folder: join(cacheDir, 'datasets', label), db: join(cacheDir, 'db', `${label}.duckdb`) };
}

export type Progress = (phase: 'generate' | 'build', step: string, done: number, total: number) => void;

/** Ensure the default dataset exists and is built; cheap when it already is. */
export async function ensureDefaultDataset(
  cacheDir: string,
  scale: number,
  seed: number,
  progress: Progress = () => {},
): Promise<{ db: string; generated: boolean; report: BuildReport | null }> {
  const paths = defaultDatasetPaths(cacheDir, scale, seed);
  const haveData = existsSync(join(paths.folder, 'dataset.json'));
  if (haveData && existsSync(paths.db) && (await builtIdentity(paths.db)) === (await datasetIdentity(paths.folder))) {
    return { db: paths.db, generated: false, report: null };
  }
  await mkdir(join(cacheDir, 'datasets'), { recursive: true });
  await mkdir(join(cacheDir, 'db'), { recursive: true });
  let generated = false;
  if (!haveData) {
    // One process generates; the others wait for it and use its files (the build locks the database the same way).
    await withCacheLock(paths.folder, 'generating the default dataset', async () => {
      if (existsSync(join(paths.folder, 'dataset.json'))) return;
      removeDeadLeftovers(paths.folder, '.partial-');
      await generate({ scale, seed, out: paths.folder, instances: true, onProgress: (s, d, t) => progress('generate', s, d, t) });
      generated = true;
    });
  }
  const report = await build({ from: paths.folder, db: paths.db, onProgress: (s, d, t) => progress('build', s, d, t) });
  return { db: paths.db, generated, report };
}
