// The per-collection clinical tables, their dictionary (clinical_index) and the
// /v2 tables, checked on the Parquet files of the test dataset.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_STORES, type DatasetManifest } from '../src/core/data/manifest.ts';
import { pivotSelect } from '../src/core/registry/v2.ts';
import { lit } from '../src/core/data/sql.ts';
import { TABLE_BY_NAME } from '../src/core/registry/tables.ts';
import { testDataset } from './fixture.ts';

const UID = '^(0|[1-9][0-9]*)(\\.(0|[1-9][0-9]*))*$';
const UUID4 = '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$';

/** The 59 image fields of the v2 manifests with the DuckDB types of dicom_pivot. */
const PIVOT: [string, string][] = [
  ['analysis_results_id', 'VARCHAR'], ['AnatomicRegionSequence', 'VARCHAR'], ['Apparent_Diffusion_Coefficient', 'DOUBLE'], ['aws_bucket', 'VARCHAR'],
  ['aws_url', 'VARCHAR'], ['BodyPartExamined', 'VARCHAR'], ['Calcification', 'VARCHAR'], ['CancerType', 'VARCHAR'], ['collection_id', 'VARCHAR'],
  ['crdc_instance_uuid', 'VARCHAR'], ['crdc_series_uuid', 'VARCHAR'], ['crdc_study_uuid', 'VARCHAR'], ['Diameter', 'DOUBLE'],
  ['FrameOfReferenceUID', 'VARCHAR'], ['gcs_bucket', 'VARCHAR'], ['gcs_url', 'VARCHAR'], ['illuminationType', 'VARCHAR'], ['instance_size', 'BIGINT'],
  ['Internal_structure', 'VARCHAR'], ['license_short_name', 'VARCHAR'], ['Lobular_Pattern', 'VARCHAR'], ['Malignancy', 'VARCHAR'],
  ['Manufacturer', 'VARCHAR'], ['ManufacturerModelName', 'VARCHAR'], ['Margin', 'VARCHAR'], ['max_TotalPixelMatrixColumns', 'BIGINT'],
  ['max_TotalPixelMatrixRows', 'BIGINT'], ['min_PixelSpacing', 'DOUBLE'], ['Modality', 'VARCHAR'], ['ObjectiveLensPower', 'BIGINT'],
  ['PatientID', 'VARCHAR'], ['primaryAnatomicStructure', 'VARCHAR'], ['Program', 'VARCHAR'], ['SamplesPerPixel', 'BIGINT'],
  ['SegmentAlgorithmName', 'VARCHAR'], ['SegmentAlgorithmType', 'VARCHAR'], ['SegmentedPropertyCategoryCodeSequence', 'VARCHAR'],
  ['SegmentedPropertyTypeCodeSequence', 'VARCHAR'], ['SegmentNumber', 'BIGINT'], ['SeriesDescription', 'VARCHAR'], ['SeriesInstanceUID', 'VARCHAR'],
  ['SeriesNumber', 'VARCHAR'], ['SliceThickness', 'DOUBLE'], ['SOPClassUID', 'VARCHAR'], ['SOPInstanceUID', 'VARCHAR'], ['source_DOI', 'VARCHAR'],
  ['Sphericity', 'VARCHAR'], ['Sphericity_quant', 'DOUBLE'], ['Spiculation', 'VARCHAR'], ['StudyDate', 'VARCHAR'], ['StudyDescription', 'VARCHAR'],
  ['StudyInstanceUID', 'VARCHAR'], ['Subtlety_score', 'VARCHAR'], ['Surface_area_of_mesh', 'DOUBLE'], ['tcia_species', 'VARCHAR'],
  ['tcia_tumorLocation', 'VARCHAR'], ['Texture', 'VARCHAR'], ['Volume', 'DOUBLE'], ['Volume_of_Mesh', 'DOUBLE'],
];

let out: string;
let manifest: DatasetManifest;
let inst: DuckDBInstance;
let c: DuckDBConnection;

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}
async function scalar(sql: string): Promise<number> {
  return Number(Object.values((await rows(sql))[0]!)[0]);
}
const file = (rel: string) => lit(join(out, rel));
const clinicalFile = (short: string) => file(`clinical/${short}/000000000000.parquet`);

