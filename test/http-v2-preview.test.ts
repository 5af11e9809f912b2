// /v2 manifest preview and paging against the test database. Expected values
// come from independent SQL over the instance-level view v2.dicom_pivot (the
// service plans on the series table and per-series totals instead).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, withoutRequestId, type TestServer } from './fixture.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.close();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const PREVIEW = '/v2/cohorts/manifest/preview';

async function preview(body: unknown, status = 200): Promise<Json> {
  const r = await s.post(PREVIEW, body);
  const j = (await r.json()) as Json;
  assert.equal(r.status, status, JSON.stringify(j).slice(0, 500));
  assert.equal(j.code, status);
  return j;
}

async function sql(q: string, params: (string | number)[] = []) {
  return s.ctx.engine.rows(q, params);
}

/** Every row of a manifest, following next_page with the GET form. */
async function allPages(body: Json, pageSize: number): Promise<{ rows: Json[]; pages: number; totals: number[] }> {
  let j = await preview({ ...body, page_size: pageSize });
  const rows = [...j.manifest.manifest_data];
  const totals = [j.manifest.totalFound];
  let pages = 1;
  while (j.next_page) {
    assert.ok(j.manifest.rowsReturned <= pageSize);
    const r = await s.get(`${PREVIEW}/nextPage?next_page=${encodeURIComponent(j.next_page)}`);
    j = (await r.json()) as Json;
    assert.equal(r.status, 200, JSON.stringify(j));
    assert.equal(j.cohort_def, undefined, 'next pages carry no cohort_def');
    rows.push(...j.manifest.manifest_data);
    totals.push(j.manifest.totalFound);
    pages++;
  }
  assert.equal(j.next_page, '', 'the last page has an empty token');
  return { rows, pages, totals };
}

test('series granularity: rows, instance_count and group_size equal independent SQL; cohort_def echoed', async () => {
  const j = await preview({
    cohort_def: { name: 'n', description: 'd', filters: { collection_id: ['NLST'], Modality: ['ct'] } },
    fields: ['SeriesInstanceUID'],
    counts: true,
    group_size: true,
    page_size: 100000,
  });
  const expected = await sql(`SELECT SeriesInstanceUID, count(*)::BIGINT AS instance_count, sum(instance_size)::BIGINT AS group_size
    FROM v2.dicom_pivot WHERE collection_id = 'nlst' AND Modality = 'CT' GROUP BY 1 ORDER BY 1`);
  assert.deepEqual(j.manifest.manifest_data, expected);
  assert.equal(j.manifest.totalFound, expected.length);
  assert.equal(j.manifest.rowsReturned, expected.length);
  assert.equal(j.next_page, '');
  assert.equal(j.cohort_def.name, 'n');
  assert.equal(j.cohort_def.description, 'd');
  assert.equal(j.cohort_def.sql, '');
  assert.deepEqual(j.cohort_def.filterSet.filters, { collection_id: ['nlst'], Modality: ['ct'] });
  assert.equal(j.cohort_def.filterSet.svc_data_version, `${s.ctx.dataset.release.replace(/^v/, '')}.0`);
  assert.equal(j.cohort_def.filterSet.idc_data_version, j.cohort_def.filterSet.svc_data_version);
});

test('granularity: the first that applies, with exactly its count members (as integers)', async () => {
  const cases: [string[], string[]][] = [
    [['SOPInstanceUID', 'Modality'], []],
    [['crdc_series_uuid'], ['instance_count']],
    [['StudyInstanceUID', 'Modality'], ['instance_count', 'series_count']],
    [['PatientID'], ['instance_count', 'series_count', 'study_count']],
    [['collection_id', 'Modality'], ['instance_count', 'series_count', 'study_count', 'patient_count']],
    [['Modality'], ['instance_count', 'series_count', 'study_count', 'patient_count', 'collection_count']],
  ];
  for (const [fields, counts] of cases) {
    const j = await preview({ cohort_def: { filters: { collection_id: ['tcga_luad', 'nlst'] } }, fields, counts: true, page_size: 5 });
    const row = j.manifest.manifest_data[0];
    assert.deepEqual(Object.keys(row), [...fields, ...counts], fields.join(','));
    for (const c of counts) assert.ok(Number.isInteger(row[c]) && row[c] > 0, `${c} is a positive integer`);
  }
  // Patient level: counts equal independent distinct counts.
  const j = await preview({ cohort_def: { filters: { collection_id: ['nlst'] } }, fields: ['PatientID'], counts: true, page_size: 1000 });
  const expected = await sql(`SELECT PatientID, count(*)::BIGINT AS instance_count, count(DISTINCT SeriesInstanceUID)::BIGINT AS series_count,
    count(DISTINCT StudyInstanceUID)::BIGINT AS study_count FROM v2.dicom_pivot WHERE collection_id = 'nlst' GROUP BY 1 ORDER BY 1`);
  assert.deepEqual(j.manifest.manifest_data, expected);
});

