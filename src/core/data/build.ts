// Build the read-only DuckDB file from a folder of Parquet files in the public
// release layout (ours or a real release). The build is atomic (written aside,
// then renamed) and keyed by the dataset's identity, so an unchanged dataset is
// never rebuilt. Column names of older releases are normalised, extra columns
// and the real types of lists and structs kept, missing tables reported and
// skipped; the release is read from the files themselves.

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { TABLES, qi, type TableDef } from '../registry/tables.ts';
import { DEFAULT_STORES, type BibRecord, type DatasetManifest, type ReleaseProvenance, type Stores } from './manifest.ts';
import { lit } from './sql.ts';
import { pivotSelect } from '../registry/v2.ts';
import { sha256File } from '../release/open.ts';
import { removeDeadLeftovers, withCacheLock, type HeldLock } from '../cache-lock.ts';
import { indexFileOf } from '../services/cohort-index/file.ts';
import { fullMetadataIdentity, loadFullMetadata } from './full-metadata-load.ts';

/** Bump when the layout of the built database changes, to force rebuilds. */
export const BUILD_REVISION = 9;

export interface BuildReport {
  db: string;
  identity: string;
  rebuilt: boolean;
  /** Data release and index version served (read from the files when they say). */
  release: string;
  index_version: string;
  tables: { name: string; rows: number }[];
  /** Registry tables the folder lacks (normal for a release from the wheel: core tables only). */
  missing: string[];
  renamed: { table: string; from: string; to: string }[];
  /** Columns the release lacks, added empty (or derived) so queries written for newer releases run. */
  filled: { table: string; column: string }[];
  /** Columns of the files beyond the registry: kept as they are. */
  extra: { table: string; column: string }[];
  /** List and struct columns whose real type differs from the registry's: kept with the real type. */
  kept_types: { table: string; column: string; type: string }[];
  /** Parquet files of the folder that are not tables of the service (e.g. tcia_idc_subset): not loaded. */
  ignored: string[];
  /** What a user should look at: values lost to a type conversion, a release label that could not be read. */
  warnings: string[];
  clinical: number;
  /** Clinical tables the fetch could not bring or the build could not read ("*": none could be listed), and why: the rest is served. */
  clinical_failed: { table: string; reason: string }[];
  v2: string[];
  /** Tables of the full metadata (bigquery_export/idc_v<N>/<table>/) copied into the database. */
  full: string[];
  seconds: number;
}

export interface BuildOptions {
  from: string;
  db: string;
  force?: boolean;
  threads?: number;
  memoryLimit?: string;
  /** Index version the input's name gives (a wheel's), used when the files do not say it. */
  versionHint?: string | null;
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
  provenance?: ReleaseProvenance;
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
  // A fetched full-metadata table is recorded beside it, not in the release's own manifest.
  for (const line of await fullMetadataIdentity(dir)) h.update(`${line}\n`);
  return h.digest('hex').slice(0, 32);
}

/** Identity stored in a built database, or null when the file is absent or not ours. */
export async function builtIdentity(db: string): Promise<string | null> {
  if (!existsSync(db)) return null;
  // The sidecar written next to the database spares opening it at every start.
  const side = `${db}.identity`;
  if (existsSync(side) && (await stat(side)).mtimeMs >= (await stat(db)).mtimeMs) return (await readFile(side, 'utf8')).trim();
  return readDatasetKey(db, 'identity');
}

