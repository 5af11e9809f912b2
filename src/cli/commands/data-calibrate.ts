// `idqs data calibrate`: the release profile the generator draws from, extracted from a real release (maintainers
// run it when a new release comes out).

import type { Command } from 'commander';
import { resolve } from 'node:path';

export function registerDataCalibrate(data: Command): void {
  data
    .command('calibrate')
    .description('Extract the release profile the generator draws from (maintainers: run when a new release comes out)')
    .requiredOption('--real <wheel-or-dir>', 'the real release: an idc-index-data wheel (.whl) or a folder of its Parquet files')
    .requiredOption('--out <file>', 'profile to write (the shipped one is data/synth/release-profile.json)')
    .action(async (o: { real: string; out: string }) => {
      const { calibrate } = await import('../../datagen/calibrate/calibrate.ts');
      const p = await calibrate({ real: resolve(o.real), out: resolve(o.out), onProgress: (m) => process.stderr.write(`${m}\n`) });
      process.stdout.write(JSON.stringify({ out: resolve(o.out), source: p.provenance.source, totals: p.totals }, null, 2) + '\n');
    });
}
