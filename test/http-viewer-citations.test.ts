import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createContext } from '../src/core/context.ts';
import { PLATFORM_CITATION } from '../src/core/data/platform-citation.ts';
import type { BibRecord } from '../src/core/data/manifest.ts';
import { apaAuthors, apaInitials, bibEscape, formatApa, formatCitations, formatRis } from '../src/core/services/citations.ts';
import { buildApp } from '../src/http/app.ts';
import { startServer, testConfig, testDataset, type TestServer } from './fixture.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
});

interface ErrBody {
  error: { code: string; message: string };
}
interface ViewerBody {
  viewer_url: string;
  viewer: string;
  study_instance_uid: string;
  series_instance_uid: string | null;
  modalities: string[];
}

async function getJson<T>(path: string): Promise<{ status: number; body: T; headers: Headers }> {
  const r = await s.get(path);
  return { status: r.status, body: (await r.json()) as T, headers: r.headers };
}

async function expectError(r: { status: number; body: unknown }, status: number, code: string, ...contains: string[]): Promise<void> {
  assert.equal(r.status, status, JSON.stringify(r.body));
  const e = (r.body as ErrBody).error;
  assert.equal(e.code, code);
  for (const c of contains) assert.ok(e.message.includes(c), `${JSON.stringify(e.message)} should contain ${JSON.stringify(c)}`);
}

const q = (params: Record<string, string>) => `/v3/viewer-url?${new URLSearchParams(params)}`;

async function modalitiesOf(study: string): Promise<string[]> {
  return (await s.ctx.engine.rows('SELECT DISTINCT Modality FROM "index" WHERE StudyInstanceUID = ? ORDER BY 1', [study])).map((r) => String(r.Modality));
}

/** A CT series in a study without slide microscopy. */
async function radiologySeries(): Promise<{ study: string; series: string }> {
  const row = await s.ctx.engine.one(
    `SELECT StudyInstanceUID AS study, SeriesInstanceUID AS series FROM "index"
     WHERE Modality = 'CT' AND StudyInstanceUID NOT IN (SELECT StudyInstanceUID FROM "index" WHERE Modality = 'SM')
     ORDER BY SeriesInstanceUID LIMIT 1`,
  );
  assert.ok(row);
  return { study: String(row.study), series: String(row.series) };
}

async function smSeries(): Promise<{ study: string; series: string }> {
  const row = await s.ctx.engine.one(`SELECT StudyInstanceUID AS study, SeriesInstanceUID AS series FROM "index" WHERE Modality = 'SM' ORDER BY 2 LIMIT 1`);
  assert.ok(row, 'the test dataset has slide microscopy');
  return { study: String(row.study), series: String(row.series) };
}

// ---------------------------------------------------------------------------
// Viewer

test('viewer-url for a series looks up its study and opens OHIF v3 for radiology', async () => {
  const { study, series } = await radiologySeries();
  const base = s.ctx.config.viewerBaseUrl;
  const r = await getJson<ViewerBody>(q({ series_instance_uid: series }));
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    viewer_url: `${base}/v3/viewer/?StudyInstanceUIDs=${study}&initialSeriesInstanceUID=${series}`,
    viewer: 'ohif_v3',
    study_instance_uid: study,
    series_instance_uid: series,
    modalities: await modalitiesOf(study),
  });
  assert.ok(r.body.modalities.includes('CT'));
  assert.equal(base, 'https://viewer.imaging.datacommons.cancer.gov');
  assert.ok(r.headers.get('etag'), 'viewer links depend only on the release: cacheable');
  assert.match(r.headers.get('cache-control') ?? '', /max-age/);

  const st = await getJson<ViewerBody>(q({ study_instance_uid: study }));
  assert.equal(st.body.viewer_url, `${base}/v3/viewer/?StudyInstanceUIDs=${study}`);
  assert.equal(st.body.series_instance_uid, null);

  const both = await getJson<ViewerBody>(q({ study_instance_uid: study, series_instance_uid: series }));
  assert.deepEqual(both.body, r.body);
});

