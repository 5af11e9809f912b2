// manifest.txt as a table (format csv, tsv or json, with chosen columns) on the
// test dataset, through a real server: every row and cell against SQL written
// here over index, the url column against the URL manifest of the same store,
// and the refusals of bad columns.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './fixture.ts';

const ORDER = 'ORDER BY collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
});

/** RFC 4180 CSV: quoted fields with doubled quotes, fields that may hold commas and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '"' && text[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (quoted && ch === '"') quoted = false;
    else if (quoted) cell += ch;
    else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  assert.equal(cell + row.join(''), '', 'the body ends with a line break');
  return rows;
}

const urlLines = async (body: object) => {
  const r = await s.post('/v3/cohort/manifest.txt', body);
  assert.equal(r.status, 200);
  return (await r.text()).split('\n').filter((l) => l !== '');
};

test('csv: a header row, then every series of the cohort in manifest order, every value as SQL casts it to text; url is the URL manifest line', async () => {
  const filters = { terms: { Modality: ['CT', 'MR'] } };
  const r = await s.post('/v3/cohort/manifest.txt', { filters, format: 'csv' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
  const [header, ...rows] = parseCsv(await r.text());
  assert.deepEqual(header, ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality', 'instanceCount', 'series_size_MB', 'url']);
  const want = await s.ctx.engine.rows(
    `SELECT collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, CAST(instanceCount AS VARCHAR) AS n, CAST(series_size_MB AS VARCHAR) AS mb
     FROM "index" WHERE Modality IN ('CT', 'MR') ${ORDER}`,
  );
  assert.ok(want.length > 1024, `more than one block of lines (${want.length} series)`);
  assert.equal(rows.length, want.length);
  assert.equal(r.headers.get('x-total-count'), String(want.length));
  const urls = await urlLines({ filters });
  rows.forEach((row, i) => {
    const w = want[i]!;
    assert.deepEqual(row, [w.collection_id, w.PatientID, w.StudyInstanceUID, w.SeriesInstanceUID, w.Modality, w.n ?? '', w.mb ?? '', urls[i]], `row ${i}`);
  });
});

test('tsv with chosen columns (one with NULLs): each cell as SQL writes it, tabs and line breaks as spaces; a string of names works like a list', async () => {
  const columns = ['SeriesInstanceUID', 'SeriesDescription', 'BodyPartExamined', 'license_short_name'];
  const nulls = await s.ctx.engine.one(`SELECT collection_id AS c FROM "index" WHERE BodyPartExamined IS NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`);
  const filters = { terms: { collection_id: [nulls!.c as string] } };
  const r = await s.post('/v3/cohort/manifest.txt', { filters, format: 'tsv', columns });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/tab-separated-values; charset=utf-8');
  const text = await r.text();
  const [header, ...rows] = text.split('\n').slice(0, -1).map((l) => l.split('\t'));
  assert.deepEqual(header, columns);
  const want = await s.ctx.engine.rows(
    `SELECT ${columns.map((c) => `coalesce(regexp_replace(CAST("${c}" AS VARCHAR), '[\\t\\r\\n]', ' ', 'g'), '') AS "${c}"`).join(', ')}
     FROM "index" WHERE collection_id = ? ${ORDER}`,
    [filters.terms.collection_id[0]!],
  );
  assert.ok(want.length > 0);
  assert.deepEqual(rows, want.map((w) => columns.map((c) => String(w[c]))));
  assert.ok(rows.some((row) => row[2] === ''), 'an absent value is an empty cell');
  const again = await s.post('/v3/cohort/manifest.txt', { filters, format: 'TSV', columns: ` ${columns.join(' , ')} ` });
  assert.equal(await again.text(), text);
});

test('json: one array of objects with the chosen columns, numbers as numbers and absent values null; cloud2 URLs in url; a limit cuts it and the headers say so', async () => {
  const filters = { terms: { Modality: ['SEG'] } };
  const columns = ['SeriesInstanceUID', 'instanceCount', 'series_size_MB', 'StudyDate', 'url'];
  const r = await s.post('/v3/cohort/manifest.txt', { filters, format: 'json', columns, source: 'gcs' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
  const got = JSON.parse(await r.text()) as Record<string, unknown>[];
  const want = await s.ctx.engine.rows(`SELECT SeriesInstanceUID, instanceCount, CAST(series_size_MB AS DOUBLE) AS mb, CAST(StudyDate AS VARCHAR) AS d FROM "index" WHERE Modality = 'SEG' ${ORDER}`);
  const urls = await urlLines({ filters, source: 'cloud2' });
  assert.equal(got.length, want.length);
  got.forEach((o, i) => {
    const w = want[i]!;
    assert.deepEqual(Object.keys(o), columns);
    assert.deepEqual(o, { SeriesInstanceUID: w.SeriesInstanceUID, instanceCount: w.instanceCount === null ? null : Number(w.instanceCount), series_size_MB: w.mb, StudyDate: w.d, url: urls[i] }, `row ${i}`);
  });
  const cut = await s.post('/v3/cohort/manifest.txt', { filters, format: 'json', columns: ['SeriesInstanceUID'], limit: 3 });
  assert.deepEqual(JSON.parse(await cut.text()), want.slice(0, 3).map((w) => ({ SeriesInstanceUID: w.SeriesInstanceUID })));
  assert.equal(cut.headers.get('x-truncated'), 'true');
  assert.equal(cut.headers.get('x-returned-count'), '3');
  const none = await s.post('/v3/cohort/manifest.txt', { filters: { terms: { Modality: ['SEG'], collection_id: ['no_such_collection'] } }, format: 'json' });
  if (none.status === 200) assert.deepEqual(JSON.parse(await none.text()), []);
  else assert.equal(none.status, 422, 'an unknown collection is refused, never a broken body');
});

test('bad columns are 422s that say what to fix; nothing is streamed', async () => {
  const cases: [object, RegExp][] = [
    [{ format: 'csv', columns: ['SeriesInstanceUID', 'modality'] }, /no column "modality".*index table.*Did you mean 'Modality'/],
    [{ format: 'csv', columns: ['url', 'url'] }, /lists "url" twice/],
    [{ format: 'tsv', columns: 'SeriesInstanceUID,,Modality' }, /empty column/],
    [{ format: 'urls', columns: ['SeriesInstanceUID'] }, /applies to the table formats \(csv, tsv, json\)/],
    [{ format: 'xml' }, /Unknown format "xml"\. Allowed values: urls, s5cmd, csv, tsv, json/],
    [{ format: 'json', columns: ['x"; DROP TABLE index; --'] }, /no column/],
  ];
  for (const [body, message] of cases) {
    const r = await s.post('/v3/cohort/manifest.txt', body);
    const b = (await r.json()) as { error: { message: string } };
    assert.ok(r.status === 422 || r.status === 400, `${JSON.stringify(body)}: ${r.status}`);
    assert.match(b.error.message, message, JSON.stringify(body));
  }
  const count = await s.ctx.engine.one(`SELECT count(*) AS n FROM "index"`);
  assert.ok(Number(count!.n) > 0, 'index is intact');
});
