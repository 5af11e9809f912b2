// DNS-rebinding protection on a real server: on loopback, a request naming a
// foreign Host is refused with 403 in its interface's envelope (JSON-RPC on
// /mcp, /v3 on the REST routes, the explorer and the docs, /v2 on /v2) before
// any work; loopback names, the listening address and allowed hosts are
// served; /mcp also refuses a foreign Origin whatever the listening address,
// while the REST routes keep their CORS.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, type TestServer } from './fixture.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

/** One request with headers fetch() will not send (Host). */
function send(url: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; headers: Record<string, unknown>; json: Json; text: string }> {
  const port = Number(new URL(url).port);
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const h: Record<string, string> = { ...headers };
    if (payload !== undefined) h['content-type'] = 'application/json';
    if (path === '/mcp') h.accept = 'application/json, text/event-stream';
    const req = request({ host: '127.0.0.1', port, path, method: payload === undefined ? 'GET' : 'POST', headers: h }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let json: Json = {};
        try {
          json = JSON.parse(text) as Json;
        } catch {
          /* not JSON: the explorer's page */
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json, text });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
});

/** The routes of every interface, with how each envelope of a refusal looks. */
const ROUTES: { path: string; body?: unknown; envelope: 'jsonrpc' | 'v3' | 'v2' }[] = [
  { path: '/mcp', body: INIT, envelope: 'jsonrpc' },
  { path: '/v3/stats', envelope: 'v3' },
  // A body that would fail validation: the guard answers first.
  { path: '/v3/cohort/counts', body: { terms: { nope: [1] } }, envelope: 'v3' },
  { path: '/v3/sql', body: { sql: 'SELECT 1' }, envelope: 'v3' },
  { path: '/v3/docs', envelope: 'v3' },
  { path: '/', envelope: 'v3' },
  { path: '/v2/about', envelope: 'v2' },
];

function assertRefused(r: { status: number; json: Json; headers: Record<string, unknown> }, envelope: string, what: string, pattern: RegExp): void {
  assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.json).slice(0, 300)}`);
  assert.equal(r.headers['cache-control'], 'no-store', what);
  if (envelope === 'jsonrpc') {
    assert.equal(r.json.jsonrpc, '2.0', what);
    assert.equal(r.json.id, null, what);
    assert.equal(r.json.error.code, -32000, what);
    assert.match(r.json.error.message, pattern, what);
    assert.equal(typeof r.json.error.data.request_id, 'string', what);
  } else if (envelope === 'v3') {
    assert.equal(r.json.error.code, 'forbidden', what);
    assert.match(r.json.error.message, pattern, what);
    assert.equal(r.json.error.request_id, r.headers['x-request-id'], what);
  } else {
    assert.equal(r.json.code, 403, what);
    assert.match(r.json.message, pattern, what);
    assert.equal(typeof r.json.request_id, 'string', what);
  }
}

test('on loopback, Host: evil.example is 403 on /mcp, /v3/*, the docs, the explorer and /v2, each in its envelope, saying what to set', async () => {
  for (const { path, body, envelope } of ROUTES) {
    for (const host of ['evil.example', `evil.example:${new URL(s.url).port}`, '127.0.0.1.evil.example']) {
      const r = await send(s.url, path, { host }, body);
      assertRefused(r, envelope, `${path} Host ${host}`, /Host "[^"]*evil\.example[^"]*" is not allowed.*DNS rebinding.*IDQS_ALLOWED_HOSTS/);
    }
  }
});

test('loopback names and the listening address are served on every route', async () => {
  const port = new URL(s.url).port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `app.localhost:${port}`, 'localhost', `127.0.0.2:${port}`]) {
    for (const { path, body } of ROUTES) {
      const r = await send(s.url, path, { host }, path === '/v3/cohort/counts' ? { terms: { Modality: ['CT'] } } : body);
      assert.equal(r.status, 200, `${path} Host ${host}: ${r.text.slice(0, 200)}`);
    }
  }
  // What the server answers is the real answer, not only a status.
  const stats = await send(s.url, '/v3/stats', { host: `localhost:${port}` });
  const series = Number((await s.ctx.engine.one('SELECT count(*) AS n FROM "index"'))!.n);
  assert.equal(stats.json.series, series, JSON.stringify(stats.json).slice(0, 300));
  const init = await send(s.url, '/mcp', { host: `localhost:${port}` }, INIT);
  assert.equal(init.json.result.serverInfo.name, 'IDQS');
});

test('/mcp refuses a foreign Origin (also "null"), serves loopback origins; REST keeps its CORS for any origin', async () => {
  for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'null', 'file://', 'chrome-extension://abc']) {
    const r = await send(s.url, '/mcp', { origin }, INIT);
    assertRefused(r, 'jsonrpc', `/mcp Origin ${origin}`, /Origin ".*" is not allowed.*DNS rebinding/);
  }
  for (const origin of ['http://localhost:5173', 'http://127.0.0.1', `http://[::1]:${new URL(s.url).port}`]) {
    const r = await send(s.url, '/mcp', { origin }, INIT);
    assert.equal(r.status, 200, `Origin ${origin}: ${r.text.slice(0, 200)}`);
    assert.equal(r.json.result.serverInfo.name, 'IDQS');
  }
  const rest = await send(s.url, '/v3/stats', { origin: 'https://evil.example' });
  assert.equal(rest.status, 200);
  assert.equal(rest.headers['access-control-allow-origin'], '*');
});

