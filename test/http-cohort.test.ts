import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from './fixture.ts';
import { V3_EXAMPLE_CHECKS } from './example-checks.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.close();
});

type Json = Record<string, unknown>;
interface Counts {
  patients: number;
  studies: number;
  series: number;
  instances: number;
  size_TB: number;
  size_MB: number;
  filters_applied: { terms: Record<string, string[]>; ranges: Record<string, unknown> };
  warnings: string[];
}
interface ErrorBody {
  error: { code: string; message: string };
}
interface ManifestRow {
  collection_id: string;
  PatientID: string;
  StudyInstanceUID: string;
  SeriesInstanceUID: string;
  series_cloud1_url: string;
  series_aws_url: string;
  [k: string]: unknown;
}
interface Manifest {
  counts: Omit<Counts, 'filters_applied' | 'warnings'>;
  page: number;
  page_size: number;
  returned: number;
  total_series: number;
  total_pages: number;
  has_more: boolean;
  series: ManifestRow[];
  download: {
    total_series: number;
    size_TB: number;
    size_MB: number;
    manifest_preview: string[];
    manifest_truncated: boolean;
    commands: { idqs: string[]; save_manifest: string; s5cmd_cloud1: string[]; s5cmd_cloud2: string[] };
    stores: Record<'cloud1' | 'cloud2', { name: string; endpoint: string; bucket_map: Record<string, string> }>;
    note: string;
  };
  filters_applied: Counts['filters_applied'];
  warnings: string[];
}

const NLST_CT = { terms: { collection_id: ['nlst'], Modality: ['CT'] } };
const ORDER = 'ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID';

async function json<T>(r: Response, status = 200): Promise<T> {
  const body = await r.text();
  assert.equal(r.status, status, body);
  return JSON.parse(body) as T;
}

