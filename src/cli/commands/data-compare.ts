// `idqs data compare`: the distributions the generator is calibrated on, for a real release and a generated dataset
// side by side.

import type { Command } from 'commander';
import { resolve } from 'node:path';
import { loadConfig } from '../../config.ts';
import { resolveDb } from '../serving-policy.ts';

export function registerDataCompare(data: Command): void {
  data
    .command('compare')
    .description('Print the distributions the generator is calibrated on, for a real release and a generated dataset side by side')
    .requiredOption('--real <wheel-or-dir>', 'the real release: an idc-index-data wheel (.whl) or a folder of its Parquet files')
    .option('--from <dir>', 'generated dataset folder (default: the default dataset, generated on first use)')
    .option('--json', 'print the distributions as JSON instead of tables')
    .action(async (o: { real: string; from?: string; json?: boolean }) => {
      const { compare, formatComparison, checkReleasePath } = await import('../../datagen/calibrate/compare.ts');
      checkReleasePath(o.real);
      const cfg = loadConfig();
      let ours = o.from ? resolve(o.from) : undefined;
      if (!ours) {
        await resolveDb({ ...cfg, db: null, release: null }, undefined, { demo: true });
        ours = (await import('../../datagen/dataset.ts')).defaultDatasetPaths(cfg.cacheDir, cfg.scale, cfg.seed).folder;
      }
      const c = await compare({ real: resolve(o.real), ours });
      process.stdout.write(o.json ? JSON.stringify(c, null, 2) + '\n' : formatComparison(c));
    });
}