before(async () => {
  // The Parquet files of the test dataset (generated once per run, with the instance table).
  out = (await testDataset()).folder;
  manifest = JSON.parse(readFileSync(join(out, 'dataset.json'), 'utf8')) as DatasetManifest;
  inst = await DuckDBInstance.create(':memory:', { threads: '2' });
  c = await inst.connect();
  for (const [view, rel] of [
    ['idx', 'idc_index.parquet'], ['ci', 'clinical_index.parquet'], ['sm_inst', 'sm_instance_index.parquet'],
    ['tcga_clin', 'v2/tcga_clinical_rel9.parquet'], ['tcga_bio', 'v2/tcga_biospecimen_rel9.parquet'],
  ] as const) {
    await c.run(`CREATE VIEW ${view} AS SELECT * FROM read_parquet(${file(rel)})`);
  }
  // dicom_pivot is stored normalised and exposed as a view, as the build does.
  await c.run(`CREATE VIEW dp AS ${pivotSelect(`read_parquet(${file('v2/dicom_series.parquet')})`, `read_parquet(${file('v2/dicom_instances.parquet')})`)}`);
});

after(() => {
  c?.closeSync();
  inst?.closeSync();
});

/** Clinical tables written, from the manifest. */
function clinicalTables(): string[] {
  return Object.keys(manifest.checksums)
    .filter((f) => f.startsWith('clinical/'))
    .map((f) => {
      assert.match(f, /^clinical\/[A-Za-z0-9_]+\/000000000000\.parquet$/);
      return f.split('/')[1]!;
    })
    .sort();
}

test('the clinical tables of the real collections exist, with rows and row counts in the manifest', async () => {
  const tables = clinicalTables();
  for (const t of ['nlst_canc', 'nlst_ctab', 'nlst_ctabc', 'nlst_prsn', 'nlst_screen', 'tcga_luad_clinical',
    'ea1141_demographics', 'ea1141_mri', 'ea1141_risk_model', 'ea1141_screening', 'ea1141_status_12mo', 'ea1141_status_6mo', 'ea1141_tomosynthesis']) {
    assert.ok(tables.includes(t), `missing clinical table ${t}`);
  }
  assert.ok(tables.length >= 30, `only ${tables.length} clinical tables`);
  // Rows of every file from the Parquet footers, in one query.
  const counted = new Map((await rows(`SELECT split_part(file_name, '/', -2) AS t, sum(num_rows) AS n
    FROM parquet_file_metadata(${file('clinical/*/*.parquet')}) GROUP BY 1`)).map((r) => [String(r.t), Number(r.n)]));
  for (const t of tables) {
    const n = counted.get(t) ?? 0;
    assert.ok(n > 0, `${t} is empty`);
    assert.equal(manifest.row_counts[`clinical.${t}`], n, `row count of ${t}`);
  }
  // Several rows per patient in the per-event tables; one per patient elsewhere.
  assert.ok((await scalar(`SELECT max(n) FROM (SELECT count(*) n FROM read_parquet(${clinicalFile('nlst_ctab')}) GROUP BY dicom_patient_id)`)) > 1);
  assert.equal(await scalar(`SELECT count(*) - count(DISTINCT dicom_patient_id || '/' || study_yr) FROM read_parquet(${clinicalFile('nlst_screen')})`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM read_parquet(${clinicalFile('nlst_screen')}) WHERE study_yr NOT IN (0, 1, 2)`), 0);
  assert.equal(await scalar(`SELECT count(*) - count(DISTINCT dicom_patient_id) FROM read_parquet(${clinicalFile('nlst_prsn')})`), 0);
  const nlst = await scalar(`SELECT count(DISTINCT PatientID) FROM idx WHERE collection_id = 'nlst'`);
  const canc = await scalar(`SELECT count(*) FROM read_parquet(${clinicalFile('nlst_canc')})`);
  assert.ok(canc >= 1 && canc < nlst * 0.25, `nlst_canc has ${canc} rows for ${nlst} participants`);
});

test('every clinical row references a patient of its own collection', async () => {
  const owner = new Map((await rows(`SELECT DISTINCT short_table_name, collection_id FROM ci`)).map((r) => [String(r.short_table_name), String(r.collection_id)]));
  for (const t of clinicalTables()) {
    const coll = owner.get(t);
    assert.ok(coll, `${t} is not in clinical_index`);
    const bad = await scalar(`SELECT count(*) FROM read_parquet(${clinicalFile(t)}) t
      WHERE t.dicom_patient_id IS NULL OR t.dicom_patient_id NOT IN (SELECT PatientID FROM idx WHERE collection_id = ${lit(coll)})`);
    assert.equal(bad, 0, `${t}: dicom_patient_id outside collection ${coll}`);
    assert.equal(await scalar(`SELECT count(*) FROM read_parquet(${clinicalFile(t)}) WHERE source_batch IS DISTINCT FROM 0`), 0, `${t}.source_batch`);
  }
});

test('clinical_index has the registry columns and exactly the columns of the clinical tables, in order', async () => {
  const described = (await rows(`DESCRIBE SELECT * FROM ci`)).map((r) => [String(r.column_name), String(r.column_type)]);
  assert.deepEqual(described, TABLE_BY_NAME.get('clinical_index')!.columns.map((col) => [col.name, col.duckdb]));
  const expected: string[] = [];
  const tables = clinicalTables();
  const owner = new Map((await rows(`SELECT DISTINCT short_table_name, collection_id FROM ci`)).map((r) => [String(r.short_table_name), String(r.collection_id)]));
  const ordered = [...tables].sort((a, b) => (owner.get(a)! < owner.get(b)! ? -1 : owner.get(a)! > owner.get(b)! ? 1 : a < b ? -1 : a > b ? 1 : 0));
  for (const t of ordered) {
    const cols = (await rows(`DESCRIBE SELECT * FROM read_parquet(${clinicalFile(t)})`)).map((r): [string, string] => [String(r.column_name), String(r.column_type)]);
    assert.deepEqual(cols.slice(0, 2), [['dicom_patient_id', 'VARCHAR'], ['source_batch', 'BIGINT']], t);
    for (const [name, type] of cols) {
      assert.ok(['VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN'].includes(type), `${t}.${name} is ${type}`);
      expected.push(`${t}.${name}`);
    }
  }
  const actual = (await rows(`SELECT short_table_name, "column" FROM ci`)).map((r) => `${String(r.short_table_name)}.${String(r.column)}`);
  assert.deepEqual(actual, expected);
  assert.equal(await scalar(`SELECT count(*) FROM ci WHERE table_name <> ${lit(`bigquery-public-data.idc_${manifest.release}_clinical.`)} || short_table_name`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM ci WHERE column_label IS NULL OR column_label = '' OR "values" IS NULL OR len("values") > 20`), 0);
  // Column names come in several styles and types are mixed.
  assert.ok((await scalar(`SELECT count(DISTINCT "column") FROM ci WHERE "column" <> lower("column")`)) > 5);
});