/** Independent counts for a WHERE clause with bound values. */
async function sqlCounts(where: string, params: (string | number)[]) {
  const r = await s.ctx.engine.one(
    `SELECT count(DISTINCT PatientID) AS p, count(DISTINCT StudyInstanceUID) AS st, count(*) AS se, COALESCE(sum(instanceCount), 0) AS i,
       COALESCE(sum(series_size_MB), 0) AS mb FROM "index" WHERE ${where}`,
    params,
  );
  return { patients: Number(r!.p), studies: Number(r!.st), series: Number(r!.se), instances: Number(r!.i), mb: Number(r!.mb) };
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

/** Collections whose series sit in a bucket that the cloud2 store names differently. */
async function remappedBucketCohort(): Promise<{ collection: string; remapped: Map<string, string> }> {
  const remapped = new Map(Object.entries(s.ctx.dataset.stores.cloud2.bucket_map).filter(([a, b]) => a !== b));
  assert.ok(remapped.size > 0, 'the dataset maps at least one bucket differently on cloud2');
  const buckets = [...remapped.keys()];
  const row = await s.ctx.engine.one(
    `SELECT collection_id FROM "index" WHERE aws_bucket IN (${buckets.map(() => '?').join(', ')}) GROUP BY 1 ORDER BY count(*), 1 LIMIT 1`,
    buckets,
  );
  assert.ok(row, 'some series lives in a remapped bucket (NC or head scans)');
  return { collection: String(row.collection_id), remapped };
}

test('POST /v3/cohort/counts returns the counts of the filter, equal to independent SQL', async () => {
  const body = await json<Counts>(await s.post('/v3/cohort/counts', NLST_CT));
  assert.deepEqual(Object.keys(body), ['patients', 'studies', 'series', 'instances', 'size_TB', 'size_MB', 'filters_applied', 'warnings', 'sql']);
  const want = await sqlCounts(`collection_id = ? AND Modality = ?`, ['nlst', 'CT']);
  assert.ok(want.series > 0);
  assert.equal(body.patients, want.patients);
  assert.equal(body.studies, want.studies);
  assert.equal(body.series, want.series);
  assert.equal(body.instances, want.instances);
  assert.ok(Math.abs(body.size_MB - want.mb) < 0.01);
  assert.equal(body.size_TB, Math.round((want.mb / 1e6) * 1e6) / 1e6);
  assert.deepEqual(body.filters_applied, { terms: { collection_id: ['nlst'], Modality: ['CT'] }, ranges: {} });
  assert.deepEqual(body.warnings, []);
});

test('counts: the wrapped body {"filters": ...} gives the same answer as the filter itself', async () => {
  const filter = { terms: { Modality: ['MR', 'PT'] }, ranges: { instanceCount: { gte: 20 } } };
  const direct = await json<Counts>(await s.post('/v3/cohort/counts', filter));
  const wrapped = await json<Counts>(await s.post('/v3/cohort/counts', { filters: filter }));
  assert.deepEqual(wrapped, direct);
  const want = await sqlCounts(`Modality IN (?, ?) AND instanceCount >= ?`, ['MR', 'PT', 20]);
  assert.equal(direct.series, want.series);
  assert.ok(direct.series > 0);
});

test('counts: a range with an unknown bound (min) is 422 naming it and listing gte, lte', async () => {
  const body = await json<ErrorBody>(await s.post('/v3/cohort/counts', { ranges: { instanceCount: { min: 5 } } }), 422);
  assert.equal(body.error.code, 'invalid_request');
  assert.match(body.error.message, /"min"/);
  assert.match(body.error.message, /gte, lte/);
});

test('counts: a mistyped wrapper ({"filter": {}}) is 422, never whole-dataset counts', async () => {
  const body = await json<ErrorBody>(await s.post('/v3/cohort/counts', { filter: {} }), 422);
  assert.match(body.error.message, /"filter"/);
  assert.match(body.error.message, /filters/);
});

test('counts: an unknown attribute is 400 invalid_query with a suggestion', async () => {
  const body = await json<ErrorBody>(await s.post('/v3/cohort/counts', { terms: { modality: ['CT'] } }), 400);
  assert.equal(body.error.code, 'invalid_query');
  assert.match(body.error.message, /'modality'/);
  assert.match(body.error.message, /Did you mean 'Modality'/);
});

test('counts: a range on a term attribute is 400 and says to use terms', async () => {
  const body = await json<ErrorBody>(await s.post('/v3/cohort/counts', { ranges: { Modality: { gte: 1 } } }), 400);
  assert.equal(body.error.code, 'invalid_query');
  assert.match(body.error.message, /Modality/);
  assert.match(body.error.message, /terms/);
});

test('counts: an empty filter gives whole-dataset totals with the "entire dataset" warning', async () => {
  const body = await json<Counts>(await s.post('/v3/cohort/counts', {}));
  const want = await sqlCounts('TRUE', []);
  assert.equal(body.series, want.series);
  assert.equal(body.patients, want.patients);
  assert.equal(body.instances, want.instances);
  assert.equal(body.warnings.length, 1);
  assert.match(body.warnings[0]!, /entire dataset/);
});

test('counts: an empty value list is dropped and named in the warnings', async () => {
  const body = await json<Counts>(await s.post('/v3/cohort/counts', { terms: { collection_id: ['nlst'], Modality: [] } }));
  const want = await sqlCounts('collection_id = ?', ['nlst']);
  assert.equal(body.series, want.series);
  assert.deepEqual(body.filters_applied.terms, { collection_id: ['nlst'] });
  assert.ok(body.warnings.some((w) => w.includes('terms.Modality') && /empty/.test(w)), JSON.stringify(body.warnings));
});

test('counts: a value in the wrong case matches nothing and the warning names the right casing', async () => {
  const body = await json<Counts>(await s.post('/v3/cohort/counts', { terms: { Modality: ['ct'] } }));
  assert.equal(body.series, 0);
  assert.equal(body.patients, 0);
  assert.equal(body.size_MB, 0);
  assert.equal(body.warnings.length, 1);
  assert.match(body.warnings[0]!, /'CT'/);
});

test('counts: a value that exists in no casing gives zero counts and no warning', async () => {
  const body = await json<Counts>(await s.post('/v3/cohort/counts', { terms: { Modality: ['NO_SUCH_MODALITY_X'] } }));
  assert.equal(body.series, 0);
  assert.equal(body.instances, 0);
  assert.deepEqual(body.warnings, []);
});

test('POST /v3/cohort/manifest: defaults, shape, order, counts and download payload', async () => {
  const body = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: { terms: { collection_id: ['nlst'] } } }));
  assert.deepEqual(Object.keys(body), [
    'counts', 'page', 'page_size', 'returned', 'total_series', 'total_pages', 'has_more', 'series', 'download', 'filters_applied', 'warnings',
  ]);
  const want = await sqlCounts('collection_id = ?', ['nlst']);
  assert.equal(body.page, 0);
  assert.equal(body.page_size, s.ctx.config.pageSize);
  assert.equal(body.total_series, want.series);
  assert.equal(body.counts.series, want.series);
  assert.equal(body.counts.patients, want.patients);
  assert.equal(body.returned, Math.min(want.series, s.ctx.config.pageSize));
  assert.equal(body.series.length, body.returned);
  assert.equal(body.total_pages, Math.ceil(want.series / s.ctx.config.pageSize));
  assert.equal(body.has_more, want.series > s.ctx.config.pageSize);
  assert.deepEqual(Object.keys(body.series[0]!), [
    'collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality', 'SeriesDescription', 'instanceCount', 'series_size_MB',
    'aws_bucket', 'crdc_series_uuid', 'series_cloud1_url', 'series_aws_url', 'license_short_name', 'analysis_result_id',
  ]);
  const expected = await s.ctx.engine.rows(`SELECT SeriesInstanceUID, series_cloud1_url FROM "index" WHERE collection_id = ? ${ORDER} LIMIT ?`, [
    'nlst',
    s.ctx.config.pageSize,
  ]);
  assert.deepEqual(body.series.map((r) => r.SeriesInstanceUID), expected.map((r) => r.SeriesInstanceUID));
  for (const r of body.series) {
    assert.equal(r.collection_id, 'nlst');
    assert.equal(r.series_aws_url, r.series_cloud1_url);
  }
  const d = body.download;
  assert.equal(d.total_series, want.series);
  assert.equal(d.size_MB, body.counts.size_MB);
  assert.deepEqual(d.manifest_preview, expected.slice(0, 5).map((r) => r.series_cloud1_url));
  assert.equal(d.manifest_truncated, false);
  assert.deepEqual(d.commands.idqs, [
    `idqs download --collection nlst --api ${s.url} --out ./idqs-data`,
    `idqs download --filters '{"terms":{"collection_id":["nlst"]},"ranges":{}}' --api ${s.url} --out ./idqs-data`,
    `idqs download --manifest idqs_manifest.txt --api ${s.url} --out ./idqs-data`,
  ]);
  for (const store of ['cloud1', 'cloud2'] as const) {
    const want = s.ctx.dataset.stores[store];
    assert.deepEqual(d.stores[store], { name: want.name, endpoint: want.endpoint, bucket_map: want.bucket_map });
  }
  assert.match(d.commands.save_manifest, /^curl .*\/v3\/cohort\/manifest\.txt.* -o idqs_manifest\.txt$/);
  for (const store of ['cloud1', 'cloud2'] as const) {
    const [save, run] = d.commands[`s5cmd_${store}`];
    assert.match(save!, new RegExp(`^curl .*"source":"${store}","format":"s5cmd".* -o idqs_manifest_${store}\\.s5cmd$`));
    assert.equal(run, `s5cmd --no-sign-request --endpoint-url ${s.ctx.dataset.stores[store].endpoint} run idqs_manifest_${store}.s5cmd`);
  }
  assert.match(d.note, /no credentials/);
  assert.match(d.note, /and the licenses of the same filter before downloading/);
  assert.match(d.note, /s3:\/\//);
  assert.deepEqual(body.warnings, []);
});

