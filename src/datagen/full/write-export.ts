// Writes the full metadata of a generated release in the layout of IDC's
// BigQuery export, beside the index: bigquery_export/idc_v<N>/<table>/
// 000000000000.parquet, 000000000001.parquet, … (parts of about 8 MB, as
// BigQuery writes them). Rows are produced on one thread in a fixed order, so
// the same seed and scale give the same files.

import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { lit } from '../../core/data/sql.ts';
import { exportDir, FULL_TABLES } from '../../core/registry/full-metadata.ts';
import type { GenContext } from '../context.ts';
import { dicomAllQuery } from './dicom-all.ts';
import { buildMeasurementGroups, measurementGroupsQuery, qualitativeQuery, quantitativeQuery, segmentationsQuery } from './measurements.ts';
import { buildSeriesFacts } from './series-facts.ts';

const PART_BYTES = '8MB';

/** COPY a query into <dir>/<12-digit part>.parquet files; returns the rows written. */
async function copyParts(ctx: GenContext, query: string, dir: string, rowGroup: number): Promise<number> {
  const tmp = `${dir}.tmp`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(join(dir, '..'), { recursive: true });
  const r = await ctx.conn.runAndReadAll(`COPY (${query}) TO ${lit(tmp)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1,
    ROW_GROUP_SIZE ${rowGroup}, FILE_SIZE_BYTES '${PART_BYTES}', FILENAME_PATTERN 'part_{i}')`);
  const parts = (await readdir(tmp)).filter((f) => /^part_\d+\.parquet$/.test(f)).sort((a, b) => Number(a.slice(5, -8)) - Number(b.slice(5, -8)));
  await mkdir(dir, { recursive: true });
  for (const [i, f] of parts.entries()) await rename(join(tmp, f), join(dir, `${String(i).padStart(12, '0')}.parquet`));
  await rm(tmp, { recursive: true, force: true });
  return Number(r.getRows()[0]![0]);
}

export async function writeFullMetadata(ctx: GenContext, out: string): Promise<Record<string, number>> {
  const base = join(out, exportDir(ctx.plan.currentVersion));
  await buildSeriesFacts(ctx);
  await buildMeasurementGroups(ctx);
  const threads = Number((await ctx.conn.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0]![0]);
  const counts: Record<string, number> = {};
  await ctx.run(`SET threads = 1`);
  try {
    counts.dicom_all = await copyParts(ctx, dicomAllQuery(), join(base, 'dicom_all'), 30720);
    counts.segmentations = await copyParts(ctx, segmentationsQuery(), join(base, 'segmentations'), 122880);
    await ctx.run(`CREATE OR REPLACE TEMP TABLE fm_quant AS ${quantitativeQuery()}`);
    counts.quantitative_measurements = await copyParts(ctx, 'SELECT * FROM fm_quant', join(base, 'quantitative_measurements'), 122880);
    counts.qualitative_measurements = await copyParts(ctx, qualitativeQuery(), join(base, 'qualitative_measurements'), 122880);
    counts.measurement_groups = await copyParts(ctx, measurementGroupsQuery('fm_quant'), join(base, 'measurement_groups'), 30720);
  } finally {
    await ctx.run(`SET threads = ${threads}`);
  }
  for (const t of ['fm_quant', 'fm_groups', 'fm_sr', 'fm_series', 'fm_refs', 'fm_segseq', 'fm_segments']) await ctx.run(`DROP TABLE IF EXISTS ${t}`);
  if (Object.keys(counts).length !== FULL_TABLES.length) throw new Error('a full-metadata table was not written');
  return counts;
}