test('coded clinical values are all described in clinical_index', async () => {
  const coded = await rows(`SELECT short_table_name, "column", list_transform("values", lambda v: v.option_code) AS codes FROM ci WHERE len("values") > 0`);
  assert.ok(coded.length > 50, `only ${coded.length} coded columns`);
  // One query per table checks all of its coded columns.
  const byTable = new Map<string, Record<string, unknown>[]>();
  for (const r of coded) byTable.set(String(r.short_table_name), [...(byTable.get(String(r.short_table_name)) ?? []), r]);
  for (const [t, cols] of byTable) {
    const checks = cols.map((r) => {
      const col = `"${String(r.column)}"`;
      return `SELECT ${lit(String(r.column))} AS c, ${col}::VARCHAR AS v FROM tbl WHERE ${col} IS NOT NULL AND ${col}::VARCHAR NOT IN (${(r.codes as string[]).map((x) => lit(x)).join(', ')})`;
    });
    const bad = await rows(`WITH tbl AS (SELECT * FROM read_parquet(${clinicalFile(t)})) SELECT DISTINCT * FROM (${checks.join(' UNION ALL ')}) LIMIT 5`);
    assert.deepEqual(bad, [], `${t} has codes outside clinical_index`);
  }
  const stag = await rows(`SELECT unnest("values") AS v FROM ci WHERE short_table_name = 'nlst_canc' AND "column" = 'clinical_stag'`);
  const meanings = new Map(stag.map((r) => [(r.v as { option_code: string }).option_code, (r.v as { option_description: string }).option_description]));
  assert.equal(meanings.get('400'), 'Stage IV');
  assert.equal(meanings.get('110'), 'Stage IA');
  assert.equal(meanings.get('.M'), 'Missing');
});

test('some NLST CT patients have clinical stage IV', async () => {
  const n = await scalar(`SELECT count(DISTINCT c.dicom_patient_id) FROM read_parquet(${clinicalFile('nlst_canc')}) c
    JOIN idx i ON i.PatientID = c.dicom_patient_id AND i.collection_id = 'nlst' AND i.Modality = 'CT'
    WHERE c.clinical_stag = '400'`);
  assert.ok(n >= 1);
});