test('version granularity: no fields gives one row of totals; an empty filter set is the whole release', async () => {
  const j = await preview({ cohort_def: { name: 'all' }, fields: [], counts: true, group_size: true });
  const [t] = await sql(`SELECT count(*)::BIGINT AS instance_count, count(DISTINCT SeriesInstanceUID)::BIGINT AS series_count,
    count(DISTINCT StudyInstanceUID)::BIGINT AS study_count, count(DISTINCT PatientID)::BIGINT AS patient_count,
    count(DISTINCT collection_id)::BIGINT AS collection_count, sum(instance_size)::BIGINT AS group_size FROM v2.dicom_pivot`);
  assert.deepEqual(j.manifest, { manifest_data: [t], rowsReturned: 1, totalFound: 1 });
  assert.deepEqual(j.cohort_def.filterSet.filters, {});
  // Fields without a key: one row per distinct value, with version-level counts.
  const m = await preview({ cohort_def: { filters: {} }, fields: ['Modality'], page_size: 1000 });
  const mods = await sql('SELECT DISTINCT Modality FROM v2.dicom_pivot ORDER BY 1 NULLS FIRST');
  assert.deepEqual(m.manifest.manifest_data, mods);
});

test('instance granularity: store URLs in both namings, counts ignored, nulls for missing values', async () => {
  const j = await preview({
    cohort_def: { filters: { Modality: ['SEG'] } },
    fields: ['crdc_instance_uuid', 'cloud1_url', 'aws_url', 'cloud2_url', 'gcs_url', 'SliceThickness'],
    counts: true,
    page_size: 50,
  });
  const rows = j.manifest.manifest_data;
  assert.equal(rows.length, 50);
  const expected = await sql(`SELECT crdc_instance_uuid, aws_url, gcs_url, gcs_bucket FROM v2.dicom_pivot WHERE Modality = 'SEG' ORDER BY 1 LIMIT 50`);
  rows.forEach((r: Json, i: number) => {
    assert.deepEqual(Object.keys(r), ['crdc_instance_uuid', 'cloud1_url', 'aws_url', 'cloud2_url', 'gcs_url', 'SliceThickness']);
    assert.equal(r.crdc_instance_uuid, expected[i]!.crdc_instance_uuid);
    assert.equal(r.aws_url, expected[i]!.aws_url);
    assert.equal(r.cloud1_url, expected[i]!.aws_url);
    assert.equal(r.gcs_url, expected[i]!.gcs_url, 'gcs_url keeps the public gs:// form');
    assert.equal(r.cloud2_url, String(expected[i]!.gcs_url).replace(/^gs:/, 's3:'), 'cloud2_url is an s3:// URL of the second store');
    assert.equal(r.SliceThickness, null, 'a segmentation has no slice thickness: null');
  });
});

