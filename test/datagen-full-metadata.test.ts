// The generated full metadata (bigquery_export/idc_v<N>/<table>/*.parquet
// beside the index), checked with SQL written here over the Parquet files:
// the export's layout, the registry's column types, one dicom_all row per
// instance of every series of the index with sizes adding up to the series',
// the same instances as the /v2 instance table, URLs of both stores, stacked
// slices, segments as seg_index lists them, and measurements that point at
// real series with values in their ranges. --no-instances writes none of it.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { testDataset } from './fixture.ts';
import { FULL_TABLES } from '../src/core/registry/full-metadata.ts';
import { generate } from '../src/datagen/generate.ts';
import { lit } from './sql-text.ts';

let inst: DuckDBInstance;
let c: DuckDBConnection;
let folder: string;
let exportDir: string;

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}
async function scalar(sql: string): Promise<number> {
  return Number(Object.values((await rows(sql))[0]!)[0]);
}
const parts = (t: string) => `read_parquet(${lit(join(exportDir, t, '*.parquet'))})`;

before(async () => {
  folder = (await testDataset()).folder;
  const release = (JSON.parse(readFileSync(join(folder, 'dataset.json'), 'utf8')) as { release: string }).release;
  exportDir = join(folder, 'bigquery_export', `idc_${release}`);
  inst = await DuckDBInstance.create(':memory:');
  c = await inst.connect();
  await c.run(`CREATE VIEW idx AS SELECT * FROM read_parquet(${lit(join(folder, 'idc_index.parquet'))})`);
  await c.run(`CREATE VIEW da AS SELECT * FROM ${parts('dicom_all')}`);
});
after(() => {
  c?.closeSync();
  inst?.closeSync();
});

test('every table is in the export layout, in numbered parts, with the rows dataset.json reports', async () => {
  const m = JSON.parse(readFileSync(join(folder, 'dataset.json'), 'utf8')) as { row_counts: Record<string, number> };
  for (const t of FULL_TABLES) {
    const files = readdirSync(join(exportDir, t.name)).sort();
    assert.ok(files.length > 0, t.name);
    files.forEach((f, i) => assert.equal(f, `${String(i).padStart(12, '0')}.parquet`, `${t.name} part ${i}`));
    const n = await scalar(`SELECT count(*) FROM ${parts(t.name)}`);
    assert.ok(n > 0, `${t.name} has rows`);
    assert.equal(m.row_counts[`full.${t.name}`], n, t.name);
  }
  assert.ok(readdirSync(join(exportDir, 'dicom_all')).length > 1, 'dicom_all is split into several parts');
});

test('the columns have the registry names and types (structs and lists where the real schema nests)', async () => {
  for (const t of FULL_TABLES) {
    const got = await rows(`SELECT column_name AS n, column_type AS t FROM (DESCRIBE SELECT * FROM ${parts(t.name)})`);
    const norm = (s: string) => s.replaceAll('"', '').replaceAll(' ', '').toUpperCase();
    assert.deepEqual(got.map((r) => r.n), t.columns.map((x) => x.name), t.name);
    got.forEach((r, i) => assert.equal(norm(String(r.t)), norm(t.columns[i]!.duckdb), `${t.name}.${String(r.n)}`));
  }
});

test('dicom_all has instanceCount rows for every series of the index, its sizes adding up to series_size_MB', async () => {
  const bad = await rows(`WITH a AS (SELECT SeriesInstanceUID, count(*) n, sum(instance_size) b, any_value(collection_id) c, any_value(PatientID) p,
      any_value(StudyInstanceUID) st, count(DISTINCT StudyInstanceUID) nst FROM da GROUP BY 1)
    SELECT i.SeriesInstanceUID, i.instanceCount, a.n FROM idx i FULL JOIN a USING (SeriesInstanceUID)
    WHERE a.n IS DISTINCT FROM i.instanceCount OR abs(a.b - i.series_size_MB * 1e6) > 1 OR a.c <> i.collection_id OR a.p <> i.PatientID
      OR a.st <> i.StudyInstanceUID OR a.nst <> 1 LIMIT 5`);
  assert.deepEqual(bad, []);
  assert.equal(await scalar(`SELECT count(*) - count(DISTINCT SOPInstanceUID) FROM da`), 0, 'SOPInstanceUID is unique');
  assert.equal(await scalar(`SELECT count(*) FROM da WHERE instance_size <= 0`), 0);
});

test('dicom_all holds the instances of the /v2 instance table and the file URLs of both stores', async () => {
  const v2 = `read_parquet(${lit(join(folder, 'v2', 'dicom_instances.parquet'))})`;
  const diff = await scalar(`SELECT count(*) FROM (SELECT SOPInstanceUID, crdc_instance_uuid, instance_size FROM da
    EXCEPT SELECT SOPInstanceUID, crdc_instance_uuid, instance_size FROM ${v2})`);
  assert.equal(diff, 0);
  assert.equal(await scalar(`SELECT count(*) FROM ${v2}`), await scalar(`SELECT count(*) FROM da`));
  const urls = await rows(`SELECT d.aws_url, d.gcs_url, d.aws_bucket, d.gcs_bucket, i.series_aws_url, d.crdc_instance_uuid
    FROM da d JOIN idx i USING (SeriesInstanceUID) WHERE d.aws_url <> replace(i.series_aws_url, '*', d.crdc_instance_uuid || '.dcm')
      OR d.gcs_url <> 'gs://' || d.gcs_bucket || '/' || i.crdc_series_uuid || '/' || d.crdc_instance_uuid || '.dcm' OR d.aws_bucket <> i.aws_bucket LIMIT 3`);
  assert.deepEqual(urls, []);
  assert.ok((await scalar(`SELECT count(DISTINCT gcs_bucket) FROM da`)) >= 1);
  assert.equal(await scalar(`SELECT count(*) FROM da WHERE license_short_name IS NULL OR license_url IS NULL`), 0);
});

