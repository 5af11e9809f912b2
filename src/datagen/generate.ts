// The synthetic dataset generator: from the plan (the release profile at a
// scale and seed), every table of the public release layout, generated in SQL
// by the table-family steps below and written as Parquet with dataset.json
// and bibliography.json. The same seed and scale give byte-identical files.

import { DuckDBInstance } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_STORES, type DatasetManifest } from '../core/data/manifest.ts';
import { lit } from '../core/data/sql.ts';
import { TABLES } from '../core/registry/tables.ts';
import { buildBibliography } from './bibliography.ts';
import { generateClinical } from './clinical/generate-clinical.ts';
import { macros, type GenContext } from './context.ts';
import { buildDerived } from './gen-derived.ts';
import { loadDimensions } from './gen-dimensions.ts';
import { buildIndex } from './gen-index.ts';
import { buildMetadata } from './gen-metadata.ts';
import { buildPathology } from './gen-pathology.ts';
import { buildRadiology } from './gen-radiology.ts';
import { generateSeries } from './gen-series.ts';
import { writeFullMetadata } from './full/write-export.ts';
import { generateV2 } from './generate-v2.ts';
import { makePlan } from './plan.ts';

export type { GenContext } from './context.ts';

export interface GenerateOptions {
  scale: number;
  seed: number;
  out: string;
  /** Also write the instance-level tables: the /v2 one and the full metadata (bigquery_export/idc_v<N>/<table>/, one dicom_all row per instance). */
  instances?: boolean;
  threads?: number;
  memoryLimit?: string;
  onProgress?: (step: string, done: number, total: number) => void;
}

/** Columns of a registry table, in registry order, as a SELECT list over a t_ table. */
function selectList(table: string, exclude: string[] = []): string {
  const def = TABLES.find((t) => t.name === table)!;
  return def.columns
    .filter((c) => !exclude.includes(c.name))
    .map((c) => `"${c.name}"::${c.duckdb} AS "${c.name}"`)
    .join(', ');
}

export const GENERATED_TABLES = [
  'index', 'prior_versions_index', 'collections_index', 'analysis_results_index', 'version_metadata_index',
  'sm_index', 'sm_instance_index', 'seg_index', 'ann_index', 'ann_group_index', 'rtstruct_index',
  'ct_index', 'mr_index', 'pt_index', 'contrast_index', 'volume_geometry_index', 'clinical_index',
] as const;

async function sha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Write a query to Parquet; returns the rows written (COPY reports them). Fast zstd: these files are rebuilt, not archived. */
async function copyOut(ctx: GenContext, source: string, file: string): Promise<number> {
  const r = await ctx.conn.runAndReadAll(`COPY (${source}) TO ${lit(file)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 122880)`);
  return Number(r.getRows()[0]![0]);
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if ((await stat(join(dir, rel))).isFile()) out.push(rel);
  }
  return out;
}

export async function generate(opts: GenerateOptions): Promise<DatasetManifest> {
  const plan = makePlan(opts.scale, opts.seed);
  const progress = opts.onProgress ?? (() => {});
  const tmpOut = `${opts.out}.partial-${process.pid}`;
  await rm(tmpOut, { recursive: true, force: true });
  await mkdir(join(tmpOut, 'clinical'), { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(opts.threads ?? 2),
    memory_limit: opts.memoryLimit ?? '3GB',
    preserve_insertion_order: 'true',
  });
  const conn = await instance.connect();
  const ctx: GenContext = { conn, plan, seed: opts.seed, run: async (sql) => void (await conn.run(sql)) };
  const steps = ['dimensions', 'series', 'index', 'derived', 'radiology', 'pathology', 'metadata', 'clinical', 'v2', 'full metadata', 'write'];
  let done = 0;
  const step = async (name: string, fn: () => Promise<void>) => {
    progress(name, done, steps.length);
    await fn();
    done++;
  };
  try {
    for (const m of macros(opts.seed)) await ctx.run(m);
    await step('dimensions', () => loadDimensions(ctx));
    await step('series', () => generateSeries(ctx));
    await step('index', () => buildIndex(ctx));
    await step('derived', () => buildDerived(ctx));
    await step('radiology', () => buildRadiology(ctx));
    await step('pathology', () => buildPathology(ctx));
    await step('metadata', () => buildMetadata(ctx));
    const clinical = { tables: [] as { name: string; rows: number }[] };
    await step('clinical', async () => {
      clinical.tables = await generateClinical(ctx, tmpOut);
    });
    const v2Files: Record<string, number> = {};
    await step('v2', async () => {
      Object.assign(v2Files, await generateV2(ctx, tmpOut, opts.instances ?? true));
    });
    const fullFiles: Record<string, number> = {};
    await step('full metadata', async () => {
      if (opts.instances ?? true) Object.assign(fullFiles, await writeFullMetadata(ctx, tmpOut));
    });
    const rowCounts: Record<string, number> = {};
    await step('write', async () => {
      for (const t of GENERATED_TABLES) {
        const def = TABLES.find((d) => d.name === t)!;
        const src = t === 'index' ? 't_series ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID' : `t_${t}`;
        const exclude = t === 'index' ? ['series_cloud1_url'] : [];
        rowCounts[t] = await copyOut(ctx, `SELECT ${selectList(t, exclude)} FROM ${src}`, join(tmpOut, `${def.file}.parquet`));
      }
      for (const c of clinical.tables) rowCounts[`clinical.${c.name}`] = c.rows;
      for (const [k, v] of Object.entries(v2Files)) rowCounts[`v2.${k}`] = v;
      for (const [k, v] of Object.entries(fullFiles)) rowCounts[`full.${k}`] = v;
    });
    const totals = (
      await conn.runAndReadAll(
        `SELECT count(DISTINCT collection_id), count(DISTINCT PatientID), count(DISTINCT StudyInstanceUID), count(*), sum(instanceCount), sum(series_size_MB) FROM t_series`,
      )
    ).getRows()[0]!;
    const bibliography = buildBibliography(plan);
    await writeFile(join(tmpOut, 'bibliography.json'), JSON.stringify(bibliography, null, 2) + '\n');
    const files = await listFiles(tmpOut);
    const checksums: Record<string, string> = {};
    for (const f of files) checksums[f] = await sha256(join(tmpOut, f));
    const manifest: DatasetManifest = {
      format: 'idqs-dataset/1',
      release: `v${plan.currentVersion}`,
      index_version: plan.profile.release.index_version,
      synthetic: true,
      generator: { name: 'idqs', seed: opts.seed, scale: opts.scale, instances: opts.instances ?? true },
      totals: {
        collections: Number(totals[0]),
        patients: Number(totals[1]),
        studies: Number(totals[2]),
        series: Number(totals[3]),
        instances: Number(totals[4]),
        size_TB: Number(totals[5]) / 1e6,
      },
      row_counts: rowCounts,
      stores: DEFAULT_STORES,
      checksums,
    };
    await writeFile(join(tmpOut, 'dataset.json'), JSON.stringify(manifest, null, 2) + '\n');
    await rm(opts.out, { recursive: true, force: true });
    await rename(tmpOut, opts.out);
    progress('done', steps.length, steps.length);
    return manifest;
  } catch (e) {
    await rm(tmpOut, { recursive: true, force: true });
    throw e;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
