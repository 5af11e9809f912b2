// The resolve answer, byte for byte, on the pinned real release: a manifest
// holding a sample of every class (folders current, revised and removed,
// series and study UIDs, unknown identifiers, a header, invalid lines), lines
// whose text needs JSON escaping (quotes, backslashes, control characters,
// non-ASCII, a lone surrogate), sizes that are integral doubles, and lines
// past the first written block. The expected document is built here, key by
// key in the documented order, from SQL over the release's own Parquet files;
// the route's JSON must be exactly JSON.stringify of it, and its TSV form the
// same lines cell by cell.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, type TestServer } from './fixture.ts';
import { SKIP_REAL as skip, twoReleases, type TwoReleases } from './real-releases.ts';
import { litList } from './sql-text.ts';

let rel: TwoReleases;
let s: TestServer;

before(async () => {
  if (skip) return;
  rel = await twoReleases();
  s = await startServer({}, rel.current.db);
  // The columns of the current version the answer gives, read from the release's own index file.
  const file = join(rel.current.fetch.folder, 'idc_index.parquet').replaceAll("'", "''");
  await rel.raw.run(`CREATE TABLE shape_index AS SELECT SeriesInstanceUID, collection_id, PatientID, StudyInstanceUID, Modality, crdc_series_uuid,
    series_revised_idc_version, series_aws_url, aws_bucket, series_size_MB, license_short_name FROM read_parquet('${file}')`);
});
after(async () => {
  await s?.close();
  rel?.close();
});

type Obj = Record<string, unknown>;
const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const list = litList;

/** One of each kind of line, picked from the pinned release by a fixed order. */
async function samples(): Promise<Record<string, string[]>> {
  const one = async (name: string, sql: string, n: number) => {
    const rows = await rel.rows(`${sql} LIMIT ${n}`);
    assert.equal(rows.length, n, `the release has ${n} ${name}`);
    return rows.map((r) => String(Object.values(r)[0]));
  };
  const inPrior = `SELECT SeriesInstanceUID FROM cur_prior`;
  // Series whose earlier versions disagree on their facts (collection, patient, study or modality): the answer gives the current ones.
  const differ = `SELECT SeriesInstanceUID FROM cur_prior GROUP BY 1 HAVING count(DISTINCT (collection_id, PatientID, StudyInstanceUID, coalesce(Modality, ''))) > 1`;
  return {
    curFolder: await one('current folders without earlier versions', `SELECT crdc_series_uuid FROM cur_index WHERE SeriesInstanceUID NOT IN (${inPrior}) ORDER BY hash(crdc_series_uuid)`, 3),
    curFolderOfRevised: await one('current folders of revised series', `SELECT crdc_series_uuid FROM cur_index WHERE SeriesInstanceUID IN (${inPrior}) ORDER BY hash(crdc_series_uuid)`, 2),
    integralSize: await one('current folders of an integral size', `SELECT crdc_series_uuid FROM cur_index WHERE series_size_MB = trunc(series_size_MB) ORDER BY hash(crdc_series_uuid)`, 1),
    revFolder: await one('earlier folders of current series', `SELECT crdc_series_uuid FROM cur_prior WHERE SeriesInstanceUID IN (SELECT SeriesInstanceUID FROM cur_index) ORDER BY hash(crdc_series_uuid)`, 3),
    remFolder: await one('folders of removed series', `SELECT crdc_series_uuid FROM cur_prior WHERE SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index) ORDER BY hash(crdc_series_uuid)`, 3),
    zeroSize: await one('earlier folders of size 0', `SELECT crdc_series_uuid FROM cur_prior GROUP BY 1 HAVING max(series_size_MB) = 0 ORDER BY hash(crdc_series_uuid)`, 1),
    differ: await one('earlier folders of series whose versions disagree', `SELECT crdc_series_uuid FROM cur_prior WHERE SeriesInstanceUID IN (${differ}) ORDER BY hash(crdc_series_uuid)`, 2),
    sidCur: await one('series without earlier versions', `SELECT SeriesInstanceUID FROM cur_index WHERE SeriesInstanceUID NOT IN (${inPrior}) ORDER BY hash(SeriesInstanceUID)`, 2),
    sidRev: await one('revised series', `SELECT SeriesInstanceUID FROM cur_index WHERE SeriesInstanceUID IN (${inPrior}) ORDER BY hash(SeriesInstanceUID)`, 2),
    sidRem: await one('removed series', `SELECT DISTINCT SeriesInstanceUID FROM cur_prior WHERE SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index) ORDER BY hash(SeriesInstanceUID)`, 2),
    studyCur: await one('studies', `SELECT DISTINCT StudyInstanceUID FROM cur_index ORDER BY hash(StudyInstanceUID)`, 2),
    studyRem: await one(
      'removed studies',
      `SELECT DISTINCT StudyInstanceUID FROM cur_prior WHERE StudyInstanceUID NOT IN (SELECT StudyInstanceUID FROM cur_index)
         AND StudyInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index) AND StudyInstanceUID NOT IN (${inPrior}) ORDER BY hash(StudyInstanceUID)`,
      2,
    ),
  };
}

