// `idqs data build`: the read-only database built from a dataset folder (ours or a real release) or a wheel, with
// the cohort index's file beside it; skipped when the dataset is unchanged.

import type { Command } from 'commander';
import { resolve } from 'node:path';
import { loadConfig } from '../../config.ts';
import { progressReporter } from '../progress.ts';
import { writeIndexFile } from '../release-fetch.ts';

export function registerDataBuild(data: Command): void {
  data
    .command('build')
    .description('Build the read-only DuckDB file from a dataset folder (ours or a real release) or an idc-index-data wheel; skipped when unchanged')
    .requiredOption('--from <dir|wheel>', 'folder with idc_index.parquet and the other index files, or a wheel (pip download idc-index-data==X --no-deps)')
    .requiredOption('--db <path>', 'database file to write (written aside, then renamed)')
    .option('--force', 'rebuild even when the dataset is unchanged')
    .action(async (o: { from: string; db: string; force?: boolean }) => {
      const { openRelease } = await import('../../core/release/open.ts');
      const { build } = await import('../../core/data/build.ts');
      const opened = await openRelease(resolve(o.from), { cacheDir: loadConfig().cacheDir });
      const r = await build({ from: opened.folder, db: resolve(o.db), force: o.force, versionHint: opened.index_version, onProgress: progressReporter('build') });
      for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
      await writeIndexFile(loadConfig(), resolve(o.db));
      process.stdout.write(JSON.stringify(r, null, 2) + '\n');
      if (!r.rebuilt) process.stderr.write('database is up to date with the dataset; nothing to do (use --force to rebuild)\n');
    });
}