test('CT slices are stacked: z rises by one spacing per instance, thickness as ct_index says', async () => {
  const ct = `read_parquet(${lit(join(folder, 'ct_index.parquet'))})`;
  const bad = await rows(`WITH s AS (SELECT SeriesInstanceUID, InstanceNumber::INTEGER k, ImagePositionPatient[3]::DOUBLE z, SliceThickness::DOUBLE t FROM da
      WHERE Modality = 'CT' AND ImagePositionPatient IS NOT NULL),
    d AS (SELECT SeriesInstanceUID, z - lag(z) OVER (PARTITION BY SeriesInstanceUID ORDER BY k) dz, t FROM s),
    g AS (SELECT SeriesInstanceUID, min(dz) lo, max(dz) hi, any_value(t) t FROM d GROUP BY 1)
    SELECT g.*, c.SliceThickness FROM g JOIN ${ct} c USING (SeriesInstanceUID)
    WHERE g.lo <= 0 OR g.hi - g.lo > 0.002 OR abs(g.t - c.SliceThickness) > 1e-9 OR g.hi > g.t + 1e-6 LIMIT 3`);
  assert.deepEqual(bad, []);
  const n = await scalar(`SELECT count(DISTINCT SeriesInstanceUID) FROM da WHERE Modality = 'CT' AND SliceThickness::DOUBLE < 1`);
  assert.ok(n > 0, 'some CT series have slices thinner than 1 mm');
});

test('segmentations list the segments seg_index counts, of the series it says they segment', async () => {
  const seg = `read_parquet(${lit(join(folder, 'seg_index.parquet'))})`;
  const bad = await rows(`WITH s AS (SELECT SeriesInstanceUID, count(DISTINCT SegmentNumber) n, list_sort(list_distinct(list(SegmentedPropertyType.CodeMeaning))) AS labels,
      any_value(segmented_SeriesInstanceUID) src, count(DISTINCT segmented_SeriesInstanceUID) nsrc FROM ${parts('segmentations')} GROUP BY 1)
    SELECT * FROM ${seg} x FULL JOIN s USING (SeriesInstanceUID)
    WHERE s.n IS DISTINCT FROM x.total_segments OR s.labels <> x.SegmentedPropertyType_CodeMeanings OR s.src <> x.segmented_SeriesInstanceUID OR s.nsrc <> 1 LIMIT 3`);
  assert.deepEqual(bad, []);
  // The same segments are in dicom_all's SegmentSequence of those instances.
  const a = await scalar(`SELECT count(*) FROM (SELECT SOPInstanceUID, unnest(SegmentSequence).SegmentNumber FROM da WHERE Modality = 'SEG')`);
  assert.equal(a, await scalar(`SELECT count(*) FROM ${parts('segmentations')}`));
});

test('measurements belong to SR series and point at image series of the index, with values in range', async () => {
  for (const t of ['quantitative_measurements', 'qualitative_measurements', 'measurement_groups']) {
    const orphans = await scalar(`SELECT count(*) FROM ${parts(t)} q LEFT JOIN idx i USING (SeriesInstanceUID) LEFT JOIN idx src ON src.SeriesInstanceUID = q.sourceSegmentedSeriesUID
      WHERE i.Modality IS DISTINCT FROM 'SR' OR src.SeriesInstanceUID IS NULL OR src.StudyInstanceUID <> i.StudyInstanceUID`);
    assert.equal(orphans, 0, t);
  }
  const ranges = await rows(`SELECT Quantity.CodeMeaning q, min(Value)::DOUBLE lo, max(Value)::DOUBLE hi, count(*) n FROM ${parts('quantitative_measurements')} GROUP BY 1`);
  const by = new Map(ranges.map((r) => [r.q, r]));
  assert.ok(Number(by.get('Sphericity')!.lo) > 0 && Number(by.get('Sphericity')!.hi) <= 1, 'sphericity in (0, 1]');
  assert.ok(Number(by.get('Volume')!.lo) > 0, 'volumes are positive');
  // Every group has its quantities, and measurement_groups one row per group.
  const groups = await scalar(`SELECT count(*) FROM (SELECT DISTINCT SeriesInstanceUID, measurementGroup_number FROM ${parts('quantitative_measurements')})`);
  assert.equal(await scalar(`SELECT count(*) FROM ${parts('measurement_groups')}`), groups);
  // Groups over a segmentation name a segment it has.
  const badSeg = await scalar(`SELECT count(*) FROM ${parts('measurement_groups')} g WHERE g.segmentationInstanceUID IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM ${parts('segmentations')} s WHERE s.SOPInstanceUID = g.segmentationInstanceUID AND s.SegmentNumber = g.segmentationSegmentNumber)`);
  assert.equal(badSeg, 0);
  assert.ok((await scalar(`SELECT count(*) FROM ${parts('measurement_groups')} WHERE segmentationInstanceUID IS NOT NULL`)) > 0);
});

test('--no-instances writes no full metadata', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'idqs-full-'));
  try {
    const m = await generate({ scale: 0.0005, seed: 3, out: join(tmp, 'd'), instances: false });
    assert.equal(existsSync(join(tmp, 'd', 'bigquery_export')), false);
    assert.equal(Object.keys(m.row_counts).filter((k) => k.startsWith('full.')).length, 0);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