test('matching: names in any casing, last duplicate wins, % wildcards, None, Categorical Numeric, collection_id normalization', async () => {
  const count = async (filters: Json | string) => {
    const body = typeof filters === 'string' ? filters : JSON.stringify({ cohort_def: { filters }, fields: [], counts: true });
    const r = await s.post(PREVIEW, body);
    const j = (await r.json()) as Json;
    assert.equal(r.status, 200, JSON.stringify(j));
    return j.manifest.manifest_data[0].instance_count as number;
  };
  const n = async (where: string) => Number((await sql(`SELECT count(*) AS n FROM v2.dicom_pivot WHERE ${where}`))[0]!.n);
  assert.equal(await count({ MODALITY: ['mr'] }), await n(`Modality = 'MR'`));
  // JSON duplicate keys: only the last occurrence counts (also across casings).
  assert.equal(await count('{"cohort_def":{"filters":{"Modality":["CT"],"modality":["MR"]}},"fields":[],"counts":true}'), await n(`Modality = 'MR'`));
  assert.equal(await count({ Modality: ['%t'] }), await n(`Modality ILIKE '%t'`));
  assert.equal(await count({ Modality: ['c%', 'MR'] }), await n(`Modality ILIKE 'c%' OR Modality = 'MR'`), 'wildcards work inside a list');
  assert.equal(await count({ SeriesDescription: ['%CHEST%'] }), await n(`SeriesDescription ILIKE '%chest%'`));
  assert.equal(await count({ SeriesDescription: ['%_%'] }), await n(`SeriesDescription LIKE '%\\_%' ESCAPE '\\'`), '_ is a literal');
  assert.equal(await count({ BodyPartExamined: ['None'] }), await n('BodyPartExamined IS NULL'));
  assert.equal(await count({ collection_id: ['TCGA-LUAD', 'Lidc Idri'] }), await n(`collection_id IN ('tcga_luad', 'lidc_idri')`));
  const [power] = await sql('SELECT ObjectiveLensPower AS p FROM v2.dicom_pivot WHERE ObjectiveLensPower IS NOT NULL LIMIT 1');
  assert.equal(await count({ ObjectiveLensPower: [Number(power!.p)] }), await n(`ObjectiveLensPower = ${power!.p}`));
  assert.equal(await count({ SamplesPerPixel: ['3'] }), await n('SamplesPerPixel = 3'), 'a string filter over an integer column');
  assert.equal(await count({ Modality: ['no-such-modality'] }), 0);
});

test('ranges: the nine suffixes with their exact bounds; filters of one attribute are ANDed', async () => {
  const [b] = await sql(`SELECT quantile_disc(SliceThickness, 0.3) AS a, quantile_disc(SliceThickness, 0.7) AS b FROM v2.dicom_pivot`);
  const lo = Number(b!.a);
  const hi = Number(b!.b);
  assert.ok(lo < hi);
  const cases: [string, number[], string][] = [
    ['eq', [lo], `= ${lo}`],
    ['gt', [lo], `> ${lo}`],
    ['gte', [lo], `>= ${lo}`],
    ['lt', [hi], `< ${hi}`],
    ['lte', [hi], `<= ${hi}`],
    ['btw', [lo, hi], `> ${lo} AND SliceThickness < ${hi}`],
    ['ebtw', [lo, hi], `>= ${lo} AND SliceThickness < ${hi}`],
    ['btwe', [lo, hi], `> ${lo} AND SliceThickness <= ${hi}`],
    ['ebtwe', [lo, hi], `>= ${lo} AND SliceThickness <= ${hi}`],
  ];
  for (const [suffix, values, cond] of cases) {
    const j = await preview({ cohort_def: { filters: { [`SliceThickness_${suffix}`]: values } }, fields: [], counts: true });
    const [e] = await sql(`SELECT count(*) AS n FROM v2.dicom_pivot WHERE SliceThickness ${cond}`);
    assert.equal(j.manifest.manifest_data[0].instance_count, Number(e!.n), suffix);
  }
  const j = await preview({ cohort_def: { filters: { SliceThickness_gte: [lo], SliceThickness_lt: [hi] } }, fields: [], counts: true });
  const [e] = await sql(`SELECT count(*) AS n FROM v2.dicom_pivot WHERE SliceThickness >= ${lo} AND SliceThickness < ${hi}`);
  assert.equal(j.manifest.manifest_data[0].instance_count, Number(e!.n));
  const rev = await preview({ cohort_def: { filters: { SliceThickness_btw: [hi, lo] } }, fields: ['PatientID'] }, 400);
  assert.match(rev.message, /SliceThickness_btw takes its two values least first/);
});

