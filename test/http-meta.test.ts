import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './fixture.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.close();
});

test('GET /v3/health answers exactly {"status":"ok"}', async () => {
  const r = await s.get('/v3/health');
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { status: 'ok' });
});

test('GET /v3/version reports the release, the index version and the server version', async () => {
  const r = await s.get('/v3/version');
  const body = (await r.json()) as Record<string, unknown>;
  assert.match(String(body.idc_version), /^v\d+$/);
  assert.equal(body.idc_index_data_version, s.ctx.dataset.index_version);
  assert.equal(body.api_version, s.ctx.apiVersion);
  assert.equal(body.build, null, 'build is present, and null when no stamp is configured');
  assert.equal(body.synthetic, true);
});

test('GET /v3/version carries the build stamp when configured, and the root reports it', async () => {
  const t = await startServer({ build: 'abc1234' });
  try {
    const v = (await (await t.get('/v3/version')).json()) as Record<string, unknown>;
    assert.equal(v.build, 'abc1234');
    const root = (await (await t.get('/v3')).json()) as Record<string, unknown>;
    assert.equal(root.server_version, `${t.ctx.apiVersion}+abc1234`);
  } finally {
    await t.close();
  }
});

test('GET /v3/stats totals agree with the index table', async () => {
  const body = (await (await s.get("/v3/stats")).json()) as { series: number; patients: number; instances: number; size_MB: number; collections: number };
  const row = await s.ctx.engine.one(
    'SELECT count(*) AS series, count(DISTINCT PatientID) AS patients, sum(instanceCount) AS instances, sum(series_size_MB) AS mb FROM "index"',
  );
  assert.equal(body.series, row!.series);
  assert.equal(body.patients, row!.patients);
  assert.equal(body.instances, row!.instances);
  assert.ok(Math.abs(body.size_MB - Number(row!.mb)) < 0.01);
  assert.ok(body.collections >= 40, `collections ${body.collections}`);
  assert.ok(body.series > 1000);
});

test('discovery responses carry an ETag and answer 304 to If-None-Match', async () => {
  const r = await s.get('/v3/stats');
  const etag = r.headers.get('etag');
  assert.ok(etag && etag.startsWith('W/"idqs-'));
  assert.match(r.headers.get('cache-control') ?? '', /max-age=\d+/);
  const again = await s.get('/v3/stats', { 'if-none-match': etag });
  assert.equal(again.status, 304);
});

test('GET / is the explorer page; unknown paths are 404 and wrong methods 405, both in the error envelope', async () => {
  const root = await fetch(s.url + '/', { redirect: 'manual' });
  assert.equal(root.status, 200);
  assert.match(root.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(await root.text(), /<div id="app">/);
  const nf = await s.get('/v3/nope');
  assert.equal(nf.status, 404);
  assert.equal(((await nf.json()) as { error: { code: string } }).error.code, 'not_found');
  const na = await s.post('/v3/version', {});
  assert.equal(na.status, 405);
  const body = (await na.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'method_not_allowed');
  assert.match(body.error.message, /use GET/);
  assert.match(na.headers.get('allow') ?? '', /GET/);
});

test('HEAD works on GET routes and every response has security and CORS headers', async () => {
  const r = await fetch(s.url + '/v3/version', { method: 'HEAD', headers: { origin: 'https://example.org' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(r.headers.get('strict-transport-security'), 'max-age=3600; includeSubDomains');
});

test('errors of cacheable routes are not cacheable: no ETag, Cache-Control no-store', async () => {
  const r = await s.get('/v3/collections/__nope__');
  assert.equal(r.status, 404);
  assert.equal(r.headers.get('etag'), null);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  const bad = await s.get('/v3/attributes/Modality/values?limit=0');
  assert.equal(bad.status, 422);
  assert.equal(bad.headers.get('etag'), null);
});