/** Facts, current version and earlier versions of series, by SeriesInstanceUID (SQL over the release's files). */
async function seriesFacts(sids: string[]): Promise<Map<string, { facts: Obj; current: Obj | null; versions: Obj[] }>> {
  const cur = await rel.rows(`SELECT SeriesInstanceUID AS sid, collection_id, PatientID, StudyInstanceUID, Modality, crdc_series_uuid,
      series_revised_idc_version::INTEGER AS since, series_aws_url, aws_bucket, series_size_MB, license_short_name FROM shape_index WHERE SeriesInstanceUID IN (${list(sids)})`);
  // One entry per folder (a version may have a row per bucket), in the order of the releases that had them.
  const old = await rel.rows(`SELECT SeriesInstanceUID AS sid, crdc_series_uuid AS u, min(min_idc_version)::INTEGER AS mn, max(max_idc_version)::INTEGER AS mx,
      max(series_aws_url) AS url, max(aws_bucket) AS b, max(series_size_MB) AS sz, min(collection_id) AS c, min(PatientID) AS p, min(StudyInstanceUID) AS st, min(Modality) AS m
    FROM cur_prior WHERE SeriesInstanceUID IN (${list(sids)}) GROUP BY 1, 2 ORDER BY sid, mx, mn, u`);
  const out = new Map<string, { facts: Obj; current: Obj | null; versions: Obj[] }>();
  for (const sid of sids) {
    const c = cur.find((r) => r.sid === sid);
    const vs = old.filter((r) => r.sid === sid);
    const first = vs[0];
    const facts = c
      ? { collection_id: c.collection_id, PatientID: c.PatientID, StudyInstanceUID: c.StudyInstanceUID, SeriesInstanceUID: sid, Modality: str(c.Modality) }
      : { collection_id: first!.c, PatientID: first!.p, StudyInstanceUID: first!.st, SeriesInstanceUID: sid, Modality: str(first!.m) };
    const current = c
      ? {
          crdc_series_uuid: c.crdc_series_uuid,
          since_idc_version: num(c.since),
          series_aws_url: str(c.series_aws_url),
          aws_bucket: str(c.aws_bucket),
          series_size_MB: num(c.series_size_MB),
          license_short_name: str(c.license_short_name),
        }
      : null;
    const versions = vs.map((v) => ({ crdc_series_uuid: v.u, min_idc_version: num(v.mn), max_idc_version: num(v.mx), series_aws_url: str(v.url), aws_bucket: str(v.b), series_size_MB: num(v.sz) }));
    out.set(sid, { facts, current, versions });
  }
  return out;
}

const UNKNOWN_FOLDER = 'no version of any series of this release or of prior_versions_index has this crdc_series_uuid';
const UNKNOWN_UID = 'no series or study of this release or of prior_versions_index has this UID';
// A bucket no store has, needing escapes: a backslash, a control character, non-ASCII and a lone surrogate.
const ODD_BUCKET = 'odd\\bucket\u0001é中\ud800';

