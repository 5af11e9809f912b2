// Invariants of the generated dataset, checked on the built test database, and
// the import of a folder in the real release layout.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDataset, TEST_SCALE, TEST_SEED } from './fixture.ts';
import { build } from '../src/core/data/build.ts';
import { generate } from '../src/datagen/generate.ts';
import { lit } from '../src/core/data/sql.ts';

let inst: DuckDBInstance;
let c: DuckDBConnection;
let folder: string;

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}
async function scalar(sql: string): Promise<number> {
  return Number(Object.values((await rows(sql))[0]!)[0]);
}

before(async () => {
  const ds = await testDataset();
  folder = ds.folder;
  inst = await DuckDBInstance.create(ds.db, { access_mode: 'READ_ONLY' });
  c = await inst.connect();
});
after(() => {
  c.closeSync();
  inst.closeSync();
});

const UID = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$/;
const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('the dataset is of the expected size and has the real collections the service promises', async () => {
  assert.ok((await scalar('SELECT count(*) FROM "index"')) > 1500);
  for (const id of ['nlst', 'rider_pilot', 'tcga_luad', 'lidc_idri']) {
    assert.ok((await scalar(`SELECT count(*) FROM "index" WHERE collection_id = ${lit(id)}`)) > 0, id);
  }
});

test('segmentations, annotations and RT structures reference image series of index', async () => {
  for (const [table, col] of [
    ['seg_index', 'segmented_SeriesInstanceUID'],
    ['ann_index', 'referenced_SeriesInstanceUID'],
    ['rtstruct_index', 'referenced_SeriesInstanceUID'],
  ]) {
    assert.ok((await scalar(`SELECT count(*) FROM ${table}`)) > 0, `${table} is empty`);
    const dangling = await scalar(
      `SELECT count(*) FROM ${table} t LEFT JOIN "index" i ON i.SeriesInstanceUID = t.${col}
       WHERE i.SeriesInstanceUID IS NULL OR i.Modality IN ('SEG', 'SR', 'ANN', 'RTSTRUCT', 'RTPLAN', 'RTDOSE')`,
    );
    assert.equal(dangling, 0, `${table}.${col} must point to an image series`);
  }
  // Derived series live in the study of their source image series.
  assert.equal(
    await scalar(`SELECT count(*) FROM seg_index s JOIN "index" a ON a.SeriesInstanceUID = s.SeriesInstanceUID
      JOIN "index" b ON b.SeriesInstanceUID = s.segmented_SeriesInstanceUID WHERE a.StudyInstanceUID <> b.StudyInstanceUID OR a.PatientID <> b.PatientID`),
    0,
  );
});

test('each specialized index covers exactly the series of its modality (radiology tables: of its SOP class)', async () => {
  for (const [table, where] of [
    ['seg_index', "Modality = 'SEG'"], ['ann_index', "Modality = 'ANN'"], ['rtstruct_index', "Modality = 'RTSTRUCT'"], ['sm_index', "Modality = 'SM'"],
    // As in the public release, ct/mr/pt_index hold the series of the CT, MR and PET Image Storage SOP classes.
    ['ct_index', "Modality = 'CT' AND SOPClassUID = '1.2.840.10008.5.1.4.1.1.2'"],
    ['mr_index', "Modality = 'MR' AND SOPClassUID = '1.2.840.10008.5.1.4.1.1.4'"],
    ['pt_index', "Modality = 'PT' AND SOPClassUID = '1.2.840.10008.5.1.4.1.1.128'"],
  ]) {
    const diff = await scalar(`SELECT count(*) FROM (
      (SELECT SeriesInstanceUID FROM "index" WHERE ${where} EXCEPT SELECT SeriesInstanceUID FROM ${table})
      UNION ALL (SELECT SeriesInstanceUID FROM ${table} EXCEPT SELECT SeriesInstanceUID FROM "index" WHERE ${where}))`);
    assert.equal(diff, 0, `${table} vs ${where}`);
    assert.ok((await scalar(`SELECT count(*) FROM ${table}`)) > 0, `${table} is empty`);
    assert.equal(await scalar(`SELECT count(*) - count(DISTINCT SeriesInstanceUID) FROM ${table}`), 0, `${table} has one row per series`);
  }
});