test('TCGA filters select through case_barcode = PatientID and exclude patients without TCGA data', async () => {
  const j = await preview({ cohort_def: { filters: { race: ['white'], age_at_diagnosis_ebtwe: [40, 70] } }, fields: ['PatientID'], counts: true, page_size: 1000 });
  const expected = await sql(`SELECT PatientID, count(*)::BIGINT AS instance_count, count(DISTINCT SeriesInstanceUID)::BIGINT AS series_count,
      count(DISTINCT StudyInstanceUID)::BIGINT AS study_count
    FROM v2.dicom_pivot p WHERE EXISTS (SELECT 1 FROM v2.tcga_clinical_rel9 c WHERE c.case_barcode = p.PatientID AND lower(c.race) = 'white'
      AND c.age_at_diagnosis BETWEEN 40 AND 70) GROUP BY 1 ORDER BY 1`);
  assert.ok(expected.length > 0, 'the test data has such patients');
  assert.deepEqual(j.manifest.manifest_data, expected);
  const nonTcga = j.manifest.manifest_data.filter((r: Json) => !String(r.PatientID).startsWith('TCGA-'));
  assert.deepEqual(nonTcga, [], 'patients without TCGA data are excluded');
  // A biospecimen filter: some sample of the case has that type.
  const bio = await preview({ cohort_def: { filters: { sample_type: ['Solid Tissue Normal'] } }, fields: ['PatientID'], page_size: 1000 });
  const bioExpected = await sql(`SELECT DISTINCT PatientID FROM v2.dicom_pivot p WHERE PatientID IN
    (SELECT case_barcode FROM v2.tcga_biospecimen_rel9 WHERE sample_type = 'Solid Tissue Normal') ORDER BY 1`);
  assert.deepEqual(bio.manifest.manifest_data, bioExpected);
  // A TCGA field without a TCGA filter: null for patients without TCGA data.
  const f = await preview({ cohort_def: { filters: { collection_id: ['nlst', 'tcga_luad'] } }, fields: ['collection_id', 'race'], page_size: 100 });
  const nl = f.manifest.manifest_data.filter((r: Json) => r.collection_id === 'nlst');
  assert.deepEqual(nl, [{ collection_id: 'nlst', race: null }]);
});

test('paging: every page size gives exactly the rows of one big page, in order, with a constant totalFound', async () => {
  const body = { cohort_def: { filters: { collection_id: ['nlst', 'tcga_luad', 'lidc_idri'] } }, fields: ['PatientID', 'StudyInstanceUID', 'Modality'], counts: true };
  const big = await preview({ ...body, page_size: 50000 });
  assert.equal(big.next_page, '');
  const all = big.manifest.manifest_data;
  assert.ok(all.length > 40, `enough rows to page (${all.length})`);
  for (const size of [1, 7, 40, all.length]) {
    const { rows, pages, totals } = await allPages(body, size);
    assert.deepEqual(rows, all, `page size ${size}`);
    assert.equal(pages, Math.ceil(all.length / size));
    assert.ok(totals.every((t) => t === all.length));
  }
  // Instance pages (materialized after the first page) agree with the keyset path of a fresh server.
  const inst = { cohort_def: { filters: { collection_id: ['tcga_luad'] } }, fields: ['SeriesInstanceUID', 'SOPInstanceUID'] };
  const one = await preview({ ...inst, page_size: 50000 });
  const { rows } = await allPages(inst, 997);
  assert.deepEqual(rows, one.manifest.manifest_data);
});