test('manifest: the curl commands of the payload fetch the same cohort from manifest.txt', async () => {
  const body = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 5 }));
  const save = body.download.commands.s5cmd_cloud1[0]!;
  const m = /-d '([^']*)'/.exec(save);
  assert.ok(m, save);
  const req = JSON.parse(m[1]!) as Json;
  assert.deepEqual(req.filters, body.filters_applied);
  const r = await s.post('/v3/cohort/manifest.txt', req);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-total-count'), String(body.total_series));
  const cps = lines(await r.text()).filter((l) => !l.startsWith('#'));
  assert.equal(cps.length, body.total_series);
  // A filter that is not collection_id alone has no per-collection command.
  assert.ok(!body.download.commands.idqs.some((c) => c.includes('--collection ')));
});

test('manifest: shell metacharacters in values are quoted in the commands', async () => {
  const body = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: { terms: { collection_id: ["it's; rm -rf /"] } } }));
  assert.equal(body.total_series, 0);
  assert.deepEqual(body.series, []);
  assert.equal(body.download.commands.idqs[0], `idqs download --collection 'it'\\''s; rm -rf /' --api ${s.url} --out ./idqs-data`);
});

test('manifest: page_size 0 is raised to 1 and 100000 lowered to the ceiling, and a warning says so', async () => {
  const small = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 0 }));
  assert.equal(small.page_size, 1);
  assert.equal(small.returned, 1);
  assert.deepEqual(small.warnings, ['page_size 0 is below 1; raised to 1.']);
  assert.equal(small.download.manifest_preview.length, Math.min(5, small.total_series));
  const big = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 100000 }));
  assert.equal(big.page_size, 5000, 'the default ceiling (IDQS_MAX_PAGE_SIZE)');
  assert.deepEqual(big.warnings, ['page_size 100000 is above the cap of 5000; lowered to 5000.']);
  assert.equal(big.returned, Math.min(big.total_series, 5000));
});

