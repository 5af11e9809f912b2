// Every response carries the same security headers, whoever answers it: a
// route, the 404/405 handler, errors raised before routing (bad URL encoding,
// overlong path parameter, body too large, bad JSON), the HTTP parser's own
// errors written on the raw socket (400, 431), a CORS preflight, a 304, the
// API docs pages and their assets; and the docs pages still render in a real
// browser under their Content-Security-Policy.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { openBrowser } from './browser.ts';
import { startServer, type TestServer } from './fixture.ts';

let s: TestServer;
before(async () => {
  s = await startServer({ hstsMaxAge: 3600, bodyLimit: 4096 });
});
after(async () => {
  await s.close();
});

interface Raw {
  status: number;
  headers: Map<string, string>;
}

/** One request written as bytes (so malformed ones reach the server as sent); the answer's status and headers. */
function raw(request: string): Promise<Raw> {
  const { port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), '127.0.0.1');
    let data = '';
    sock.setEncoding('latin1');
    sock.on('data', (d) => {
      data += d;
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = data.slice(0, end).split('\r\n');
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      sock.destroy();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers });
    });
    sock.on('error', reject);
    sock.on('connect', () => sock.write(request, 'latin1'));
  });
}

const req = (method: string, path: string, headers: Record<string, string> = {}, body = '') =>
  raw(
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      Object.entries({ ...headers, ...(body ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `Connection: close\r\n\r\n${body}`,
  );

function assertSecure(r: Raw, what: string): void {
  const h = (n: string) => r.headers.get(n);
  assert.equal(h('x-content-type-options'), 'nosniff', `${what}: X-Content-Type-Options`);
  assert.equal(h('x-frame-options'), 'DENY', `${what}: X-Frame-Options`);
  assert.match(h('content-security-policy') ?? '', /frame-ancestors 'none'/, `${what}: CSP frame-ancestors`);
  assert.equal(h('strict-transport-security'), 'max-age=3600; includeSubDomains', `${what}: HSTS`);
  assert.equal(h('referrer-policy'), 'no-referrer', `${what}: Referrer-Policy`);
  assert.match(h('x-request-id') ?? '', /^[A-Za-z0-9._:@/+=-]{1,128}$/, `${what}: X-Request-Id`);
}

test('routes, 404, 405, errors raised before routing, parser errors, preflights and 304s all carry the security headers', async () => {
  const etag = (await s.get('/v3/version')).headers.get('etag')!;
  const cases: [string, number, Promise<Raw>][] = [
    ['a route', 200, req('GET', '/v3/version')],
    ['HEAD', 200, req('HEAD', '/v3/version')],
    ['not modified', 304, req('GET', '/v3/version', { 'If-None-Match': etag })],
    ['unknown path', 404, req('GET', '/v3/nope')],
    ['unknown /v2 path', 404, req('GET', '/v2/nope')],
    ['wrong method', 405, req('POST', '/v3/version', { 'Content-Type': 'application/json' }, '{}')],
    ['bad URL encoding', 400, req('GET', '/v3/collections/%zz')],
    ['overlong path parameter', 414, req('GET', `/v3/collections/${'x'.repeat(300)}`)],
    ['body too large', 413, req('POST', '/v3/sql', { 'Content-Type': 'application/json' }, JSON.stringify({ sql: `SELECT '${'x'.repeat(5000)}'` }))],
    ['bad JSON', 400, req('POST', '/v3/sql', { 'Content-Type': 'application/json' }, '{"sql":')],
    ['unsupported media type', 415, req('POST', '/v3/sql', { 'Content-Type': 'text/csv' }, 'a,b')],
    ['headers too large', 431, req('GET', '/v3/version', { 'X-Big': 'x'.repeat(20_000) })],
    ['not HTTP', 400, raw('HELLO\r\n\r\n')],
    ['CORS preflight', 204, req('OPTIONS', '/v3/sql', { Origin: 'https://example.org', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' })],
    ['OPTIONS without preflight headers', 204, req('OPTIONS', '/v3/version')],
    ['API docs', 200, req('GET', '/v3/docs/')],
    ['API docs asset', 200, req('GET', '/v3/docs/static/swagger-ui.css')],
    ['/v2 docs', 200, req('GET', '/v2/swagger/')],
    ['metrics', 200, req('GET', '/metrics')],
    ['explorer asset', 404, req('GET', '/assets/nope.js')],
  ];
  for (const [what, status, answer] of cases) {
    const r = await answer;
    assert.equal(r.status, status, what);
    assertSecure(r, what);
  }
  // The preflight is still a CORS answer.
  const pre = await req('OPTIONS', '/v3/sql', { Origin: 'https://example.org', 'Access-Control-Request-Method': 'POST' });
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  // The explorer's page keeps its own policy, which forbids framing too.
  const page = await req('GET', '/');
  assert.equal(page.status, 200);
  assertSecure(page, 'explorer page');
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
});

test('the API docs render in a real browser under their Content-Security-Policy', async () => {
  const b = await openBrowser();
  try {
    const violations: string[] = [];
    b.page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    for (const path of ['/v3/docs', '/v2/swagger']) {
      await b.page.goto(s.url + path);
      // Swagger UI fetched the OpenAPI document and drew the operations.
      await b.page.waitForSelector('.opblock-summary', { timeout: 20_000 });
      assert.ok((await b.page.locator('.opblock-summary').count()) > 5, `${path} lists operations`);
    }
    assert.deepEqual(violations, []);
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});
