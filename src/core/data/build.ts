// Build the read-only DuckDB file from a folder of Parquet files in the public
// release layout (ours or a real release). The build is atomic (written aside,
// then renamed) and keyed by the dataset's identity, so an unchanged dataset is
// never rebuilt. Column names of older releases are normalised, extra columns
// kept, missing tables reported and skipped.

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { TABLES, qi, type TableDef } from '../registry/tables.ts';
import { RELEASE_DEFAULTS, type BibRecord, type DatasetManifest, type Stores } from './manifest.ts';
import { lit } from './sql.ts';
import { pivotSelect } from '../registry/v2.ts';

/** Bump when the layout of the built database changes, to force rebuilds. */
export const BUILD_REVISION = 6;

export interface BuildReport {
  db: string;
  identity: string;
  rebuilt: boolean;
  tables: { name: string; rows: number }[];
  missing: string[];
  renamed: { table: string; from: string; to: string }[];
  filled: { table: string; column: string }[];
  extra: { table: string; column: string }[];
  clinical: number;
  v2: string[];
  seconds: number;
}

export interface BuildOptions {
  from: string;
  db: string;
  force?: boolean;
  threads?: number;
  memoryLimit?: string;
  onProgress?: (step: string, done: number, total: number) => void;
}

/** Older releases spelled these columns in PascalCase. */
const LEGACY_NAMES: Record<string, Record<string, string>> = {
  collections_index: {
    CancerTypes: 'cancer_types', TumorLocations: 'tumor_locations', Subjects: 'subjects', Species: 'species', Sources: 'sources',
    SupportingData: 'supporting_data', Program: 'program_id', Status: 'status', Updated: 'updated', Description: 'description',
  },
  analysis_results_index: {
    Subjects: 'subjects', Collections: 'collections', Modalities: 'modalities', Updated: 'updated', Description: 'description', Citation: 'citation',
  },
};

export interface DatasetMetadata {
  release: string;
  index_version: string;
  synthetic: boolean;
  stores: Stores;
  generator?: DatasetManifest['generator'];
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function parquetFiles(dir: string, prefix = ''): Promise<string[]> {
  if (!existsSync(join(dir, prefix))) return [];
  const out: string[] = [];
  for (const e of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await parquetFiles(dir, rel)));
    else if (e.name.endsWith('.parquet') || e.name === 'dataset.json' || e.name === 'bibliography.json') out.push(rel);
  }
  return out;
}

export async function readManifest(dir: string): Promise<DatasetManifest | null> {
  const p = join(dir, 'dataset.json');
  if (!existsSync(p)) return null;
  return JSON.parse(await readFile(p, 'utf8')) as DatasetManifest;
}

/**
 * Identity of a dataset folder: from the manifest's checksums when present
 * (cheap), else from the content of every file. Includes the build revision.
 */
export async function datasetIdentity(dir: string): Promise<string> {
  const manifest = await readManifest(dir);
  const h = createHash('sha256');
  h.update(`idqs-build-${BUILD_REVISION}\n`);
  if (manifest?.checksums) {
    for (const [f, sum] of Object.entries(manifest.checksums).sort(([a], [b]) => a.localeCompare(b))) h.update(`${f} ${sum}\n`);
  } else {
    for (const f of await parquetFiles(dir)) h.update(`${f} ${await sha256File(join(dir, f))}\n`);
  }
  return h.digest('hex').slice(0, 32);
}

/** Identity stored in a built database, or null when the file is absent or not ours. */
export async function builtIdentity(db: string): Promise<string | null> {
  if (!existsSync(db)) return null;
  // The sidecar written next to the database spares opening it at every start.
  const side = `${db}.identity`;
  if (existsSync(side) && (await stat(side)).mtimeMs >= (await stat(db)).mtimeMs) return (await readFile(side, 'utf8')).trim();
  let inst: DuckDBInstance | undefined;
  try {
    inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
    const c = await inst.connect();
    const r = await c.runAndReadAll(`SELECT value FROM idqs_meta.dataset WHERE key = 'identity'`);
    c.closeSync();
    return (r.getRows()[0]?.[0] as string | undefined) ?? null;
  } catch {
    return null;
  } finally {
    inst?.closeSync();
  }
}

interface ParquetColumn {
  name: string;
  type: string;
}

async function describe(conn: DuckDBConnection, source: string): Promise<ParquetColumn[]> {
  const r = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
  return r.getRowObjectsJson().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
}