test('manifest: pages follow each other; a page beyond the end is empty; include_rows=false keeps counts', async () => {
  const p0 = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 3 }));
  const p1 = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 3, page: 1 }));
  const want = await s.ctx.engine.rows(`SELECT SeriesInstanceUID FROM "index" WHERE collection_id = 'nlst' AND Modality = 'CT' ${ORDER} LIMIT 6`);
  assert.deepEqual([...p0.series, ...p1.series].map((r) => r.SeriesInstanceUID), want.map((r) => r.SeriesInstanceUID));
  assert.equal(p1.page, 1);
  assert.equal(p0.has_more, true);
  const beyond = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 50, page: 100000 }));
  assert.deepEqual(beyond.series, []);
  assert.equal(beyond.returned, 0);
  assert.equal(beyond.has_more, false);
  assert.equal(beyond.total_series, p0.total_series);
  const huge = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 5000, page: 9007199254740991 }));
  assert.deepEqual(huge.series, []);
  const noRows = await json<Manifest>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, include_rows: false }));
  assert.deepEqual(noRows.series, []);
  assert.equal(noRows.returned, 0);
  assert.equal(noRows.total_series, p0.total_series);
  assert.deepEqual(noRows.download.manifest_preview, p0.download.manifest_preview);
  const negative = await json<ErrorBody>(await s.post('/v3/cohort/manifest', { filters: NLST_CT, page: -1 }), 422);
  assert.match(negative.error.message, /page/);
});

