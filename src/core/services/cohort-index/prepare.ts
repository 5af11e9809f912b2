// Writing the cohort index's file when a database is built (`idqs data build`,
// `idqs data fetch`), so the first start of a server loads it rather than
// building it. A database built before this existed gets its file at the
// first start instead (build.ts).

import { statSync } from 'node:fs';
import type { Config } from '../../../config.ts';
import { createContext } from '../../context.ts';
import { cohortIndex, indexOrigin } from './build.ts';
import { indexFileOf } from './file.ts';

export interface PreparedIndex {
  file: string;
  /** written; present (a valid file was already there); or why it was not written. */
  outcome: string;
  mb: number;
  seconds: number;
}

/** Builds the cohort index of `db` and writes its file, unless a valid one is there; null when IDQS_COHORT_INDEX=off. */
export async function prepareIndexFile(config: Config, db: string): Promise<PreparedIndex | null> {
  if (config.cohortIndex === 'off') return null;
  const started = performance.now();
  const ctx = await createContext(config, db);
  try {
    await cohortIndex(ctx);
    const o = indexOrigin(ctx)!;
    const outcome = o.loaded ? 'present' : await o.saved!;
    const file = indexFileOf(db);
    let mb = 0;
    try {
      mb = statSync(file).size / 1e6;
    } catch {
      /* not written: the outcome says why */
    }
    return { file, outcome, mb, seconds: (performance.now() - started) / 1000 };
  } finally {
    ctx.engine.close();
  }
}