test('clinical values agree with the imaging (sex, age)', async () => {
  const mismatch = await scalar(`SELECT count(*) FROM read_parquet(${clinicalFile('tcga_luad_clinical')}) t
    JOIN (SELECT DISTINCT PatientID, PatientSex FROM idx) i ON i.PatientID = t.dicom_patient_id
    WHERE (t.gender = 'MALE') <> (i.PatientSex = 'M') OR (t.gender = 'FEMALE') <> (i.PatientSex = 'F')`);
  assert.equal(mismatch, 0);
  const prsn = await scalar(`SELECT count(*) FROM read_parquet(${clinicalFile('nlst_prsn')}) t
    JOIN (SELECT PatientID, min(PatientSex) AS sex, min(TRY_CAST(left(PatientAge, 3) AS INTEGER)) AS age FROM idx WHERE collection_id = 'nlst' GROUP BY 1) i
      ON i.PatientID = t.dicom_patient_id
    WHERE (i.sex = 'M' AND t.gender <> '1') OR (i.sex = 'F' AND t.gender <> '2') OR abs(i.age - t.age) > 4`);
  assert.equal(prsn, 0);
});

test('dicom_pivot has the 59 image fields and one row per instance of every series', async () => {
  const described = (await rows(`DESCRIBE SELECT * FROM dp`)).map((r) => [String(r.column_name), String(r.column_type)]);
  assert.deepEqual(described, PIVOT);
  const bad = await scalar(`SELECT count(*) FROM (SELECT SeriesInstanceUID, count(*) AS n, sum(instance_size) AS bytes FROM dp GROUP BY 1) p
    FULL JOIN idx i USING (SeriesInstanceUID)
    WHERE p.n IS DISTINCT FROM i.instanceCount OR i.series_size_MB IS NULL OR abs(p.bytes / 1e6 - i.series_size_MB) > 1e-9 * i.series_size_MB`);
  assert.equal(bad, 0);
  assert.equal(manifest.row_counts['v2.dicom_pivot'], await scalar(`SELECT count(*) FROM dp`));
  // Written series by series: the rows of a series are contiguous.
  assert.equal(
    await scalar(`SELECT count(*) FROM (SELECT SeriesInstanceUID <> lag(SeriesInstanceUID) OVER (ORDER BY rn) AS change
      FROM (SELECT row_number() OVER () AS rn, SeriesInstanceUID FROM dp)) WHERE change IS DISTINCT FROM false`),
    await scalar(`SELECT count(*) FROM idx`),
  );
  assert.equal(await scalar(`SELECT count(*) FROM dp`), await scalar(`SELECT sum(instanceCount) FROM idx`));
});

test('dicom_pivot identifiers and URLs are well formed', async () => {
  const r = (await rows(`SELECT count(*) - count(DISTINCT SOPInstanceUID) AS dup,
      count(*) FILTER (WHERE SOPInstanceUID IS NULL OR NOT regexp_full_match(SOPInstanceUID, ${lit(UID)}) OR length(SOPInstanceUID) > 64) AS bad_uid,
      count(*) FILTER (WHERE crdc_instance_uuid IS NULL OR NOT regexp_full_match(crdc_instance_uuid, ${lit(UUID4)})) AS bad_uuid,
      count(*) - count(DISTINCT crdc_instance_uuid) AS dup_uuid,
      count(*) FILTER (WHERE FrameOfReferenceUID IS NOT NULL AND (NOT regexp_full_match(FrameOfReferenceUID, ${lit(UID)}) OR length(FrameOfReferenceUID) > 64)) AS bad_for,
      count(*) FILTER (WHERE aws_url <> 's3://' || aws_bucket || '/' || crdc_series_uuid || '/' || crdc_instance_uuid || '.dcm') AS bad_aws,
      count(*) FILTER (WHERE gcs_url <> 'gs://' || gcs_bucket || '/' || crdc_series_uuid || '/' || crdc_instance_uuid || '.dcm') AS bad_gcs,
      count(*) FILTER (WHERE NOT regexp_full_match(crdc_study_uuid, ${lit(UUID4)})) AS bad_study
    FROM dp`))[0]!;
  for (const [k, v] of Object.entries(r)) assert.equal(Number(v), 0, k);
  for (const [aws, gcs] of (await rows(`SELECT DISTINCT aws_bucket, gcs_bucket FROM dp`)).map((x): [string, string] => [String(x.aws_bucket), String(x.gcs_bucket)])) {
    assert.equal(gcs, DEFAULT_STORES.cloud2.bucket_map[aws], `gcs bucket of ${aws}`);
  }
  // Series-level values agree with the index.
  assert.equal(await scalar(`SELECT count(*) FROM dp p JOIN idx i USING (SeriesInstanceUID)
    WHERE p.StudyInstanceUID <> i.StudyInstanceUID OR p.PatientID <> i.PatientID OR p.crdc_series_uuid <> i.crdc_series_uuid
      OR p.Modality <> i.Modality OR p.collection_id <> i.collection_id OR p.aws_bucket <> i.aws_bucket`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM (SELECT StudyInstanceUID FROM dp GROUP BY 1 HAVING count(DISTINCT crdc_study_uuid) > 1)`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM dp WHERE Modality IN ('SEG', 'SR', 'ANN', 'RTSTRUCT', 'RTPLAN') AND FrameOfReferenceUID IS NOT NULL`), 0);
  assert.ok((await scalar(`SELECT count(*) FROM dp WHERE Modality = 'CT' AND SliceThickness IS NOT NULL`)) > 0);
  assert.ok((await scalar(`SELECT count(*) FROM dp WHERE Modality = 'SEG' AND SegmentAlgorithmName IS NOT NULL AND SegmentNumber = 1`)) > 0);
  assert.equal(await scalar(`SELECT count(*) FROM dp WHERE Modality <> 'SR' AND coalesce(Malignancy, Texture, Diameter::VARCHAR, Volume::VARCHAR) IS NOT NULL`), 0);
});