test('a manifest page with an empty filter pages the whole release with a warning; every curl command it prints saves the whole release', async () => {
  const all = (await s.ctx.engine.one(`SELECT count(*)::INTEGER AS n FROM "index"`))!.n as number;
  const first = (await s.ctx.engine.rows(`SELECT SeriesInstanceUID FROM "index" ${ORDER} LIMIT 3 OFFSET 6`)).map((r) => r.SeriesInstanceUID);
  for (const body of [{}, { filters: {} }, { filters: { terms: { Modality: [] } } }]) {
    const page = await json<{ total_series: number; series: Json[]; warnings: string[] }>(await s.post('/v3/cohort/manifest', { ...body, page: 2, page_size: 3 }), 200);
    assert.equal(page.total_series, all);
    assert.deepEqual(page.series.map((r) => r.SeriesInstanceUID), first);
    assert.ok(page.warnings.some((w) => /filter is empty.*entire dataset/.test(w)), JSON.stringify(page.warnings));
  }
  // The commands the page prints are run as printed (curl against this server), in a folder of their own.
  const page = await json<Manifest & { download: { idc_commands: string[] } }>(await s.post('/v3/cohort/manifest', { filters: {}, page_size: 1 }));
  const { save_manifest, s5cmd_cloud1, s5cmd_cloud2 } = page.download.commands;
  const idcCurl = page.download.idc_commands.at(-1)!.split('\n').find((l) => l.startsWith('curl '))!;
  const dir = mkdtempSync(join(tmpdir(), 'idqs-empty-filter-'));
  try {
    const urls = (await s.ctx.engine.rows(`SELECT series_cloud1_url AS u FROM "index" ${ORDER}`)).map((r) => String(r.u));
    assert.equal(urls.length, all);
    for (const [cmd, file] of [[save_manifest, 'idqs_manifest.txt'], [idcCurl, 'idc_manifest.txt'], [s5cmd_cloud1[0]!, null], [s5cmd_cloud2[0]!, null]] as const) {
      assert.match(cmd, /^curl -fsS /);
      // Asynchronously: the server answering curl runs in this process.
      await promisify(execFile)('bash', ['-c', cmd], { cwd: dir, timeout: 60_000 });
      const saved = file ?? /-o '?([^' ]+)'?$/.exec(cmd)![1]!;
      const lines = readFileSync(join(dir, saved), 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#'));
      assert.equal(lines.length, all, `${saved}: one line per series of the release`);
      if (file) assert.deepEqual(lines, urls, `${saved}: the release's URLs in manifest order`);
      else assert.ok(lines.every((l) => l.startsWith("cp 's3://")), saved);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const r = await s.post('/v3/cohort/manifest.txt', {});
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-total-count'), String(all));
  assert.match(r.headers.get('x-filter-warnings') ?? '', /entire dataset/);
  assert.equal((await r.text()).split('\n').filter(Boolean).length, all);
  // An unwrapped filter is named, with the accepted members.
  const unwrapped = await json<ErrorBody>(await s.post('/v3/cohort/manifest', { terms: { Modality: ['CT'] } }), 422);
  assert.match(unwrapped.error.message, /"terms"/);
  assert.match(unwrapped.error.message, /filters, page, page_size, include_rows/);
});

test('POST /v3/cohort/manifest.txt streams the cloud1 URLs of the cohort in manifest order, with count headers', async () => {
  // The four most common modalities span several blocks of lines (1024) and more than one engine chunk (2048 rows).
  const r = await s.post('/v3/cohort/manifest.txt', { filters: { terms: { Modality: ['CT', 'SR', 'SEG', 'MR'] } } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  const got = lines(await r.text());
  const want = (await s.ctx.engine.rows(`SELECT series_cloud1_url AS u FROM "index" WHERE Modality IN ('CT', 'SR', 'SEG', 'MR') ${ORDER}`)).map((x) => x.u);
  assert.ok(want.length > 2048, `the cohort has ${want.length} series`);
  assert.deepEqual(got, want);
  for (const l of got) assert.match(l, /^s3:\/\/[^/]+\/[0-9a-f-]{36}\/\*$/);
  assert.equal(r.headers.get('x-total-count'), String(want.length));
  assert.equal(r.headers.get('x-returned-count'), String(want.length));
  assert.equal(r.headers.get('x-truncated'), 'false');
  // No cap is configured by default: the whole cohort, and nothing in the body but URLs.
  assert.equal(r.headers.get('x-manifest-limit'), 'none');
  assert.ok(!got.some((l) => l.startsWith('#')));
});

test('manifest.txt: cloud2 and gcs give identical output, with buckets mapped by the dataset stores', async () => {
  const { collection, remapped } = await remappedBucketCohort();
  const filters = { terms: { collection_id: [collection] } };
  const cloud1 = lines(await (await s.post('/v3/cohort/manifest.txt', { filters })).text());
  const aws = lines(await (await s.post('/v3/cohort/manifest.txt', { filters, source: 'aws' })).text());
  const cloud2 = lines(await (await s.post('/v3/cohort/manifest.txt', { filters, source: 'cloud2' })).text());
  const gcs = lines(await (await s.post('/v3/cohort/manifest.txt', { filters, source: 'gcs' })).text());
  assert.deepEqual(aws, cloud1);
  assert.deepEqual(gcs, cloud2);
  assert.equal(cloud2.length, cloud1.length);
  assert.ok(cloud1.length > 0);
  const map = s.ctx.dataset.stores.cloud2.bucket_map;
  let differing = 0;
  cloud1.forEach((u, i) => {
    const m = /^s3:\/\/([^/]+)(\/.*)$/.exec(u)!;
    const expected = `s3://${map[m[1]!] ?? m[1]}${m[2]}`;
    assert.equal(cloud2[i], expected);
    if (remapped.has(m[1]!)) differing++;
  });
  assert.ok(differing > 0, 'at least one URL uses a remapped bucket');
  assert.notDeepEqual(cloud2, cloud1);
});

test('manifest.txt: an unknown source is 400 listing the allowed values', async () => {
  const body = await json<ErrorBody>(await s.post('/v3/cohort/manifest.txt', { filters: NLST_CT, source: 'azure' }), 400);
  assert.equal(body.error.code, 'invalid_query');
  assert.match(body.error.message, /"azure"/);
  for (const v of ['cloud1', 'cloud2', 'aws', 'gcs']) assert.match(body.error.message, new RegExp(`\\b${v}\\b`));
  const fmt = await json<ErrorBody>(await s.post('/v3/cohort/manifest.txt', { filters: NLST_CT, format: 'xml' }), 400);
  assert.match(fmt.error.message, /urls, s5cmd/);
});

test('manifest.txt: limit cuts the list, which stays URLs only; the headers say it is truncated, and an s5cmd run file also says it in its last comment line', async () => {
  const r = await s.post('/v3/cohort/manifest.txt', { filters: NLST_CT, limit: 7 });
  const all = lines(await r.text());
  assert.equal(all.length, 7);
  // Every line is a URL, as a client reading it line by line takes it.
  for (const l of all) assert.equal(new URL(l).protocol, 's3:', l);
  const total = (await sqlCounts(`collection_id = 'nlst' AND Modality = 'CT'`, [])).series;
  const run = lines(await (await s.post('/v3/cohort/manifest.txt', { filters: NLST_CT, limit: 7, format: 's5cmd' })).text());
  assert.equal(run.at(-1), `# Truncated: 7 of ${total} series listed (limit 7); ${total - 7} series are not in this list. Raise the limit or narrow the filter to get them.`);
  assert.equal(r.headers.get('x-total-count'), String(total));
  assert.equal(r.headers.get('x-returned-count'), '7');
  assert.equal(r.headers.get('x-truncated'), 'true');
  assert.equal(r.headers.get('x-manifest-limit'), '7');
  const zero = await json<ErrorBody>(await s.post('/v3/cohort/manifest.txt', { filters: NLST_CT, limit: 0 }), 422);
  assert.match(zero.error.message, /limit/);
});

test('manifest.txt and manifest: limits above the manifest cap are lowered to it', async () => {
  const t = await startServer({ manifestCap: 10 });
  try {
    const r = await t.post('/v3/cohort/manifest.txt', { filters: NLST_CT, limit: 1000 });
    assert.equal(r.status, 200);
    const all = lines(await r.text());
    assert.equal(all.length, 10);
    assert.ok(all.every((l) => l.startsWith('s3://')));
    assert.equal(r.headers.get('x-truncated'), 'true');
    assert.equal(r.headers.get('x-manifest-limit'), '10');
    assert.equal(r.headers.get('x-returned-count'), '10');
    assert.equal(r.headers.get('x-truncated'), 'true');
    const warnings = JSON.parse(r.headers.get('x-filter-warnings') ?? '[]') as string[];
    assert.deepEqual(warnings, ['limit 1000 is above the cap of 10; lowered to 10.']);
    const m = await json<Manifest>(await t.post('/v3/cohort/manifest', { filters: NLST_CT, page_size: 2 }));
    assert.equal(m.download.manifest_truncated, m.total_series > 10);
    assert.equal(m.download.manifest_truncated, true);
    assert.match(m.download.note, /caps a manifest at 10 series/);
  } finally {
    await t.close();
  }
});

test('manifest.txt format=s5cmd: a comment with the s5cmd command, then one cp line per series', async () => {
  const { collection } = await remappedBucketCohort();
  const filters = { terms: { collection_id: [collection] } };
  for (const source of ['cloud1', 'cloud2'] as const) {
    const urls = lines(await (await s.post('/v3/cohort/manifest.txt', { filters, source })).text());
    const out = lines(await (await s.post('/v3/cohort/manifest.txt', { filters, source, format: 's5cmd' })).text());
    assert.equal(out[0], `# Run with: s5cmd --no-sign-request --endpoint-url ${s.ctx.dataset.stores[source].endpoint} run idqs_manifest_${source}.s5cmd`);
    const cps = out.slice(1);
    assert.equal(cps.length, urls.length);
    const rows = await s.ctx.engine.rows(`SELECT collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID FROM "index" WHERE collection_id = ? ${ORDER}`, [
      collection,
    ]);
    cps.forEach((l, i) => {
      assert.ok(l.startsWith('cp '), l);
      const r = rows[i]!;
      assert.equal(l, `cp '${urls[i]}' 'idqs-data/${r.collection_id}/${r.PatientID}/${r.StudyInstanceUID}/${r.SeriesInstanceUID}/'`);
    });
  }
});

test('manifest.txt: an empty cohort is an empty body with zero counts', async () => {
  const r = await s.post('/v3/cohort/manifest.txt', { filters: { terms: { Modality: ['ct'] } } });
  assert.equal(r.status, 200);
  assert.equal(await r.text(), '');
  assert.equal(r.headers.get('x-total-count'), '0');
  assert.equal(r.headers.get('x-truncated'), 'false');
  const warnings = JSON.parse(r.headers.get('x-filter-warnings') ?? '[]') as string[];
  assert.ok(warnings.some((w) => w.includes("'CT'")));
});

interface Licenses {
  licenses: { license_short_name: string | null; license_long_name?: string; license_url?: string; series: number; size_TB: number; size_MB: number; commercial_use_allowed: boolean | null }[];
  commercial_use_allowed_for_all: boolean;
  filters_applied: Counts['filters_applied'];
  warnings: string[];
}

test('POST /v3/licenses: breakdown sums to the cohort, NC licenses disallow commercial use', async () => {
  const nc = await s.ctx.engine.one(`SELECT collection_id FROM "index" WHERE license_short_name LIKE '%NC%' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
  assert.ok(nc, 'the dataset has NC series');
  const filter = { terms: { collection_id: [String(nc.collection_id), 'nlst'] } };
  const body = await json<Licenses>(await s.post('/v3/licenses', filter));
  assert.deepEqual(Object.keys(body), ['licenses', 'commercial_use_allowed_for_all', 'filters_applied', 'warnings']);
  const counts = await json<Counts>(await s.post('/v3/cohort/counts', filter));
  assert.equal(body.licenses.reduce((a, l) => a + l.series, 0), counts.series);
  assert.ok(Math.abs(body.licenses.reduce((a, l) => a + l.size_MB, 0) - counts.size_MB) < 0.01);
  const want = await s.ctx.engine.rows(
    `SELECT license_short_name AS n, count(*) AS c FROM "index" WHERE collection_id IN (?, ?) GROUP BY 1 ORDER BY c DESC, n`,
    [String(nc.collection_id), 'nlst'],
  );
  assert.deepEqual(body.licenses.map((l) => [l.license_short_name, l.series]), want.map((r) => [r.n, r.c]));
  assert.ok(body.licenses.some((l) => l.license_short_name?.includes('NC')));
  for (const l of body.licenses) {
    if (l.license_short_name?.includes('NC')) assert.equal(l.commercial_use_allowed, false);
    else if (l.license_short_name?.startsWith('CC BY')) assert.equal(l.commercial_use_allowed, true);
    assert.match(l.license_url ?? '', /^https:\/\//, 'long name and URL come from the curated metadata');
    assert.ok(l.license_long_name && l.license_long_name.length > l.license_short_name!.length);
  }
  assert.equal(body.commercial_use_allowed_for_all, false);
  const wrapped = await json<Licenses>(await s.post('/v3/licenses', { filters: filter }));
  assert.deepEqual(wrapped, body);
});

test('licenses: a cohort of commercial-friendly licenses says so; an empty cohort has none', async () => {
  const ok = await s.ctx.engine.one(
    `SELECT collection_id FROM "index" GROUP BY 1 HAVING bool_and(license_short_name LIKE 'CC BY %' AND license_short_name NOT LIKE '%NC%') ORDER BY count(*) DESC, 1 LIMIT 1`,
  );
  assert.ok(ok);
  const body = await json<Licenses>(await s.post('/v3/licenses', { terms: { collection_id: [String(ok.collection_id)] } }));
  assert.ok(body.licenses.length > 0);
  assert.equal(body.commercial_use_allowed_for_all, true);
  const none = await json<Licenses>(await s.post('/v3/licenses', { terms: { Modality: ['NO_SUCH'] } }));
  assert.deepEqual(none.licenses, []);
  assert.equal(none.commercial_use_allowed_for_all, false);
  const bad = await json<ErrorBody>(await s.post('/v3/licenses', { ranges: { instanceCount: { gt: 1 } } }), 422);
  assert.match(bad.error.message, /"gt"/);
});

test('OpenAPI documents the cohort routes: tags, examples, text/plain manifest and error envelopes', async () => {
  const doc = (await (await s.get('/v3/openapi.json')).json()) as { paths: Record<string, { post: Json }> };
  for (const path of ['/v3/cohort/counts', '/v3/cohort/manifest', '/v3/cohort/manifest.txt', '/v3/licenses']) {
    const op = doc.paths[path]?.post as { tags: string[]; summary: string; description: string; responses: Record<string, Json>; requestBody: Json } | undefined;
    assert.ok(op, path);
    assert.ok(op.tags.length === 1 && ['cohort', 'tools'].includes(op.tags[0]!));
    assert.ok(op.summary && op.description.length > 40);
    assert.ok(op.responses['400'] && op.responses['422'], `${path} declares its errors`);
    const media = (op.requestBody.content as Record<string, { example?: unknown }>)['application/json']!;
    assert.ok(media.example, `${path} has an example body`);
    // The example answers what independent SQL says.
    const r = await s.post(path, media.example);
    const text = await r.text();
    assert.equal(r.status, 200, `${path} example: ${text}`);
    const isJson = (r.headers.get('content-type') ?? '').includes('json');
    await V3_EXAMPLE_CHECKS[`post ${path}`]!(s.ctx.engine, { url: new URL(path, s.url), body: media.example as Json, json: isJson ? JSON.parse(text) : {}, text });
  }
  const txt = doc.paths['/v3/cohort/manifest.txt']!.post as { responses: Record<string, { content: Record<string, unknown>; headers: Json }> };
  assert.ok(txt.responses['200']!.content['text/plain']);
  assert.ok(txt.responses['200']!.headers['X-Total-Count']);
});

test('POST /v3/series/lookup: the rows, sizes and licenses of series given by folder, in manifest order; unknown folders listed', async () => {
  const rows = await s.ctx.engine.rows(
    `SELECT crdc_series_uuid, SeriesInstanceUID, series_size_MB, license_short_name FROM "index" WHERE collection_id IN ('nlst', 'rider_pilot')
     ORDER BY hash(SeriesInstanceUID) LIMIT 7`,
  );
  const unknown = '00000000-0000-4000-8000-000000000000';
  const asked = [...rows.map((r) => String(r.crdc_series_uuid)), unknown, String(rows[0]!.crdc_series_uuid)];
  const r = await s.post('/v3/series/lookup', { crdc_series_uuid: asked });
  const body = await json<{
    series: { crdc_series_uuid: string; SeriesInstanceUID: string }[];
    missing: string[];
    size_MB: number;
    licenses: { license_short_name: string | null; series: number; commercial_use_allowed: boolean | null }[];
    stores: Record<string, { endpoint: string }>;
  }>(r);
  const want = await s.ctx.engine.rows(
    `SELECT SeriesInstanceUID FROM "index" WHERE crdc_series_uuid IN (${rows.map(() => '?').join(', ')}) ORDER BY ${ORDER.replace('ORDER BY ', '')}`,
    rows.map((x) => String(x.crdc_series_uuid)),
  );
  assert.deepEqual(body.series.map((x) => x.SeriesInstanceUID), want.map((x) => x.SeriesInstanceUID));
  assert.deepEqual(body.missing, [unknown]);
  assert.equal(body.size_MB, Math.round(rows.reduce((t, x) => t + Number(x.series_size_MB), 0) * 1000) / 1000);
  const byLicense = new Map<string | null, number>();
  for (const x of rows) byLicense.set(x.license_short_name as string | null, (byLicense.get(x.license_short_name as string | null) ?? 0) + 1);
  assert.deepEqual(new Map(body.licenses.map((l) => [l.license_short_name, l.series])), byLicense);
  for (const l of body.licenses) {
    const n = l.license_short_name;
    assert.equal(l.commercial_use_allowed, n === null ? null : /NC/.test(n) ? false : /^CC BY/.test(n) ? true : null, String(n));
  }
  assert.equal(body.stores.cloud1!.endpoint, s.ctx.dataset.stores.cloud1.endpoint);

  const bad = await json<ErrorBody>(await s.post('/v3/series/lookup', { crdc_series_uuid: ['not-a-uuid'] }), 400);
  assert.equal(bad.error.code, 'invalid_query');
  assert.match(bad.error.message, /crdc_series_uuid holds UUIDs .*got "not-a-uuid"/);
  const empty = await json<ErrorBody>(await s.post('/v3/series/lookup', { crdc_series_uuid: [] }), 422);
  assert.match(empty.error.message, /body\.crdc_series_uuid must NOT have fewer than 1 items/);
  const other = await json<ErrorBody>(await s.post('/v3/series/lookup', { crdc_series_uuid: [unknown], uuids: [unknown] }), 422);
  assert.match(other.error.message, /Unknown member "uuids" in body; accepted: crdc_series_uuid\./);
});
