// VolView links on the pinned real release (test/real-release.json): GET
// /v3/viewer-url?viewer=volview and the tables' volview_url equal the link
// written by SQL over the release (?urls=[s3://<bucket>/<crdc_series_uuid>,…]
// in SeriesInstanceUID order); slide microscopy, photographs (XC) and a study
// spread over several buckets are 422s saying why.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { defaultCacheDir } from '../src/config.ts';
import { ensureRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';
import { startServer, type TestServer } from './fixture.ts';

const PIN = JSON.parse(readFileSync(new URL('./real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const skipReal = process.env.IDQS_SKIP_REAL_DATA ? `IDQS_SKIP_REAL_DATA is set: the real release ${PIN.release} is skipped on purpose` : false;
if (skipReal) process.stdout.write(`# ${skipReal}\n`);
const BASE = 'https://volview.kitware.app/';

let s: TestServer;
before(async () => {
  if (skipReal) return;
  const rel = await ensureRelease({ release: PIN.release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  s = await startServer({}, rel.db);
});
after(async () => {
  await s?.close();
});

/** The link SQL writes for the series of a study (or one series). */
async function expected(where: string, params: string[]): Promise<string> {
  const [r] = await s.ctx.engine.rows(
    `SELECT string_agg('s3://' || aws_bucket || '/' || crdc_series_uuid, ',' ORDER BY SeriesInstanceUID) AS u FROM "index" WHERE ${where}`,
    params,
  );
  return `${BASE}?urls=[${String(r!.u)}]`;
}

async function viewer(params: Record<string, string>): Promise<{ status: number; body: { viewer_url?: string; error?: { code: string; message: string } } }> {
  const r = await s.get(`/v3/viewer-url?${new URLSearchParams({ ...params, viewer: 'volview' })}`);
  return { status: r.status, body: (await r.json()) as { viewer_url?: string; error?: { code: string; message: string } } };
}

test(`VolView links on ${PIN.release} equal SQL; SM, XC and several buckets are 422s`, { skip: skipReal }, async () => {
  assert.equal(s.ctx.config.volviewUrl, BASE, 'the default VolView app');
  // A CT study of several series, all in one bucket.
  const [st] = await s.ctx.engine.rows(
    `SELECT StudyInstanceUID AS s, min(SeriesInstanceUID) AS se FROM "index" GROUP BY 1
     HAVING count(*) >= 3 AND count(DISTINCT aws_bucket) = 1 AND bool_and(Modality = 'CT') ORDER BY 1 LIMIT 1`,
  );
  const study = String(st!.s);
  const series = String(st!.se);
  const a = await viewer({ study_instance_uid: study });
  assert.equal(a.status, 200, JSON.stringify(a.body));
  assert.equal(a.body.viewer_url, await expected('StudyInstanceUID = ?', [study]));
  assert.ok(a.body.viewer_url!.split(',').length >= 3, 'every series of the study is linked');
  const b = await viewer({ series_instance_uid: series });
  assert.equal(b.body.viewer_url, await expected('SeriesInstanceUID = ?', [series]));

  const [sm] = await s.ctx.engine.rows(`SELECT min(StudyInstanceUID) AS s FROM "index" WHERE Modality = 'SM'`);
  const c = await viewer({ study_instance_uid: String(sm!.s) });
  assert.equal(c.status, 422);
  assert.match(c.body.error!.message, /slide microscopy/);
  const [xc] = await s.ctx.engine.rows(`SELECT min(SeriesInstanceUID) AS s FROM "index" WHERE Modality = 'XC'`);
  assert.ok(xc!.s, `${PIN.release} has XC series`);
  const d = await viewer({ series_instance_uid: String(xc!.s) });
  assert.equal(d.status, 422);
  assert.match(d.body.error!.message, /XC/);
  const [multi] = await s.ctx.engine.rows(
    `SELECT StudyInstanceUID AS s, list(DISTINCT aws_bucket ORDER BY aws_bucket) AS b FROM "index" GROUP BY 1
     HAVING count(DISTINCT aws_bucket) > 1 AND NOT bool_or(Modality IN ('SM', 'XC')) ORDER BY 1 LIMIT 1`,
  );
  assert.ok(multi, `${PIN.release} has a study over several buckets`);
  const e = await viewer({ study_instance_uid: String(multi!.s) });
  assert.equal(e.status, 422);
  for (const bucket of multi!.b as string[]) assert.ok(e.body.error!.message.includes(bucket), `${e.body.error!.message} names ${bucket}`);

  // The series and studies tables carry the same links, null where VolView cannot open a row.
  for (const level of ['series', 'studies'] as const) {
    const r = await s.post('/v3/cohort/table', { filters: { terms: { StudyInstanceUID: [study, String(multi!.s), String(sm!.s)] } }, level, page_size: 100 });
    const body = (await r.json()) as { columns: string[]; rows: Record<string, unknown>[] };
    assert.ok(body.columns.includes('volview_url'));
    for (const row of body.rows) {
      const got = row.volview_url;
      if (level === 'series') {
        const [m] = await s.ctx.engine.rows(`SELECT Modality AS m FROM "index" WHERE SeriesInstanceUID = ?`, [String(row.SeriesInstanceUID)]);
        const want = m!.m === 'SM' || m!.m === 'XC' ? null : await expected('SeriesInstanceUID = ?', [String(row.SeriesInstanceUID)]);
        assert.equal(got, want, `series ${String(row.SeriesInstanceUID)}`);
      } else {
        assert.equal(got, row.StudyInstanceUID === study ? await expected('StudyInstanceUID = ?', [study]) : null, `study ${String(row.StudyInstanceUID)}`);
      }
    }
  }
});