test('the JSON answer is exactly JSON.stringify of the documented object for every class, and the TSV the same lines cell by cell', { skip }, async () => {
  const pick = await samples();
  const folderLines = [...pick.curFolder!, ...pick.curFolderOfRevised!, ...pick.integralSize!, ...pick.revFolder!, ...pick.remFolder!, ...pick.zeroSize!, ...pick.differ!];
  const uidLines = [...pick.sidCur!, ...pick.sidRev!, ...pick.sidRem!, ...pick.studyCur!, ...pick.studyRem!];
  const unknownUuid = '00000000-0000-4000-8000-000000000000';
  // Lines as a user saved them: URLs of the data's own buckets (and one of a bucket no store has), bare UIDs, junk.
  const bucketOf = new Map((await rel.rows(`SELECT crdc_series_uuid AS u, any_value(aws_bucket) AS b FROM (SELECT crdc_series_uuid, aws_bucket FROM cur_index UNION ALL
      SELECT crdc_series_uuid, aws_bucket FROM cur_prior) WHERE crdc_series_uuid IN (${list(folderLines)}) GROUP BY 1`)).map((r) => [String(r.u), str(r.b)]));
  type Item = { text: string; want: (line: number) => Obj };
  const items: Item[] = [];
  const facts = await seriesFacts([
    ...new Set([
      ...(await rel.rows(`SELECT SeriesInstanceUID AS s FROM cur_index WHERE crdc_series_uuid IN (${list(folderLines)}) UNION SELECT SeriesInstanceUID FROM cur_prior WHERE crdc_series_uuid IN (${list(folderLines)})`)).map((r) => String(r.s)),
      ...pick.sidCur!,
      ...pick.sidRev!,
      ...pick.sidRem!,
    ]),
  ]);
  const sidOfFolder = new Map((await rel.rows(`SELECT crdc_series_uuid AS u, SeriesInstanceUID AS s, 1 AS cur FROM cur_index WHERE crdc_series_uuid IN (${list(folderLines)})
      UNION ALL SELECT crdc_series_uuid, min(SeriesInstanceUID), 0 FROM cur_prior WHERE crdc_series_uuid IN (${list(folderLines)}) AND crdc_series_uuid NOT IN (SELECT crdc_series_uuid FROM cur_index) GROUP BY 1`)).map((r) => [String(r.u), { sid: String(r.s), current: r.cur === 1 }]));

  /** The object of a folder line, keys in the order the contract gives them. */
  const folder = (u: string, bucket: string | null, badBucket: boolean) => (line: number): Obj => {
    const hit = sidOfFolder.get(u);
    const o: Obj = { line, class: 'unknown', kind: 'crdc_series_uuid', id: u };
    if (bucket !== null) o.bucket = bucket;
    if (hit) {
      const f = facts.get(hit.sid)!;
      Object.assign(o, f.facts);
      if (f.current) o.current = f.current;
      if (!hit.current && f.versions.length > 0) o.versions = f.versions;
      if (!f.current) o.last_idc_version = Math.max(...f.versions.map((v) => Number(v.max_idc_version)));
      o.class = hit.current ? 'current' : f.current ? 'revised' : 'removed';
      if (!hit.current) o.named = f.versions.find((v) => v.crdc_series_uuid === u);
    } else o.message = UNKNOWN_FOLDER;
    if (badBucket) {
      const where = hit ? ` (the release places this series in ${String((o.current as Obj | undefined)?.aws_bucket ?? (o.named as Obj | undefined)?.aws_bucket ?? 'another bucket')})` : '';
      o.message = `${o.message ? `${String(o.message)}; ` : ''}the bucket ${bucket} is not one of the stores' buckets${where}`;
    }
    return o;
  };
  const studies = new Map(
    (
      await rel.rows(`WITH q(u) AS (SELECT unnest([${list([...pick.studyCur!, ...pick.studyRem!])}]))
      SELECT u, (SELECT count(*) FROM cur_index WHERE StudyInstanceUID = u)::INTEGER AS n,
        (SELECT count(DISTINCT SeriesInstanceUID) FROM cur_prior WHERE StudyInstanceUID = u AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index WHERE StudyInstanceUID = u))::INTEGER AS gone,
        (SELECT max(max_idc_version) FROM cur_prior WHERE StudyInstanceUID = u AND SeriesInstanceUID NOT IN (SELECT SeriesInstanceUID FROM cur_index WHERE StudyInstanceUID = u))::INTEGER AS last,
        coalesce((SELECT min(collection_id) FROM cur_index WHERE StudyInstanceUID = u), (SELECT min(collection_id) FROM cur_prior WHERE StudyInstanceUID = u)) AS c,
        coalesce((SELECT min(PatientID) FROM cur_index WHERE StudyInstanceUID = u), (SELECT min(PatientID) FROM cur_prior WHERE StudyInstanceUID = u)) AS p FROM q`)
    ).map((r) => [String(r.u), r]),
  );
  const uid = (id: string) => (line: number): Obj => {
    const f = facts.get(id);
    const st = studies.get(id);
    if (f) {
      const o: Obj = { line, class: f.current ? (f.versions.length > 0 ? 'revised' : 'current') : 'removed', kind: 'SeriesInstanceUID', id, ...f.facts };
      if (f.current) o.current = f.current;
      if (f.versions.length > 0) o.versions = f.versions;
      if (!f.current) o.last_idc_version = Math.max(...f.versions.map((v) => Number(v.max_idc_version)));
      return o;
    }
    if (st) {
      const o: Obj = { line, class: Number(st.n) > 0 ? 'current' : 'removed', kind: 'StudyInstanceUID', id, collection_id: st.c, PatientID: st.p, StudyInstanceUID: id, series_current: st.n, series_removed: st.gone };
      if (Number(st.n) === 0 && st.last !== null) o.last_idc_version = st.last;
      return o;
    }
    return { line, class: 'unknown', kind: 'DICOM UID', id, message: UNKNOWN_UID };
  };
  const header = (text: string) => (line: number): Obj => ({ line, class: 'header', message: `a header line (${text}), not an identifier` });
  const invalid = (message: string) => (line: number): Obj => ({ line, class: 'invalid', message });
  const NOT_AN_ID =
    'not an identifier or URL: expected a SeriesInstanceUID or StudyInstanceUID (digits and dots), a crdc_series_uuid, an s3:// or gs:// URL of a series folder, or an s5cmd cp line';

  items.push({ text: 'SeriesInstanceUID,crdc_series_uuid', want: header('SeriesInstanceUID,crdc_series_uuid') });
  for (const [i, u] of folderLines.entries()) {
    const b = bucketOf.get(u) ?? null;
    // Each form users have: the portal's and the client's cp lines, a bare URL, a bare (upper-case) folder.
    const form = b === null ? 2 : i % 3;
    const text = [`cp s3://${b}/${u}/* .`, `s3://${b}/${u}/*`, u.toUpperCase()][form]!;
    items.push({ text, want: folder(u, form === 2 ? null : b, false) });
  }
  for (const id of uidLines) items.push({ text: id, want: uid(id) });
  // User text that needs escaping: in a bucket (of a current, a removed and an unknown folder) and in an invalid line's message.
  for (const u of [pick.curFolder![0]!, pick.remFolder![0]!, unknownUuid]) items.push({ text: `cp s3://${ODD_BUCKET}/${u}/* .`, want: folder(u, ODD_BUCKET, true) });
  const oddUrl = 's3://b\\x\u0002é/not-a-folder\u001f\\/*';
  items.push({ text: `cp ${oddUrl} .`, want: invalid(`the folder ${JSON.stringify('not-a-folder\u001f\\')} of ${oddUrl} is not a crdc_series_uuid (s3://<bucket>/<crdc_series_uuid>/*)`) });
  items.push({ text: 'junk "quoted" \\ \u0007 ü', want: invalid(NOT_AN_ID) });
  items.push({ text: 'cp nothing here', want: invalid('a cp line without an s3:// or gs:// source') });
  items.push({ text: unknownUuid, want: folder(unknownUuid, null, false) });
  items.push({ text: '1.2.3.4.5.6.7.8.9', want: uid('1.2.3.4.5.6.7.8.9') });

  // Half the samples before line 2,000 and half after (the answer is written in blocks of 2,000 lines), with
  // unknown UIDs, blank lines and comments between them.
  const half = Math.ceil(items.length / 2);
  const filler = (n: number, from: number): Item[] =>
    Array.from({ length: n }, (_, i) => (i % 50 === 7 ? { text: '', want: () => ({}) } : i % 50 === 9 ? { text: '# a comment', want: () => ({}) } : { text: `1.2.826.0.1.${from + i}`, want: uid(`1.2.826.0.1.${from + i}`) }));
  const all = [items[0]!, ...items.slice(1, half), ...filler(2100, 0), ...items.slice(half), ...filler(1500, 5000)];
  const text = all.map((x) => x.text).join('\n');
  const expected: Obj[] = [];
  all.forEach((x, i) => {
    if (x.text.trim() === '' || x.text.startsWith('#')) return;
    expected.push(x.want(i + 1));
  });
  const count = (c: string) => expected.filter((l) => l.class === c).length;
  const totals = {
    lines: all.length,
    blank: all.filter((x) => x.text.trim() === '').length,
    comments: all.filter((x) => x.text.startsWith('#')).length,
    header: count('header'),
    current: count('current'),
    revised: count('revised'),
    removed: count('removed'),
    unknown: count('unknown'),
    invalid: count('invalid'),
  };
  for (const c of ['header', 'current', 'revised', 'removed', 'unknown', 'invalid']) assert.ok(count(c) > 0, `the manifest has ${c} lines`);
  assert.ok(expected.some((l) => (l.current as Obj | undefined)?.series_size_MB !== null && Number.isInteger((l.current as Obj | undefined)?.series_size_MB)), 'an integral size');
  assert.ok(expected.some((l) => (l.named as Obj | undefined)?.series_size_MB === 0), 'a size of 0');

  const res = await s.post('/v3/series/resolve', { text }, { 'accept-encoding': 'identity' });
  assert.equal(res.status, 200);
  const body = await res.text();
  const got = JSON.parse(body) as { idc_version: string; totals: unknown; lines: Obj[]; stores: unknown };
  const doc = { idc_version: `v${rel.current.build.index_version.split('.')[0]}`, totals, lines: expected, stores: got.stores };
  // Line by line first (a failure names the line), then the whole document byte for byte: same keys, same order, same values.
  got.lines.forEach((l, i) => assert.equal(JSON.stringify(l), JSON.stringify(expected[i]), `line ${String(l.line)}`));
  assert.equal(got.lines.length, expected.length);
  const want = JSON.stringify(doc);
  if (body !== want) {
    let at = 0;
    while (body[at] === want[at]) at++;
    assert.fail(`the answer differs from JSON.stringify of the expected document at character ${at}:\n${body.slice(at - 200, at + 100)}\nexpected:\n${want.slice(at - 200, at + 100)}`);
  }

  // The TSV form: the same lines, one cell per field (current_* and named_* of those objects, versions as
  // "<folder> v<min>-v<max> <bucket>" joined by ";"), tabs and line breaks of a cell as spaces.
  const tsv = await (await s.post('/v3/series/resolve', { text, format: 'tsv' }, { 'accept-encoding': 'identity' })).text();
  const [head, names, ...rows] = tsv.split('\n');
  assert.equal(rows.pop(), '');
  assert.equal(head, `# resolved against ${doc.idc_version}; totals ${JSON.stringify(totals)}`);
  const cols = names!.split('\t');
  const cell = (v: unknown) => (v === undefined || v === null ? '' : String(v).replace(/[\t\r\n]/g, ' '));
  assert.equal(rows.length, expected.length);
  rows.forEach((row, i) => {
    const l = expected[i]!;
    const cur = (l.current ?? {}) as Obj;
    const named = (l.named ?? {}) as Obj;
    const versions = l.versions as Obj[] | undefined;
    const want = cols.map((c) => {
      if (c === 'license_short_name') return cell(cur.license_short_name);
      if (c.startsWith('current_')) return cell(cur[c.slice('current_'.length)]);
      if (c.startsWith('named_')) return cell(named[c.slice('named_'.length)]);
      if (c === 'versions') return versions ? versions.map((v) => `${String(v.crdc_series_uuid)} v${String(v.min_idc_version)}-v${String(v.max_idc_version)} ${String(v.aws_bucket ?? '')}`.trimEnd()).join(';') : '';
      return cell(l[c]);
    });
    // A lone surrogate cannot be encoded: it reaches the table as U+FFFD.
    assert.deepEqual(row.split('\t'), want.map((w) => w.replace(/\ud800/g, '\ufffd')), `TSV line ${String(l.line)}`);
  });
  process.stdout.write(`# ${expected.length} lines, ${body.length} characters of JSON: ${JSON.stringify(totals)}\n`);
});