test('viewer-url uses the ohif_v2 and slim templates when asked', async () => {
  const { study, series } = await radiologySeries();
  const base = s.ctx.config.viewerBaseUrl;
  const v2 = await getJson<ViewerBody>(q({ series_instance_uid: series, viewer: 'ohif_v2' }));
  assert.equal(v2.body.viewer, 'ohif_v2');
  assert.equal(v2.body.viewer_url, `${base}/viewer/${study}?SeriesInstanceUID=${series}`);
  const v2s = await getJson<ViewerBody>(q({ study_instance_uid: study, viewer: 'ohif_v2' }));
  assert.equal(v2s.body.viewer_url, `${base}/viewer/${study}`);
  const slim = await getJson<ViewerBody>(q({ study_instance_uid: study, viewer: 'slim' }));
  assert.equal(slim.body.viewer_url, `${base}/slim/studies/${study}`);
});

test('viewer-url opens Slim by default for a study with slide microscopy; an explicit viewer wins', async () => {
  const { study, series } = await smSeries();
  const base = s.ctx.config.viewerBaseUrl;
  const r = await getJson<ViewerBody>(q({ series_instance_uid: series }));
  assert.equal(r.status, 200);
  assert.equal(r.body.viewer, 'slim');
  assert.equal(r.body.viewer_url, `${base}/slim/studies/${study}/series/${series}`);
  assert.ok(r.body.modalities.includes('SM'));
  assert.deepEqual(r.body.modalities, await modalitiesOf(study));
  const st = await getJson<ViewerBody>(q({ study_instance_uid: study }));
  assert.equal(st.body.viewer, 'slim');
  assert.equal(st.body.viewer_url, `${base}/slim/studies/${study}`);
  const ohif = await getJson<ViewerBody>(q({ study_instance_uid: study, viewer: 'ohif_v3' }));
  assert.equal(ohif.body.viewer, 'ohif_v3');
  assert.equal(ohif.body.viewer_url, `${base}/v3/viewer/?StudyInstanceUIDs=${study}`);
});

test('viewer-url refuses a series that is not part of the given study, naming the study it belongs to', async () => {
  const ct = await radiologySeries();
  const sm = await smSeries();
  assert.notEqual(ct.study, sm.study);
  const r = await getJson<ErrBody>(q({ study_instance_uid: sm.study, series_instance_uid: ct.series }));
  await expectError(r, 400, 'invalid_query', ct.series, sm.study, `belongs to study "${ct.study}"`);
});

test('viewer-url errors: neither UID, unknown viewer, unknown series or study, unknown parameter', async () => {
  await expectError(await getJson(q({})), 400, 'invalid_query', 'Provide series_instance_uid or study_instance_uid');
  await expectError(await getJson(q({ study_instance_uid: '' })), 400, 'invalid_query', 'Provide series_instance_uid or study_instance_uid');
  const { study } = await radiologySeries();
  // The viewer is checked before any lookup: an unknown study with a bad viewer is still the viewer error.
  for (const bad of ['OHIF_V3', 'ohif', 'ohif_v4']) {
    await expectError(await getJson(q({ study_instance_uid: study, viewer: bad })), 400, 'invalid_query', 'ohif_v2, ohif_v3, slim', JSON.stringify(bad));
  }
  await expectError(await getJson(q({ study_instance_uid: '9.9.9', viewer: 'x' })), 400, 'invalid_query', 'viewer must be one of');
  await expectError(await getJson(q({ series_instance_uid: '1.2.3.4.5' })), 404, 'not_found', 'SeriesInstanceUID not found', '"1.2.3.4.5"');
  await expectError(await getJson(q({ study_instance_uid: '1.2.3.4.6' })), 404, 'not_found', 'StudyInstanceUID not found', '"1.2.3.4.6"');
  await expectError(await getJson(q({ study: study })), 422, 'invalid_request', 'Unknown member "study"', 'study_instance_uid');
});