test('instanceCount and series_size_MB agree with the instance rows', async () => {
  // Slide microscopy instances are listed in sm_instance_index.
  const bad = await rows(`SELECT i.SeriesInstanceUID, i.instanceCount, count(s.SOPInstanceUID) AS n, i.series_size_MB, sum(s.instance_size) / 1e6 AS mb
    FROM "index" i JOIN sm_instance_index s USING (SeriesInstanceUID) WHERE i.Modality = 'SM'
    GROUP BY ALL HAVING n <> i.instanceCount OR abs(mb - i.series_size_MB) > 1e-6 * i.series_size_MB`);
  assert.deepEqual(bad, []);
  if ((await scalar(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'v2' AND table_name = 'dicom_pivot'`)) > 0) {
    const badAll = await scalar(`SELECT count(*) FROM (SELECT i.SeriesInstanceUID FROM "index" i JOIN v2.dicom_pivot p USING (SeriesInstanceUID)
      GROUP BY i.SeriesInstanceUID, i.instanceCount, i.series_size_MB
      HAVING count(*) <> i.instanceCount OR abs(sum(p.instance_size) / 1e6 - i.series_size_MB) > 1e-6 * i.series_size_MB)`);
    assert.equal(badAll, 0);
    assert.equal(await scalar(`SELECT sum(instanceCount) FROM "index"`), await scalar(`SELECT count(*) FROM v2.dicom_pivot`));
  }
});

test('a patient belongs to exactly one collection, and subjects count the distinct patients', async () => {
  assert.equal(await scalar(`SELECT count(*) FROM (SELECT PatientID FROM "index" GROUP BY 1 HAVING count(DISTINCT collection_id) > 1)`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM (SELECT StudyInstanceUID FROM "index" GROUP BY 1 HAVING count(DISTINCT PatientID) > 1)`), 0);
  const bad = await rows(`SELECT c.collection_id, c.subjects, count(DISTINCT i.PatientID) AS n FROM collections_index c
    JOIN "index" i USING (collection_id) GROUP BY ALL HAVING n <> c.subjects`);
  assert.deepEqual(bad, []);
  assert.equal(
    await scalar(`SELECT count(*) FROM (SELECT DISTINCT collection_id FROM "index" EXCEPT SELECT collection_id FROM collections_index)`),
    0,
  );
});

test('UIDs are valid DICOM UIDs, unique, at most 64 characters; crdc ids are lowercase UUIDv4', async () => {
  const uids = await rows(`SELECT SeriesInstanceUID AS u FROM "index" UNION ALL SELECT DISTINCT StudyInstanceUID FROM "index"
    UNION ALL SELECT SOPInstanceUID FROM sm_instance_index UNION ALL SELECT AnnotationGroupUID FROM ann_group_index`);
  const seen = new Set<string>();
  for (const { u } of uids) {
    const s = String(u);
    assert.ok(s.length <= 64 && UID.test(s), `bad UID ${s}`);
    assert.ok(!seen.has(s), `duplicate UID ${s}`);
    seen.add(s);
  }
  const ids = await rows(`SELECT crdc_series_uuid AS u FROM "index" UNION ALL SELECT crdc_instance_uuid FROM sm_instance_index`);
  const seenIds = new Set<string>();
  for (const { u } of ids) {
    assert.match(String(u), UUID4);
    assert.ok(!seenIds.has(String(u)));
    seenIds.add(String(u));
  }
  assert.equal(await scalar(`SELECT count(*) FROM "index" WHERE series_aws_url <> 's3://' || aws_bucket || '/' || crdc_series_uuid || '/*' OR series_cloud1_url <> series_aws_url`), 0);
});

test('licenses, buckets and values follow the reference distributions', async () => {
  // The commercial-use-restricted bucket holds non-commercial data only (some older NC data is in the main bucket, as in the real release).
  assert.equal(await scalar(`SELECT count(*) FROM "index" WHERE aws_bucket = 'idc-open-data-cr' AND license_short_name NOT LIKE '%NC%'`), 0);
  assert.ok((await scalar(`SELECT count(*) FROM "index" WHERE aws_bucket = 'idc-open-data-cr'`)) > 0);
  const lic = await rows(`SELECT license_short_name AS l, count(*) AS n FROM "index" GROUP BY 1 ORDER BY n DESC`);
  assert.match(String(lic[0]!.l), /^CC BY [34]\.0$/);
  assert.ok(lic.some((r) => String(r.l).includes('NC')));
  assert.equal(await scalar(`SELECT count(*) FROM "index" WHERE Modality = 'SM' AND BodyPartExamined IS NOT NULL`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM "index" WHERE StudyDate IS NOT NULL AND NOT regexp_full_match(StudyDate, '\\d{4}-\\d{2}-\\d{2}')`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM "index" WHERE PatientAge IS NOT NULL AND NOT regexp_full_match(PatientAge, '\\d{3}Y')`), 0);
  const modalities = (await rows(`SELECT DISTINCT Modality AS m FROM "index"`)).map((r) => r.m);
  for (const m of ['CT', 'MR', 'SM', 'SEG', 'SR']) assert.ok(modalities.includes(m), m);
});

test('list columns are real lists with the registry element type', async () => {
  const types = await rows(`SELECT table_name, column_name, data_type FROM information_schema.columns
    WHERE table_schema = 'main' AND column_name IN ('SegmentedPropertyType_CodeMeanings', 'ROINames', 'ImageType', 'EchoTime', 'sources', 'values')`);
  const byName = new Map(types.map((r) => [`${r.table_name}.${r.column_name}`, String(r.data_type)]));
  assert.equal(byName.get('seg_index.SegmentedPropertyType_CodeMeanings'), 'VARCHAR[]');
  assert.equal(byName.get('rtstruct_index.ROINames'), 'VARCHAR[]');
  assert.equal(byName.get('ct_index.ImageType'), 'VARCHAR[]');
  assert.equal(byName.get('mr_index.EchoTime'), 'DOUBLE[]');
  assert.match(byName.get('collections_index.sources') ?? '', /^STRUCT\(source_id VARCHAR.*license STRUCT\(license_url VARCHAR.*\)\[\]$/);
  assert.ok((await scalar(`SELECT count(*) FROM seg_index WHERE list_contains(SegmentedPropertyType_CodeMeanings, SegmentedPropertyType_CodeMeanings[1])`)) > 0);
});

test('the same seed and scale give byte-identical files (every table, clinical and /v2 ones included)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'idqs-det-'));
  try {
    const m = await generate({ scale: TEST_SCALE, seed: TEST_SEED, out: join(dir, 'a'), instances: true });
    const original = JSON.parse(readFileSync(join(folder, 'dataset.json'), 'utf8')) as { checksums: Record<string, string> };
    assert.deepEqual(Object.keys(m.checksums).sort(), Object.keys(original.checksums).sort());
    for (const [file, sum] of Object.entries(m.checksums)) assert.equal(sum, original.checksums[file], file);
    for (const f of ['v2/dicom_instances.parquet', 'v2/dicom_series.parquet', 'v2/tcga_clinical_rel9.parquet', 'v2/tcga_biospecimen_rel9.parquet', 'clinical_index.parquet']) {
      assert.ok(f in m.checksums, f);
    }
    assert.ok(Object.keys(m.checksums).filter((f) => f.startsWith('clinical/')).length > 30);
    const other = await generate({ scale: TEST_SCALE, seed: TEST_SEED + 1, out: join(dir, 'b'), instances: false });
    assert.notEqual(other.checksums['idc_index.parquet'], m.checksums['idc_index.parquet']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a folder in the real release layout is imported: old column names, DATE StudyDate, extra columns, missing tables', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'idqs-real-'));
  const mem = await DuckDBInstance.create(':memory:');
  const m = await mem.connect();
  try {
    const src = (f: string) => lit(join(folder, f));
    const out = (f: string) => lit(join(dir, f));
    // idc_index as an older release: DATE-typed StudyDate, no aws_bucket/crdc_series_uuid/series_cloud1_url, one extra column.
    await m.run(`COPY (SELECT * EXCLUDE (StudyDate, aws_bucket, crdc_series_uuid), TRY_CAST(StudyDate AS DATE) AS StudyDate, 'x' AS extra_col
      FROM read_parquet(${src('idc_index.parquet')})) TO ${out('idc_index.parquet')} (FORMAT parquet)`);
    await m.run(`COPY (SELECT collection_name, collection_id, cancer_types AS CancerTypes, tumor_locations AS TumorLocations, subjects AS Subjects,
      species AS Species, sources AS Sources, supporting_data AS SupportingData, program_id AS Program, status AS Status, updated AS Updated,
      description AS Description FROM read_parquet(${src('collections_index.parquet')})) TO ${out('collections_index.parquet')} (FORMAT parquet)`);
    await m.run(`COPY (SELECT analysis_result_id, analysis_result_title, source_DOI, source_url, subjects AS Subjects, collections AS Collections,
      modalities AS Modalities, updated AS Updated, license_url, license_long_name, license_short_name, description AS Description, citation AS Citation
      FROM read_parquet(${src('analysis_results_index.parquet')})) TO ${out('analysis_results_index.parquet')} (FORMAT parquet)`);
    await m.run(`COPY (SELECT * FROM read_parquet(${src('seg_index.parquet')})) TO ${out('seg_index.parquet')} (FORMAT parquet)`);
    const db = join(dir, 'real.duckdb');
    const r = await build({ from: dir, db });
    assert.equal(r.rebuilt, true);
    assert.ok(r.missing.includes('ct_index') && r.missing.includes('clinical_index') && r.missing.includes('prior_versions_index'));
    assert.ok(!r.missing.includes('seg_index'));
    assert.ok(r.renamed.some((x) => x.table === 'collections_index' && x.from === 'CancerTypes' && x.to === 'cancer_types'));
    assert.ok(r.renamed.some((x) => x.table === 'analysis_results_index' && x.from === 'Citation' && x.to === 'citation'));
    assert.ok(r.extra.some((x) => x.table === 'index' && x.column === 'extra_col'));
    const b = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
    const bc = await b.connect();
    const got = (await bc.runAndReadAll(`SELECT StudyDate, crdc_series_uuid, aws_bucket, series_cloud1_url, series_aws_url, extra_col FROM "index" WHERE StudyDate IS NOT NULL LIMIT 1`)).getRowObjectsJS()[0]!;
    assert.match(String(got.StudyDate), /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(got.series_cloud1_url, got.series_aws_url);
    assert.equal(`s3://${got.aws_bucket}/${got.crdc_series_uuid}/*`, got.series_aws_url);
    assert.equal(got.extra_col, 'x');
    const cols = (await bc.runAndReadAll(`SELECT column_name FROM information_schema.columns WHERE table_name = 'collections_index'`)).getRows().map((x) => x[0]);
    assert.ok(cols.includes('cancer_types') && !cols.includes('CancerTypes'));
    const tables = (await bc.runAndReadAll(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'`)).getRows().map((x) => x[0]);
    assert.ok(!tables.includes('ct_index'));
    const meta = JSON.parse(String((await bc.runAndReadAll(`SELECT value FROM idqs_meta.dataset WHERE key = 'metadata'`)).getRows()[0]![0]));
    assert.equal(meta.synthetic, false);
    assert.equal(meta.stores.cloud2.endpoint, 'https://storage.googleapis.com');
    bc.closeSync();
    b.closeSync();
    // Unchanged dataset: not rebuilt.
    const again = await build({ from: dir, db });
    assert.equal(again.rebuilt, false);
    assert.equal(again.identity, r.identity);
  } finally {
    m.closeSync();
    mem.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
});