test('next_page tokens: POST and GET forms agree, page_size may change, tokens survive a restart, tampering is a 400', async () => {
  const body = { cohort_def: { filters: { Modality: ['CT'] } }, fields: ['SeriesInstanceUID'], page_size: 10 };
  const first = await preview(body);
  const tok = first.next_page;
  assert.ok(tok);
  const viaGet = (await (await s.get(`${PREVIEW}/nextPage?Next_Page=${encodeURIComponent(tok)}&PAGE_SIZE=5`)).json()) as Json;
  const viaPost = (await (await s.post(`${PREVIEW}/nextPage`, { next_page: tok, page_size: 5 })).json()) as Json;
  assert.deepEqual(viaGet, viaPost);
  assert.equal(viaGet.manifest.rowsReturned, 5);
  // Without page_size the page size the manifest started with is kept.
  const keep = (await (await s.post(`${PREVIEW}/nextPage`, { next_page: tok })).json()) as Json;
  assert.equal(keep.manifest.rowsReturned, 10);
  // The rows continue the first page.
  const ten = await preview({ ...body, page_size: 20 });
  assert.deepEqual([...first.manifest.manifest_data, ...keep.manifest.manifest_data], ten.manifest.manifest_data);
  // Another server (a restart, or a replica of the same release) accepts the token.
  const other = await startServer();
  try {
    const r = (await (await other.post(`${PREVIEW}/nextPage`, { next_page: tok })).json()) as Json;
    assert.deepEqual(r, keep);
  } finally {
    await other.close();
  }
  // Tampered, truncated or foreign tokens are refused.
  const flipped = tok.slice(0, 5) + (tok[5] === 'A' ? 'B' : 'A') + tok.slice(6);
  for (const bad of [flipped, tok.slice(0, -2), 'garbage', `${tok}x`]) {
    const r = await s.post(`${PREVIEW}/nextPage`, { next_page: bad });
    assert.equal(r.status, 400);
    const m = withoutRequestId(await r.json()) as Json;
    assert.equal(m.code, 400);
    assert.match(m.message, /^Invalid next_page token[ :(]/);
    assert.ok(!m.message.includes(bad), 'the token is not echoed');
  }
  const missing = await s.get(`${PREVIEW}/nextPage`);
  // The public service's words first (clients match them), then what to do.
  const none = withoutRequestId(await missing.json()) as Json;
  assert.equal(none.code, 400);
  assert.match(none.message, /^Invalid next_page token None: the request has no next_page value .*Pass the next_page value of the previous response/);
  const extra = await s.get(`${PREVIEW}/nextPage?next_page=${encodeURIComponent(tok)}&foo=1`);
  assert.deepEqual(withoutRequestId(await extra.json()), { code: 400, message: 'Invalid query parameter foo' });
  const size = await s.get(`${PREVIEW}/nextPage?next_page=${encodeURIComponent(tok)}&page_size=ten`);
  assert.deepEqual(withoutRequestId(await size.json()), { code: 400, message: 'Invalid page_size' });
});

test('202: a page slower than the deadline answers 202 with a token that collects that page', async () => {
  const slow = await startServer({ v2DeadlineMs: 1 });
  try {
    const body = { cohort_def: { name: 'slow', filters: { collection_id: ['nlst'] } }, fields: ['SOPInstanceUID'], page_size: 25 };
    const r = await slow.post(PREVIEW, body);
    const j = (await r.json()) as Json;
    assert.equal(r.status, 202);
    assert.equal(j.code, 202);
    assert.equal(j.message, '[ERROR] API query took longer than the allowed time to execute. Retry the query using the next_page token.');
    assert.ok(j.next_page);
    assert.equal(j.query_info.next_page, j.next_page);
    assert.equal(j.query_info.cohort_def.name, 'slow');
    // Resubmit until the page is there (the work went on meanwhile).
    let page: Json | undefined;
    for (let i = 0; i < 100 && !page; i++) {
      await new Promise((res) => setTimeout(res, 50));
      const again = await slow.post(`${PREVIEW}/nextPage`, { next_page: j.next_page });
      const aj = (await again.json()) as Json;
      if (again.status === 200) page = aj;
      else assert.equal(again.status, 202);
    }
    assert.ok(page, 'the page was collected');
    const direct = await preview(body);
    assert.deepEqual(page!.manifest, direct.manifest);
  } finally {
    await slow.close();
  }
});

test('sql: true returns the generated SQL, which runs as caller SQL and gives the same rows', async () => {
  const j = await preview({
    cohort_def: { filters: { collection_id: ["o'brien", 'nlst'], Modality: ['CT'], SliceThickness_ebtwe: [1, 3] } },
    fields: ['PatientID', 'StudyInstanceUID'],
    counts: true,
    sql: 'True',
    page_size: 100000,
  });
  const text = j.cohort_def.sql;
  assert.match(text, /'o''brien'/, 'quotes are doubled');
  assert.doesNotMatch(text, /\?/, 'every value is written in');
  const res = await s.ctx.engine.callerSql(text, 100000);
  assert.deepEqual(res.rows, j.manifest.manifest_data);
});

test('errors: the public messages, in its validation order', async () => {
  const cases: [unknown, string][] = [
    [{ fields: [] }, "'cohort_def' is required in the body"],
    [{ Cohort_def: {}, fields: [] }, "'cohort_def' is required in the body"],
    [{ cohort_def: { Description: 'x' }, fields: [] }, "'Description' is an invalid cohort_def key"],
    [{ cohort_def: { filters: { modalityy: ['CT'] } }, fields: [] }, 'modalityy is not a valid filter.'],
    [{ cohort_def: { filters: { Modality: 'CT' } }, fields: [] }, "'CT' is not of type 'array'; Failed validating type in schema ['properties'],['Modality'] on instance ['Modality']"],
    [{ cohort_def: { filters: { Modality: [] } }, fields: [] }, "[] is too short; Failed validating minItems in schema ['properties'],['Modality'] on instance ['Modality']"],
    [{ cohort_def: { filters: { age_at_diagnosis_btw: [1, 2, 3] } }, fields: [] }, "[1, 2, 3] is too long; Failed validating maxItems in schema ['properties'],['age_at_diagnosis_btw'] on instance ['age_at_diagnosis_btw']"],
    [{ cohort_def: { filters: { age_at_diagnosis_btw: [65.1, 70] } }, fields: [] }, "65.1 is not of type 'integer'; Failed validating type in schema ['properties'],['age_at_diagnosis_btw'],['items'] on instance ['age_at_diagnosis_btw'],[0]"],
    [{ cohort_def: { filters: { ObjectiveLensPower: [20, 40] } }, fields: [] }, "[20, 40] is too long; Failed validating maxItems in schema ['properties'],['ObjectiveLensPower'] on instance ['ObjectiveLensPower']"],
    [{ cohort_def: { filters: { Modality: [5] } }, fields: [] }, "5 is not of type 'string'; Failed validating type in schema ['properties'],['Modality'],['items'] on instance ['Modality'],[0]"],
    [{ cohort_def: {}, Fields: [] }, 'Fields is an invalid body key'],
    [{ cohort_def: {} }, 'fields is required in the body'],
    [{ cohort_def: {}, fields: [], counts: 'yes' }, 'yes is an invalid value for counts'],
    [{ cohort_def: {}, fields: [], group_size: 1 }, '1 is an invalid value for group_size'],
    [{ cohort_def: {}, fields: ['PatientID'], page_size: '10' }, 'page_size value must be an integer'],
    [{ cohort_def: {}, fields: ['PatientID'], page_size: 2.5 }, 'page_size value must be an integer'],
    [{ cohort_def: {}, fields: ['PatientIDs'] }, 'PatientIDs is not a valid field.'],
    [{ cohort_def: {}, fields: ['counts'] }, 'counts is not a valid field.'],
    [{ cohort_def: {}, fields: [] }, "If 'fields' is empty, then one or both of 'counts' and 'group_size' must be True"],
  ];
  for (const [body, message] of cases) {
    const j = await preview(body, 400);
    assert.equal(j.message, message, JSON.stringify(body));
  }
  // Strings "true"/"False" are booleans; fields match case-insensitively and keep the canonical spelling.
  const ok = await preview({ cohort_def: {}, fields: ['patientid'], counts: 'true', group_size: 'False', page_size: 2 });
  assert.deepEqual(Object.keys(ok.manifest.manifest_data[0]), ['PatientID', 'instance_count', 'series_count', 'study_count']);
});

test('page_size: default 1000; larger than the maximum is lowered to it', async () => {
  const d = await preview({ cohort_def: {}, fields: ['SeriesInstanceUID'] });
  assert.equal(d.manifest.rowsReturned, Math.min(1000, d.manifest.totalFound));
  const capped = await startServer({ v2MaxPageSize: 30 });
  try {
    const r = (await (await capped.post(PREVIEW, { cohort_def: {}, fields: ['SeriesInstanceUID'], page_size: 1000 })).json()) as Json;
    assert.equal(r.manifest.rowsReturned, 30);
    assert.ok(r.next_page);
  } finally {
    await capped.close();
  }
});