test('the OpenAPI examples of viewer-url are real UIDs of the served data and resolve', async () => {
  const doc = (await (await s.get('/v3/openapi.json')).json()) as {
    paths: Record<string, Record<string, { parameters: { name: string; example?: string }[]; responses: Record<string, unknown> }>>;
  };
  const op = doc.paths['/v3/viewer-url']!.get!;
  const params: Record<string, string> = {};
  for (const p of op.parameters) if (p.example !== undefined) params[p.name] = p.example;
  assert.deepEqual(Object.keys(params).sort(), ['series_instance_uid', 'study_instance_uid', 'viewer']);
  for (const code of ['200', '400', '404']) assert.ok(op.responses[code], `declares ${code}`);
  const r = await getJson<ViewerBody>(q(params));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.viewer, 'ohif_v3');
  const owner = await s.ctx.engine.one('SELECT StudyInstanceUID, Modality, collection_id FROM "index" WHERE SeriesInstanceUID = ?', [params.series_instance_uid!]);
  assert.equal(owner!.StudyInstanceUID, params.study_instance_uid);
  assert.equal(owner!.Modality, 'CT');
  const nlstCt = await s.ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE collection_id = 'nlst' AND Modality = 'CT'`);
  assert.ok(Number(nlstCt!.n) > 0, 'the test data has CT series of nlst');
  assert.equal(owner!.collection_id, 'nlst', 'the example prefers a CT series of nlst');
});

// ---------------------------------------------------------------------------
// Citations

interface CslItem {
  id: string;
  type: string;
  DOI: string;
  URL: string;
  title?: string;
  author?: ({ family: string; given?: string } | { literal: string })[];
  issued?: { 'date-parts': number[][] };
}
interface CitationsBody {
  format: string;
  count: number;
  dois: string[];
  citations: (string | CslItem)[];
  missing_metadata: string[];
  idc_acknowledgment: string | CslItem;
  recommendation: string;
  filters_applied: { terms: Record<string, string[]>; ranges: Record<string, unknown> };
  warnings: string[];
}

async function cite(body: unknown): Promise<{ status: number; body: CitationsBody & ErrBody }> {
  const r = await s.post('/v3/citations', body);
  return { status: r.status, body: (await r.json()) as CitationsBody & ErrBody };
}

/** Distinct source DOIs of a collection, ordered case-insensitively, computed independently. */
async function doisOf(collection: string | null): Promise<string[]> {
  const rows = await s.ctx.engine.rows(
    `SELECT DISTINCT source_DOI AS d FROM "index" WHERE (? IS NULL OR collection_id = ?) AND source_DOI IS NOT NULL AND source_DOI <> '' ORDER BY lower(source_DOI)`,
    [collection, collection],
  );
  return rows.map((r) => String(r.d));
}

async function ownDoi(collection: string): Promise<string> {
  const row = await s.ctx.engine.one(
    `SELECT any_value(source_DOI) AS d FROM "index" WHERE collection_id = ? AND (analysis_result_id IS NULL OR analysis_result_id = '')`,
    [collection],
  );
  assert.ok(row?.d, `${collection} has a DOI`);
  return String(row.d);
}

test('citations (APA by default) of one collection include its DOI and every source DOI of the cohort', async () => {
  const r = await cite({ filters: { terms: { collection_id: ['nlst'] } } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body), [
    'format',
    'count',
    'dois',
    'citations',
    'missing_metadata',
    'idc_acknowledgment',
    'recommendation',
    'filters_applied',
    'warnings',
  ]);
  assert.equal(r.body.format, 'apa');
  const expected = await doisOf('nlst');
  assert.deepEqual(r.body.dois, expected);
  assert.equal(r.body.count, expected.length);
  assert.equal(r.body.citations.length, expected.length);
  const own = await ownDoi('nlst');
  assert.ok(r.body.dois.includes(own));
  r.body.citations.forEach((c, i) => {
    assert.equal(typeof c, 'string');
    assert.ok((c as string).endsWith(`https://doi.org/${expected[i]}`), `${c} ends with its DOI link`);
    assert.match(c as string, /\(\d{4}\)\. /, 'APA year');
  });
  const nlstCitation = r.body.citations[r.body.dois.indexOf(own)] as string;
  assert.match(nlstCitation, /\[Data set\]\./);
  assert.deepEqual(r.body.missing_metadata, []);
  assert.deepEqual(r.body.filters_applied, { terms: { collection_id: ['nlst'] }, ranges: {} });
  assert.deepEqual(r.body.warnings, []);
  const ack = r.body.idc_acknowledgment as string;
  assert.match(ack, /^Fedorov, A\., Longabaugh, W\. J\. R\., /);
  assert.match(ack, /\. \. \. Kikinis, R\. \(2023\)\. /, 'APA 7: 21 authors list the first 19, an ellipsis and the last');
  assert.match(ack, /RadioGraphics, 43\(12\), e230180\. https:\/\/doi\.org\/10\.1148\/rg\.230180$/);
  assert.match(r.body.recommendation, /10\.1148\/rg\.230180/);
  assert.match(r.body.recommendation, /idc_acknowledgment/);
});