/** SELECT list mapping a Parquet file's columns onto the registry's table. */
function projection(def: TableDef, cols: ParquetColumn[], report: BuildReport): string {
  const legacy = LEGACY_NAMES[def.name] ?? {};
  const byName = new Map<string, ParquetColumn>();
  for (const c of cols) {
    const canonical = legacy[c.name] ?? c.name;
    if (canonical !== c.name) report.renamed.push({ table: def.name, from: c.name, to: canonical });
    byName.set(canonical, c);
  }
  const used = new Set<string>();
  const items: string[] = [];
  for (const col of def.columns) {
    const src = byName.get(col.name);
    if (src) {
      used.add(src.name);
      const isDate = /^(DATE|TIMESTAMP)/.test(src.type) && col.duckdb === 'VARCHAR';
      const expr = isDate ? `strftime(${qi(src.name)}, '%Y-%m-%d')` : src.type === col.duckdb ? qi(src.name) : `TRY_CAST(${qi(src.name)} AS ${col.duckdb})`;
      items.push(`${expr} AS ${qi(col.name)}`);
      continue;
    }
    // Columns that older releases lack but that can be derived from others.
    const derived = deriveMissing(def.name, col.name, byName);
    if (!derived) report.filled.push({ table: def.name, column: col.name });
    items.push(`${derived ?? `NULL::${col.duckdb}`} AS ${qi(col.name)}`);
  }
  for (const c of cols) {
    if (!used.has(c.name)) {
      report.extra.push({ table: def.name, column: c.name });
      items.push(qi(c.name));
    }
  }
  return items.join(', ');
}

function deriveMissing(table: string, column: string, have: Map<string, ParquetColumn>): string | null {
  if (table !== 'index' || !have.has('series_aws_url')) return null;
  switch (column) {
    case 'series_cloud1_url':
      return qi('series_aws_url');
    case 'crdc_series_uuid':
      return `split_part(${qi('series_aws_url')}, '/', 4)`;
    case 'aws_bucket':
      return `split_part(${qi('series_aws_url')}, '/', 3)`;
    default:
      return null;
  }
}

/** Schemas of the built database; a file stem equal to one would make its catalog name ambiguous. */
export const RESERVED_DB_NAMES = ['main', 'clinical', 'v2', 'idqs_meta', 'index', 'system', 'temp', 'memory'];

export function checkDbFileName(db: string): void {
  const stem = basename(db).replace(/\.[^.]*$/, '').toLowerCase();
  if (RESERVED_DB_NAMES.includes(stem)) {
    throw new Error(`database file name ${JSON.stringify(basename(db))} clashes with a schema name (${RESERVED_DB_NAMES.join(', ')}); choose another file name`);
  }
}

export async function build(opts: BuildOptions): Promise<BuildReport> {
  const started = Date.now();
  checkDbFileName(opts.db);
  const progress = opts.onProgress ?? (() => {});
  const identity = await datasetIdentity(opts.from);
  const report: BuildReport = {
    db: opts.db, identity, rebuilt: false, tables: [], missing: [], renamed: [], filled: [], extra: [], clinical: 0, v2: [], seconds: 0,
  };
  if (!opts.force && (await builtIdentity(opts.db)) === identity) {
    report.seconds = (Date.now() - started) / 1000;
    return report;
  }
  if (!existsSync(join(opts.from, 'idc_index.parquet'))) {
    throw new Error(`${opts.from} has no idc_index.parquet: not a dataset folder in the release layout`);
  }
  const manifest = await readManifest(opts.from);
  const tmp = `${opts.db}.building-${process.pid}`;
  await rm(tmp, { force: true });
  await rm(`${tmp}.wal`, { force: true });
  const inst = await DuckDBInstance.create(tmp, { threads: String(opts.threads ?? 2), memory_limit: opts.memoryLimit ?? '4GB' });
  const conn = await inst.connect();
  const run = async (sql: string) => void (await conn.run(sql));
  try {
    const total = TABLES.length + 3;
    let done = 0;
    for (const def of TABLES) {
      progress(def.name, done++, total);
      const file = join(opts.from, `${def.file}.parquet`);
      const dir = join(opts.from, def.file);
      const source = existsSync(file)
        ? `read_parquet(${lit(file)})`
        : existsSync(dir) && (await parquetFiles(dir)).length > 0
          ? `read_parquet(${lit(join(dir, '*.parquet'))})`
          : null;
      if (!source) {
        report.missing.push(def.name);
        continue;
      }
      const cols = await describe(conn, source);
      const order = def.name === 'index' ? ' ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID' : '';
      await run(`CREATE TABLE ${qi(def.name)} AS SELECT ${projection(def, cols, report)} FROM ${source}${order}`);
      const n = await conn.runAndReadAll(`SELECT count(*) FROM ${qi(def.name)}`);
      report.tables.push({ name: def.name, rows: Number(n.getRows()[0]![0]) });
    }
    progress('clinical', done++, total);
    report.clinical = await loadSchemaFolder(conn, join(opts.from, 'clinical'), 'clinical', true);
    progress('v2', done++, total);
    await loadSchemaFolder(conn, join(opts.from, 'v2'), 'v2', false, report.v2);
    if (report.v2.includes('dicom_series') && report.v2.includes('dicom_instances')) {
      await run(`CREATE VIEW v2.dicom_pivot AS ${pivotSelect('v2.dicom_series', 'v2.dicom_instances')}`);
      report.v2.push('dicom_pivot');
      // Per-series instance counts and sizes: /v2 manifests coarser than
      // instances aggregate these instead of millions of instance rows.
      await run(
        `CREATE TABLE v2.series_totals AS SELECT "SeriesInstanceUID", count(*)::BIGINT AS instance_count, coalesce(sum(instance_size), 0)::BIGINT AS total_bytes
         FROM v2.dicom_instances GROUP BY 1`,
      );
      report.v2.push('series_totals');
    }
    progress('metadata', done++, total);
    await writeMetadata(conn, opts.from, identity, manifest);
    await run('CHECKPOINT');
  } catch (e) {
    conn.closeSync();
    inst.closeSync();
    await rm(tmp, { force: true });
    await rm(`${tmp}.wal`, { force: true });
    throw e;
  }
  conn.closeSync();
  inst.closeSync();
  await rm(`${opts.db}.identity`, { force: true });
  await rename(tmp, opts.db);
  await writeFile(`${opts.db}.identity`, `${identity}\n`);
  await rm(`${tmp}.wal`, { force: true });
  report.rebuilt = true;
  report.seconds = (Date.now() - started) / 1000;
  progress('done', 1, 1);
  return report;
}