/** A value of idqs_meta.dataset in a built database (opened read-only), or null when absent or not ours. */
async function readDatasetKey(db: string, key: string): Promise<string | null> {
  let inst: DuckDBInstance | undefined;
  try {
    inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
    const c = await inst.connect();
    const r = await c.runAndReadAll(`SELECT value FROM idqs_meta.dataset WHERE key = ${lit(key)}`);
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

const NESTED = /\b(STRUCT|MAP|UNION)\(/;
/** A list whose element type pyarrow could not infer (every list empty): take the registry's type. */
const UNTYPED = /^"?NULL"?(\[\])*$/;

/** SELECT list mapping a Parquet file's columns onto the registry's table; `lossy` collects scalar casts to check. */
function projection(def: TableDef, cols: ParquetColumn[], report: BuildReport, lossy: { column: string; expr: string }[]): string {
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
      let expr: string;
      if (src.type === col.duckdb) expr = qi(src.name);
      else if (/^(DATE|TIMESTAMP)/.test(src.type) && col.duckdb === 'VARCHAR') expr = `strftime(${qi(src.name)}, '%Y-%m-%d')`;
      else if (NESTED.test(src.type) || (src.type.endsWith('[]') && !UNTYPED.test(src.type))) {
        // The real shape wins: casting a struct to the registry's would drop
        // fields a newer release added (v25's sources[].provenance).
        expr = qi(src.name);
        report.kept_types.push({ table: def.name, column: col.name, type: src.type });
      } else {
        expr = `TRY_CAST(${qi(src.name)} AS ${col.duckdb})`;
        if (!UNTYPED.test(src.type)) lossy.push({ column: col.name, expr: `${qi(src.name)} IS NOT NULL AND ${expr} IS NULL` });
      }
      items.push(`${expr} AS ${qi(col.name)}`);
      continue;
    }
    // Columns that older releases lack but that can be derived from others.
    const derived = deriveMissing(def.name, col.name, byName);
    if (!derived && col.optional) continue;
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

/** Columns of the index the build derives from series_aws_url when a release lacks them (an engine reading the files derives them the same way). */
export const DERIVED_FROM_AWS_URL: Readonly<Record<string, string>> = {
  series_cloud1_url: qi('series_aws_url'),
  crdc_series_uuid: `split_part(${qi('series_aws_url')}, '/', 4)`,
  aws_bucket: `split_part(${qi('series_aws_url')}, '/', 3)`,
};

function deriveMissing(table: string, column: string, have: Map<string, ParquetColumn>): string | null {
  if (table !== 'index' || !have.has('series_aws_url')) return null;
  return DERIVED_FROM_AWS_URL[column] ?? null;
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
  const identity = await datasetIdentity(opts.from);
  const report: BuildReport = {
    db: opts.db, identity, rebuilt: false, release: '', index_version: '', tables: [], missing: [], renamed: [], filled: [], extra: [],
    kept_types: [], ignored: [], warnings: [], clinical: 0, clinical_failed: [], v2: [], full: [], seconds: 0,
  };
  const upToDate = async () => {
    if (opts.force || (await builtIdentity(opts.db)) !== identity) return false;
    const meta = await builtMetadata(opts.db);
    report.release = meta?.release ?? '';
    report.index_version = meta?.index_version ?? '';
    // Still not served: the tables the fetch could not bring (the database is unchanged, so is what it lacks).
    report.clinical_failed = (await readManifest(opts.from))?.provenance?.clinical?.failed ?? [];
    report.seconds = (Date.now() - started) / 1000;
    return true;
  };
  if (await upToDate()) return report;
  // One process builds a database file; another that wanted the same build waits, then finds it done.
  return withCacheLock(opts.db, `building ${basename(opts.db)}`, async (held) => {
    if (await upToDate()) return report;
    removeDeadLeftovers(opts.db, '.building-');
    return buildLocked(opts, identity, report, started, held);
  });
}

async function buildLocked(opts: BuildOptions, identity: string, report: BuildReport, started: number, held: HeldLock): Promise<BuildReport> {
  const progress = opts.onProgress ?? (() => {});
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
    const total = TABLES.length + 4;
    let done = 0;
    const docs: { table: string; column: string; description: string }[] = [];
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
      const lossy: { column: string; expr: string }[] = [];
      const select = projection(def, cols, report, lossy);
      for (const l of lossy) {
        const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${source} WHERE ${l.expr}`)).getRows()[0]![0]);
        if (n > 0) report.warnings.push(`${def.name}.${l.column}: ${n} values could not be read as the registry's type and are empty in the database`);
      }
      const order = def.name === 'index' ? ' ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID' : '';
      await run(`CREATE TABLE ${qi(def.name)} AS SELECT ${select} FROM ${source}${order}`);
      const n = await conn.runAndReadAll(`SELECT count(*) FROM ${qi(def.name)}`);
      report.tables.push({ name: def.name, rows: Number(n.getRows()[0]![0]) });
      docs.push(...(await schemaDocs(opts.from, def)));
    }
    const known = new Set(TABLES.map((t) => `${t.file}.parquet`));
    report.ignored = (await readdir(opts.from)).filter((f) => f.endsWith('.parquet') && !known.has(f)).sort();
    progress('clinical', done++, total);
    report.clinical = await loadSchemaFolder(conn, join(opts.from, 'clinical'), 'clinical', true, [], report.clinical_failed);
    report.clinical_failed.push(...(manifest?.provenance?.clinical?.failed ?? []));
    for (const f of report.clinical_failed) report.warnings.push(`clinical table ${f.table === '*' ? '(all)' : f.table} is not served: ${f.reason}`);
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
    progress('full metadata', done++, total);
    const full = await loadFullMetadata(conn, opts.from);
    report.full = full.tables.map((t) => t.name);
    report.tables.push(...full.tables);
    docs.push(...full.docs);
    progress('metadata', done++, total);
    const meta = await datasetMetadata(conn, opts.from, manifest, report, opts.versionHint ?? null);
    report.release = meta.release;
    report.index_version = meta.index_version;
    await writeMetadata(conn, opts.from, identity, manifest, meta, docs, report);
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
  try {
    held.assertOwned();
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  await rm(`${opts.db}.identity`, { force: true });
  // The cohort index of the database being replaced holds its row ids: never to be used with the new one.
  await rm(indexFileOf(opts.db), { force: true });
  await rename(tmp, opts.db);
  await writeFile(`${opts.db}.identity`, `${identity}\n`);
  await rm(`${tmp}.wal`, { force: true });
  report.rebuilt = true;
  report.seconds = (Date.now() - started) / 1000;
  progress('done', 1, 1);
  return report;
}

/** The metadata stored in a built database, or null when the file is absent or not ours. */
export async function builtMetadata(db: string): Promise<DatasetMetadata | null> {
  if (!existsSync(db)) return null;
  return JSON.parse((await readDatasetKey(db, 'metadata')) ?? 'null') as DatasetMetadata | null;
}

/** "25.0.5-0-gf08b112" (git describe, as the release files carry it) → "25.0.5". */
export function indexVersionOf(describe: string): string {
  return describe.trim().replace(/-\d+-g[0-9a-f]+$/, '');
}

/**
 * Release label and index version: the dataset manifest when there is one,
 * else what the files say (the idc_index_data_version key every Parquet file
 * carries since 24.2.1, then the newest release of version_metadata_index).
 */
async function datasetMetadata(
  conn: DuckDBConnection,
  dir: string,
  manifest: DatasetManifest | null,
  report: BuildReport,
  hint: string | null,
): Promise<DatasetMetadata> {
  let release = manifest?.release;
  let indexVersion = manifest?.index_version;
  if (!indexVersion) {
    const kv = await conn.runAndReadAll(
      `SELECT decode(value) FROM parquet_kv_metadata(${lit(join(dir, 'idc_index.parquet'))}) WHERE decode(key) = 'idc_index_data_version'`,
    );
    const v = kv.getRows()[0]?.[0];
    if (typeof v === 'string' && /^\d+\./.test(v)) indexVersion = indexVersionOf(v);
  }
  indexVersion ||= hint ?? undefined;
  if (!release && indexVersion) release = `v${indexVersion.split('.')[0]}`;
  if (!release && report.tables.some((t) => t.name === 'version_metadata_index')) {
    const r = await conn.runAndReadAll(`SELECT max(idc_version) FROM version_metadata_index`);
    const n = r.getRows()[0]?.[0];
    if (n !== null && n !== undefined) release = `v${Number(n)}`;
  }
  if (!release) report.warnings.push('the files do not say which data release they are: served as release "unknown"');
  if (!indexVersion) report.warnings.push('the files carry no idc_index_data_version: the index version is served as "unknown"');
  return {
    release: release ?? 'unknown',
    index_version: indexVersion ?? 'unknown',
    synthetic: manifest?.synthetic ?? false,
    stores: manifest?.stores ?? DEFAULT_STORES,
    generator: manifest?.generator,
    provenance: manifest?.provenance,
  };
}

/** Descriptions of a table and its columns from the release's <file>_schema.json, when it ships one. */
async function schemaDocs(dir: string, def: TableDef): Promise<{ table: string; column: string; description: string }[]> {
  const file = join(dir, `${def.file}_schema.json`);
  if (!existsSync(file)) return [];
  try {
    const j = JSON.parse(await readFile(file, 'utf8')) as { table_description?: unknown; columns?: { name?: unknown; description?: unknown }[] };
    const out: { table: string; column: string; description: string }[] = [];
    if (typeof j.table_description === 'string' && j.table_description) out.push({ table: def.name, column: '', description: j.table_description });
    for (const c of Array.isArray(j.columns) ? j.columns : []) {
      if (typeof c?.name === 'string' && typeof c.description === 'string' && c.description) out.push({ table: def.name, column: c.name, description: c.description });
    }
    return out;
  } catch {
    return [];
  }
}

const SAFE_NAME = /^[A-Za-z0-9_]+$/;

/**
 * Load `<dir>/<name>.parquet` or `<dir>/<name>/*.parquet` into a schema. With
 * `failed`, a table whose files cannot be read is recorded there and skipped
 * (one damaged clinical table must not cost the release); else it is an error.
 */
async function loadSchemaFolder(
  conn: DuckDBConnection,
  dir: string,
  schema: string,
  foldersOnly: boolean,
  names: string[] = [],
  failed?: { table: string; reason: string }[],
): Promise<number> {
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
    try {
      await conn.run(`CREATE TABLE ${qi(schema)}.${qi(name)} AS SELECT * FROM ${source}`);
    } catch (e) {
      if (!failed) throw e;
      failed.push({ table: name, reason: `its Parquet files cannot be read: ${(e as Error).message.split('\n')[0]}` });
      continue;
    }
    names.push(name);
    n++;
  }
  return n;
}

async function writeMetadata(
  conn: DuckDBConnection,
  dir: string,
  identity: string,
  manifest: DatasetManifest | null,
  meta: DatasetMetadata,
  docs: { table: string; column: string; description: string }[],
  report: BuildReport,
): Promise<void> {
  await conn.run(`CREATE SCHEMA IF NOT EXISTS idqs_meta`);
  await conn.run(`CREATE TABLE idqs_meta.dataset (key VARCHAR PRIMARY KEY, value VARCHAR)`);
  // The build report too: what was loaded, kept, filled or missing stays visible after the build.
  const kept = { ...report, db: undefined, rebuilt: undefined, seconds: undefined };
  await conn.run(
    `INSERT INTO idqs_meta.dataset VALUES ('identity', ${lit(identity)}), ('metadata', ${lit(JSON.stringify(meta))}), ('manifest', ${lit(JSON.stringify(manifest))}), ('build_report', ${lit(JSON.stringify(kept))})`,
  );
  // The release's own descriptions, for columns the registry does not describe.
  await conn.run(`CREATE TABLE idqs_meta.docs (table_name VARCHAR, column_name VARCHAR, description VARCHAR)`);
  for (let i = 0; i < docs.length; i += 500) {
    await conn.run(`INSERT INTO idqs_meta.docs VALUES ${docs.slice(i, i + 500).map((d) => `(${lit(d.table)}, ${lit(d.column)}, ${lit(d.description)})`).join(', ')}`);
  }
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