test('every format parses: bibtex entries, RIS records and CSL-JSON objects; the format is case-insensitive', async () => {
  const filters = { terms: { collection_id: ['nlst', 'rider_pilot'] } };
  const expected = [...new Set([...(await doisOf('nlst')), ...(await doisOf('rider_pilot'))])].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));

  const bib = await cite({ filters, citation_format: 'BibTeX' });
  assert.equal(bib.status, 200, JSON.stringify(bib.body));
  assert.equal(bib.body.format, 'bibtex');
  assert.deepEqual(bib.body.dois, expected);
  const entries = [...(bib.body.citations as string[]), bib.body.idc_acknowledgment as string];
  const keys = new Set<string>();
  for (const [i, e] of entries.entries()) {
    const m = /^@(misc|article)\{([^,\s]+),\n/.exec(e);
    assert.ok(m, `entry starts with @type{key,: ${e.slice(0, 40)}`);
    keys.add(m[2]!);
    assert.ok(e.endsWith('\n}'));
    let depth = 0;
    for (const ch of e.replace(/\\[{}]/g, '')) {
      if (ch === '{') depth++;
      if (ch === '}') depth--;
      assert.ok(depth >= 0, 'braces never close more than they open');
    }
    assert.equal(depth, 0, 'braces balance');
    if (i < expected.length) assert.ok(e.includes(`doi = {${expected[i]}}`));
  }
  assert.equal(keys.size, entries.length, 'citation keys are unique');
  assert.match(bib.body.idc_acknowledgment as string, /^@article\{/);
  assert.match(bib.body.idc_acknowledgment as string, /journal = \{RadioGraphics\}/);

  const ris = await cite({ filters, citation_format: 'ris' });
  assert.equal(ris.body.format, 'ris');
  for (const [i, e] of (ris.body.citations as string[]).entries()) {
    assert.ok(e.startsWith('TY  - DATA\n'), e.slice(0, 20));
    assert.ok(e.endsWith('ER  - '));
    for (const line of e.split('\n')) assert.match(line, /^[A-Z][A-Z0-9] {2}- /);
    assert.ok(e.includes(`\nDO  - ${expected[i]}\n`));
    assert.ok(e.includes('\nAU  - ') && e.includes('\nTI  - ') && /\nPY {2}- \d{4}\n/.test(e));
  }
  const risAck = ris.body.idc_acknowledgment as string;
  assert.ok(risAck.startsWith('TY  - JOUR\n') && risAck.endsWith('ER  - '));
  assert.equal(risAck.match(/^AU {2}- /gm)?.length, PLATFORM_CITATION.authors.length, 'one AU line per author');

  const csl = await cite({ filters, citation_format: ' CSL-JSON ' });
  assert.equal(csl.body.format, 'csl-json');
  const items = csl.body.citations as CslItem[];
  assert.deepEqual(
    items.map((c) => c.DOI),
    expected,
  );
  for (const c of items) {
    assert.equal(typeof c, 'object');
    assert.equal(c.type, 'dataset');
    assert.equal(c.URL, `https://doi.org/${c.DOI}`);
    assert.ok(c.title && c.author && c.author.length > 0);
    assert.match(String(c.issued?.['date-parts'][0]?.[0]), /^\d{4}$/);
  }
  const ack = csl.body.idc_acknowledgment as CslItem;
  assert.equal(ack.type, 'article-journal');
  assert.equal(ack.DOI, '10.1148/rg.230180');
  assert.deepEqual(ack.author?.[0], { family: 'Fedorov', given: 'Andrey' });
});

test('citations without filters cover every source DOI and warn that the filter is empty', async () => {
  const r = await cite({});
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.dois, await doisOf(null));
  assert.ok(r.body.warnings.some((w) => /empty/.test(w)));
});