const SAFE_NAME = /^[A-Za-z0-9_]+$/;

/** Load `<dir>/<name>.parquet` or `<dir>/<name>/*.parquet` into a schema. */
async function loadSchemaFolder(conn: DuckDBConnection, dir: string, schema: string, foldersOnly: boolean, names: string[] = []): Promise<number> {
  if (!existsSync(dir)) return 0;
  await conn.run(`CREATE SCHEMA IF NOT EXISTS ${qi(schema)}`);
  let n = 0;
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    let name: string;
    let source: string;
    if (e.isDirectory()) {
      if ((await parquetFiles(join(dir, e.name))).length === 0) continue;
      name = e.name;
      source = `read_parquet(${lit(join(dir, e.name, '*.parquet'))})`;
    } else if (!foldersOnly && e.name.endsWith('.parquet') && (await stat(join(dir, e.name))).isFile()) {
      name = e.name.slice(0, -'.parquet'.length);
      source = `read_parquet(${lit(join(dir, e.name))})`;
    } else continue;
    if (!SAFE_NAME.test(name)) continue;
    await conn.run(`CREATE TABLE ${qi(schema)}.${qi(name)} AS SELECT * FROM ${source}`);
    names.push(name);
    n++;
  }
  return n;
}

async function writeMetadata(conn: DuckDBConnection, dir: string, identity: string, manifest: DatasetManifest | null): Promise<void> {
  const meta: DatasetMetadata = {
    release: manifest?.release ?? RELEASE_DEFAULTS.release,
    index_version: manifest?.index_version ?? RELEASE_DEFAULTS.index_version,
    synthetic: manifest?.synthetic ?? false,
    stores: manifest?.stores ?? RELEASE_DEFAULTS.stores,
    generator: manifest?.generator,
  };
  await conn.run(`CREATE SCHEMA IF NOT EXISTS idqs_meta`);
  await conn.run(`CREATE TABLE idqs_meta.dataset (key VARCHAR PRIMARY KEY, value VARCHAR)`);
  await conn.run(`INSERT INTO idqs_meta.dataset VALUES ('identity', ${lit(identity)}), ('metadata', ${lit(JSON.stringify(meta))}), ('manifest', ${lit(JSON.stringify(manifest))})`);
  await conn.run(`CREATE TABLE idqs_meta.bibliography (doi VARCHAR PRIMARY KEY, record VARCHAR)`);
  const bibFile = join(dir, 'bibliography.json');
  if (existsSync(bibFile)) {
    const records = JSON.parse(await readFile(bibFile, 'utf8')) as BibRecord[];
    const seen = new Set<string>();
    for (let i = 0; i < records.length; i += 500) {
      const batch = records.slice(i, i + 500).filter((r) => r.doi && !seen.has(r.doi.toLowerCase()) && seen.add(r.doi.toLowerCase()));
      if (batch.length === 0) continue;
      await conn.run(`INSERT INTO idqs_meta.bibliography VALUES ${batch.map((r) => `(${lit(r.doi.toLowerCase())}, ${lit(JSON.stringify(r))})`).join(', ')}`);
    }
  }
}