test('slide-microscopy instances of dicom_pivot match sm_instance_index', async () => {
  const n = await scalar(`SELECT count(*) FROM sm_inst`);
  assert.ok(n > 0);
  assert.equal(await scalar(`SELECT count(*) FROM dp WHERE Modality = 'SM'`), n);
  const bad = await scalar(`SELECT count(*) FROM sm_inst s LEFT JOIN dp p USING (SOPInstanceUID)
    WHERE p.SOPInstanceUID IS NULL OR p.crdc_instance_uuid IS DISTINCT FROM s.crdc_instance_uuid OR p.instance_size IS DISTINCT FROM s.instance_size
      OR p.SeriesInstanceUID IS DISTINCT FROM s.SeriesInstanceUID`);
  assert.equal(bad, 0);
  assert.equal(await scalar(`SELECT count(*) FROM dp WHERE Modality = 'SM' AND (max_TotalPixelMatrixColumns IS NULL OR ObjectiveLensPower IS NULL OR SamplesPerPixel <> 3)`), 0);
});

test('the TCGA tables cover the patients of the tcga_* collections', async () => {
  assert.equal(await scalar(`SELECT count(*) FROM tcga_clin t LEFT JOIN (SELECT DISTINCT PatientID, collection_id FROM idx) i ON i.PatientID = t.case_barcode
    WHERE i.collection_id IS NULL OR i.collection_id NOT LIKE 'tcga\\_%' ESCAPE '\\' OR t.project_short_name <> 'TCGA-' || upper(substr(i.collection_id, 6))
      OR t.disease_code <> upper(substr(i.collection_id, 6))`), 0);
  assert.equal(
    await scalar(`SELECT count(*) FROM tcga_clin`),
    await scalar(`SELECT count(DISTINCT PatientID) FROM idx WHERE collection_id LIKE 'tcga\\_%' ESCAPE '\\'`),
  );
  assert.equal(await scalar(`SELECT count(*) - count(DISTINCT case_barcode) FROM tcga_clin`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM tcga_clin t JOIN (SELECT DISTINCT PatientID, PatientSex FROM idx) i ON i.PatientID = t.case_barcode
    WHERE (t.gender = 'MALE') <> (i.PatientSex = 'M') OR (t.gender = 'FEMALE') <> (i.PatientSex = 'F')`), 0);
  const types = (await rows(`DESCRIBE SELECT age_at_diagnosis, bmi FROM tcga_clin`)).map((r) => String(r.column_type));
  assert.deepEqual(types, ['BIGINT', 'DOUBLE']);
  assert.equal(await scalar(`SELECT count(*) FROM tcga_bio WHERE case_barcode NOT IN (SELECT case_barcode FROM tcga_clin)
    OR NOT starts_with(sample_barcode, case_barcode || '-')
    OR sample_type NOT IN ('Primary Tumor', 'Recurrent Tumor', 'Solid Tissue Normal', 'Metastatic', 'Blood Derived Normal')`), 0);
  assert.equal(await scalar(`SELECT count(*) FROM tcga_clin WHERE case_barcode NOT IN (SELECT case_barcode FROM tcga_bio WHERE sample_type = 'Primary Tumor')`), 0);
  assert.equal(await scalar(`SELECT count(*) - count(DISTINCT sample_barcode) FROM tcga_bio`), 0);
});

