// `idqs data generate`: a synthetic dataset written as Parquet files in the public release layout, plus dataset.json
// (and, with --objects, small DICOM files of some series).

import { InvalidArgumentError, type Command } from 'commander';
import { join, resolve } from 'node:path';
import { integer, positiveNumber } from '../args.ts';
import { progressReporter } from '../progress.ts';

export function registerDataGenerate(data: Command): void {
  data
    .command('generate')
    .description('Write a synthetic dataset as Parquet files in the public release layout, plus dataset.json')
    .requiredOption('--out <dir>', 'output folder (replaced atomically)')
    .option('--scale <s>', 'size relative to the real release (1.0 = its 86k patients and 1.04M series)', positiveNumber('scale'), 0.03)
    .option('--seed <n>', 'random seed; the same seed and scale give identical files', integer('seed'), 42)
    .option('--no-instances', 'skip the instance-level tables: the /v2 one and the full metadata (bigquery_export/idc_v<N>/: dicom_all, segmentations, measurements); much faster at large scales')
    .option('--objects <n>', 'also write small DICOM files of N series into <out>/objects/<bucket>/<crdc_series_uuid>/ (whole collections first)', integer('objects'))
    .action(async (o: { out: string; scale: number; seed: number; instances: boolean; objects?: number }) => {
      if (o.objects && !o.instances) throw new InvalidArgumentError('--objects needs the instance table; drop --no-instances.');
      const { generate } = await import('../../datagen/generate.ts');
      const m = await generate({ scale: o.scale, seed: o.seed, out: resolve(o.out), instances: o.instances, onProgress: progressReporter('generate') });
      const objects = o.objects ? await (await import('../../datagen/objects.ts')).writeObjects({ from: resolve(o.out), out: join(resolve(o.out), 'objects'), series: o.objects }) : undefined;
      process.stdout.write(JSON.stringify({ out: resolve(o.out), release: m.release, totals: m.totals, row_counts: m.row_counts, objects }, null, 2) + '\n');
    });
}