test('the official SDK client sending a foreign Origin is refused; without one it connects', async () => {
  const evil = new Client({ name: 'rebinding-test', version: '1.0.0' });
  await assert.rejects(
    evil.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { origin: 'https://evil.example' } } })),
    /403|not allowed/,
  );
  const good = new Client({ name: 'rebinding-test', version: '1.0.0' });
  await good.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    assert.equal(good.getServerVersion()?.name, 'IDQS');
  } finally {
    await good.close();
  }
});

test('allowed hosts (IDQS_ALLOWED_HOSTS, IDQS_PUBLIC_URL) are served, host and origin; a port in the allowed entry is enforced', async () => {
  const allowed = await startServer({ allowedHosts: ['api.example.org', 'other.example:8443'], publicUrl: 'https://idqs.example.org/api' });
  try {
    for (const host of ['api.example.org', 'api.example.org:8080', 'other.example:8443', 'idqs.example.org', 'IDQS.example.org:443']) {
      const r = await send(allowed.url, '/v3/version', { host });
      assert.equal(r.status, 200, `Host ${host}: ${r.text.slice(0, 200)}`);
      const m = await send(allowed.url, '/mcp', { host, origin: `https://${host}` }, INIT);
      assert.equal(m.status, 200, `/mcp Host and Origin ${host}: ${m.text.slice(0, 200)}`);
    }
    for (const host of ['other.example', 'other.example:9000', 'example.org', 'evil.example']) {
      assertRefused(await send(allowed.url, '/v3/version', { host }), 'v3', `Host ${host}`, /is not allowed/);
    }
  } finally {
    await allowed.close();
  }
  const any = await startServer({ allowedHosts: ['*'] });
  try {
    assert.equal((await send(any.url, '/v3/version', { host: 'evil.example' })).status, 200);
    assert.equal((await send(any.url, '/mcp', { origin: 'https://evil.example' }, INIT)).status, 200);
  } finally {
    await any.close();
  }
});

test('bound to all interfaces, any Host is served, but /mcp still refuses a foreign Origin', async () => {
  const open = await startServer({ host: '0.0.0.0' });
  try {
    const r = await send(open.url, '/v3/version', { host: 'idqs.example.net' });
    assert.equal(r.status, 200, r.text.slice(0, 200));
    const m = await send(open.url, '/mcp', { host: 'idqs.example.net' }, INIT);
    assert.equal(m.status, 200, m.text.slice(0, 200));
    assertRefused(await send(open.url, '/mcp', { host: 'idqs.example.net', origin: 'https://evil.example' }, INIT), 'jsonrpc', 'Origin on 0.0.0.0', /Origin "https:\/\/evil\.example" is not allowed/);
  } finally {
    await open.close();
  }
});