test('citations errors: unknown format (checked first), unknown attribute, unknown member', async () => {
  for (const f of ['turtle', 'mla', '']) {
    await expectError(await cite({ citation_format: f }), 400, 'invalid_query', `"${f}"`, 'apa, bibtex, csl-json, ris');
  }
  // The format is checked before the filter is compiled or any query runs.
  await expectError(await cite({ filters: { terms: { no_such_attr: ['x'] } }, citation_format: 'turtle' }), 400, 'invalid_query', 'citation_format');
  await expectError(await cite({ filters: { terms: { no_such_attr: ['x'] } } }), 400, 'invalid_query', 'no_such_attr');
  await expectError(await cite({ filter: { terms: { collection_id: ['nlst'] } } }), 422, 'invalid_request', 'Unknown member "filter"', 'filters, citation_format');
  await expectError(await cite({ citation_format: ['apa', 'ris'] }), 422, 'invalid_request', 'citation_format');
});

test('a DOI without a stored record is cited from the release text; without that either, by DOI and listed in missing_metadata, in every format', async () => {
  // A copy of the test database with the record of nlst's own DOI removed.
  const dir = mkdtempSync(join(tmpdir(), 'idqs-cite-'));
  const copy = join(dir, 'cites.duckdb');
  copyFileSync((await testDataset()).db, copy);
  const own = await ownDoi('nlst');
  const inst = await DuckDBInstance.create(copy);
  const conn = await inst.connect();
  await conn.run('DELETE FROM idqs_meta.bibliography WHERE doi = lower($1)', [own]);
  const text = (await conn.runAndReadAll(`SELECT s.citation FROM (SELECT unnest(sources) AS s FROM collections_index) WHERE lower(s.source_doi) = lower($1)`, [own])).getRows()[0]![0] as string;
  assert.ok(text, 'the generated release writes a citation for the DOI');
  conn.closeSync();
  inst.closeSync();
  const fromRelease = await createContext(testConfig(), copy);
  try {
    const app = await buildApp(fromRelease);
    const r = await app.inject({ method: 'POST', url: '/v3/citations', payload: { filters: { terms: { collection_id: ['nlst'] } }, citation_format: 'apa' } });
    const body = r.json() as CitationsBody;
    assert.deepEqual(body.missing_metadata, []);
    assert.equal(body.citations[body.dois.indexOf(own)], text.replace(/\s+/g, ' ').trim());
    await app.close();
  } finally {
    fromRelease.engine.close();
  }
  // Now without the release's own texts either.
  const inst2 = await DuckDBInstance.create(copy);
  const conn2 = await inst2.connect();
  await conn2.run(`UPDATE collections_index SET sources = list_transform(sources, s -> struct_update(s, citation := NULL::VARCHAR))`);
  await conn2.run(`UPDATE analysis_results_index SET citation = NULL`);
  conn2.closeSync();
  inst2.closeSync();
  const ctx = await createContext(testConfig(), copy);
  const app = await buildApp(ctx);
  try {
    const post = async (citation_format: string) => {
      const r = await app.inject({ method: 'POST', url: '/v3/citations', payload: { filters: { terms: { collection_id: ['nlst'] } }, citation_format } });
      assert.equal(r.statusCode, 200, r.body);
      return r.json() as CitationsBody;
    };
    const apa = await post('apa');
    assert.deepEqual(apa.missing_metadata, [own]);
    assert.deepEqual(apa.dois, await doisOf('nlst'), 'nothing is dropped');
    const i = apa.dois.indexOf(own);
    assert.ok((apa.citations[i] as string).startsWith(`https://doi.org/${own} [`));
    assert.match(apa.citations[i] as string, /not available offline/);
    const others = apa.citations.filter((_, j) => j !== i) as string[];
    for (const c of others) assert.match(c, /\(\d{4}\)\./, 'the other DOIs keep full citations');

    const bib = await post('bibtex');
    assert.match(bib.citations[i] as string, /^@misc\{[^,]+,\n/);
    assert.ok((bib.citations[i] as string).includes(`doi = {${own}}`));
    const ris = await post('ris');
    assert.ok((ris.citations[i] as string).startsWith('TY  - DATA\n') && (ris.citations[i] as string).endsWith('ER  - '));
    assert.ok((ris.citations[i] as string).includes(`DO  - ${own}\n`));
    const csl = await post('csl-json');
    assert.deepEqual(Object.keys(csl.citations[i] as CslItem).sort(), ['DOI', 'URL', 'id', 'note', 'type']);
    assert.equal((csl.citations[i] as CslItem).DOI, own);
  } finally {
    await app.close();
    ctx.engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------
// Formatters

const person = (family: string, given: string) => ({ family, given });

test('APA author lists: initials, "&" before the last of up to 20, ellipsis beyond, group authors verbatim', () => {
  assert.equal(apaInitials('William J. R.'), 'W. J. R.');
  assert.equal(apaInitials('Jean-Paul'), 'J.-P.');
  assert.equal(apaInitials('andré'), 'A.');
  assert.equal(apaAuthors([person('Smith', 'Jane')]), 'Smith, J.');
  assert.equal(apaAuthors([person('Smith', 'Jane'), person('Doe', 'John Q.')]), 'Smith, J., & Doe, J. Q.');
  assert.equal(apaAuthors([person('A', 'X'), { literal: 'The Group' }, person('C', 'Z')]), 'A, X., The Group, & C, Z.');
  const twenty = Array.from({ length: 20 }, (_, i) => person(`F${i + 1}`, 'G'));
  assert.match(apaAuthors(twenty), /F19, G\., & F20, G\.$/);
  const many = Array.from({ length: 25 }, (_, i) => person(`F${i + 1}`, 'G'));
  const list = apaAuthors(many);
  assert.match(list, /F19, G\., \. \. \. F25, G\.$/);
  assert.ok(!list.includes('F20'));
});

test('APA references of data sets and articles; the publisher is omitted when it is the group author', () => {
  const ds: BibRecord = {
    doi: '10.1/abc',
    title: 'Some data.',
    authors: [person('Smith', 'Jane'), person('Doe', 'John')],
    year: 2020,
    publisher: 'Zenodo',
    url: 'https://doi.org/10.1/abc',
    type: 'dataset',
  };
  assert.equal(formatApa(ds), 'Smith, J., & Doe, J. (2020). Some data [Data set]. Zenodo. https://doi.org/10.1/abc');
  assert.equal(formatApa({ ...ds, authors: [{ literal: 'Zenodo' }] }), 'Zenodo. (2020). Some data [Data set]. https://doi.org/10.1/abc');
  assert.equal(formatApa({ ...ds, authors: [] }), 'Some data [Data set]. (2020). Zenodo. https://doi.org/10.1/abc');
  const art: BibRecord = { ...ds, type: 'article', title: 'A study', container_title: 'Journal', volume: '4', issue: '2', pages: '10-20' };
  assert.equal(formatApa(art), 'Smith, J., & Doe, J. (2020). A study. Journal, 4(2), 10-20. https://doi.org/10.1/abc');
});

test('BibTeX escapes braces and LaTeX specials, keeps keys unique; RIS has one AU per author', () => {
  assert.equal(bibEscape('a {b} 50% & c_d \\ e'), 'a \\{b\\} 50\\% \\& c\\_d \\textbackslash{} e');
  const rec: BibRecord = {
    doi: '10.1/x',
    title: 'Data {with} braces',
    authors: [person('Kowalski', 'A.'), person('Nguyen', 'B.')],
    year: 2021,
    publisher: 'P',
    url: 'https://doi.org/10.1/x',
    type: 'dataset',
  };
  const twin = { ...rec, doi: '10.1/y', url: 'https://doi.org/10.1/y' };
  const out = formatCitations(
    [
      { doi: rec.doi, record: rec },
      { doi: twin.doi, record: twin },
    ],
    PLATFORM_CITATION,
    'bibtex',
  );
  const [a, b] = out.citations as string[];
  assert.ok(a!.startsWith('@misc{kowalski2021braces,\n'), a);
  assert.ok(b!.startsWith('@misc{kowalski2021bracesa,\n'), b);
  assert.ok(a!.includes('title = {{Data \\{with\\} braces}}'));
  assert.ok(a!.includes('author = {Kowalski, A. and Nguyen, B.}'));
  const ris = formatRis(rec);
  assert.equal(ris, ['TY  - DATA', 'AU  - Kowalski, A.', 'AU  - Nguyen, B.', 'TI  - Data {with} braces', 'PY  - 2021', 'PB  - P', 'DO  - 10.1/x', 'UR  - https://doi.org/10.1/x', 'ER  - '].join('\n'));
});
