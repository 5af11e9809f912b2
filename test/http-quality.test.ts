// Cross-cutting HTTP behaviour: compression, body limits, media types, CORS
// preflight, and the one structured log line per request.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { createContext, type AppContext } from '../src/core/context.ts';
import { buildApp } from '../src/http/app.ts';
import { rawHttp, startServer, testConfig, testDataset, type TestServer } from './fixture.ts';

let s: TestServer;
before(async () => {
  s = await startServer({ bodyLimit: 4096 });
});
after(async () => {
  await s.close();
});

test('responses are compressed with gzip or brotli when asked', async () => {
  const plain = await (await s.get('/v3/collections')).text();
  const gz = await rawHttp(s.url + '/v3/collections', { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gz.body).toString(), plain);
  const br = await rawHttp(s.url + '/v3/collections', { headers: { 'accept-encoding': 'br' } });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(brotliDecompressSync(br.body).toString(), plain);
  assert.ok(br.body.length < plain.length / 2);
});

test('a body over the limit is 413, a non-JSON media type 415, broken JSON 400, all in the envelope', async () => {
  const big = await s.post('/v3/sql', { sql: `SELECT '${'x'.repeat(5000)}' AS s` });
  assert.equal(big.status, 413);
  assert.equal(((await big.json()) as { error: { code: string } }).error.code, 'payload_too_large');
  const media = await fetch(s.url + '/v3/sql', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'SELECT 1' });
  assert.equal(media.status, 415);
  const mb = (await media.json()) as { error: { code: string; message: string } };
  assert.equal(mb.error.code, 'unsupported_media_type');
  assert.match(mb.error.message, /application\/json/);
  const broken = await s.post('/v3/cohort/counts', '{"terms": ');
  assert.equal(broken.status, 400);
  assert.equal(((await broken.json()) as { error: { code: string } }).error.code, 'invalid_json');
});

test('CORS preflight from any origin is allowed', async () => {
  const r = await fetch(s.url + '/v3/sql', {
    method: 'OPTIONS',
    headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  assert.ok(r.status === 204 || r.status === 200);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assert.match(r.headers.get('access-control-allow-methods') ?? '', /POST/);
});

test('one structured log line per request: route, status, duration, and caller SQL as a snippet or a hash', async () => {
  const ds = await testDataset();
  for (const mode of ['snippet', 'hash'] as const) {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    const ctx: AppContext = await createContext(testConfig({ sqlLogMode: mode }), ds.db);
    const app = await buildApp(ctx, { logger: { level: 'info', stream } });
    try {
      await app.inject({ method: 'GET', url: '/v3/collections/nlst' });
      await app.inject({ method: 'POST', url: '/v3/sql', payload: { sql: 'SELECT   42 AS answer' } });
      const reqLines = lines.filter((l) => l.msg === 'request');
      assert.equal(reqLines.length, 2);
      assert.equal(reqLines[0]!.route, '/v3/collections/:collection_id');
      assert.equal(reqLines[0]!.status, 200);
      assert.equal(typeof reqLines[0]!.duration_ms, 'number');
      assert.equal(reqLines[0]!.sql, undefined);
      const sqlLine = reqLines[1]!;
      if (mode === 'snippet') assert.equal(sqlLine.sql, 'SELECT 42 AS answer');
      else assert.match(String(sqlLine.sql), /^sha256:[0-9a-f]{12}$/);
    } finally {
      await app.close();
      ctx.engine.close();
    }
  }
});
