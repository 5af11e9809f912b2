// Robustness (issue 15): what a handful of ordinary HTTP clients on loopback
// could do to the service, one test per finding, in the issue's order. Every
// hostile load here is bounded in count and time and stops by itself; every
// wait has a deadline, so a regression fails fast instead of hanging.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, openSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError, configWarnings, loadConfig, type Config } from '../src/config.ts';
import { createContext } from '../src/core/context.ts';
import { buildServer } from '../src/server.ts';
import { freePort, startServer, testConfig, testDataset, type TestServer } from './fixture.ts';

const CLI = fileURLToPath(new URL('../bin/idqs.cjs', import.meta.url));
const CT = { terms: { Modality: ['CT'] } };
/** Every series of the test dataset, as s5cmd lines: about 0.8 MB, more than loopback socket buffers hold. */
const WHOLE_S5CMD = { filters: { ranges: { instanceCount: { gte: 0 } } }, format: 's5cmd' };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `p`, or a failure naming `what` after `ms`. */
async function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Wait until `check()` holds, polling, or fail after `ms`. */
async function eventually(ms: number, check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`${what}: still false after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

function httpText(method: string, path: string, body: unknown): string {
  const payload = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
}

/** A client that sends a request and closes its socket at once, reading nothing. */
async function abandon(url: string, method: string, path: string, body: unknown): Promise<void> {
  await new Promise<void>((resolve) => {
    const c = connect(portOf(url), '127.0.0.1', () => {
      c.write(httpText(method, path, body), () => {
        c.destroy();
        resolve();
      });
    });
    c.on('error', () => resolve());
  });
}

/** A client that sends a request and never reads the answer; `closed` settles when the server closes the socket. */
function stalledReader(url: string, method: string, path: string, body: unknown): { socket: Socket; closed: Promise<void> } {
  const socket = connect(portOf(url), '127.0.0.1');
  socket.write(httpText(method, path, body));
  // No 'data' listener: once its small buffer is full the socket stops reading, and the TCP window closes.
  const closed = new Promise<void>((resolve) => {
    socket.on('close', () => resolve());
    socket.on('error', () => undefined);
  });
  return { socket, closed };
}

/** Raw bytes to the server; resolves with what came back when the server closes the socket (or after `ms`). */
function rawExchange(url: string, bytes: string | Buffer, ms = 3000): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const c = connect(portOf(url), '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      c.destroy();
      resolve({ text, closedByServer });
    };
    const timer = setTimeout(() => finish(false), ms);
    c.on('data', (d) => (text += d.toString('latin1')));
    c.on('close', () => finish(true));
    c.on('error', () => finish(true));
    c.write(bytes);
  });
}

/** Status, headers and JSON body of the first response in raw HTTP text. */
function parseRaw(text: string): { status: number; headers: Record<string, string>; body: string } {
  const [head, ...rest] = text.split('\r\n\r\n');
  const lines = head!.split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = rest.join('\r\n\r\n');
  if (headers['transfer-encoding'] === 'chunked') {
    let out = '';
    for (let i = 0; ; ) {
      const nl = body.indexOf('\r\n', i);
      const size = parseInt(body.slice(i, nl), 16);
      if (!size) break;
      out += body.slice(nl + 2, nl + 2 + size);
      i = nl + 2 + size + 2;
    }
    body = out;
  }
  return { status, headers, body };
}

/** A request with headers fetch() refuses to send (Host, X-Forwarded-*). */
function httpGet(url: string, path: string, headers: Record<string, string>, method = 'GET', body?: unknown): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port: portOf(url), path, method, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A /v3 error body: exactly the envelope, with a request id. */
function assertV3Envelope(status: number, body: string, what: string): Json {
  let j: Json;
  try {
    j = JSON.parse(body) as Json;
  } catch {
    assert.fail(`${what}: ${status} body is not JSON: ${body.slice(0, 200)}`);
  }
  assert.deepEqual(Object.keys(j), ['error'], `${what}: ${body.slice(0, 300)}`);
  assert.equal(typeof j.error.code, 'string', what);
  assert.equal(typeof j.error.message, 'string', what);
  assert.equal(typeof j.error.request_id, 'string', `${what}: request_id in ${body.slice(0, 300)}`);
  return j;
}

/** A /v2 error body: {code: status, message, request_id}. */
function assertV2Envelope(status: number, body: string, what: string): Json {
  const j = JSON.parse(body) as Json;
  assert.equal(j.code, status, `${what}: ${body.slice(0, 300)}`);
  assert.equal(typeof j.message, 'string', what);
  assert.equal(typeof j.request_id, 'string', what);
  return j;
}


/** A server over a given database with its request log captured. */
async function loggedServer(overrides: Partial<Config>, db?: string): Promise<TestServer & { log: Json[] }> {
  const log: Json[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) log.push(JSON.parse(line) as Json);
      cb();
    },
  });
  const ctx = await createContext(testConfig(overrides), db ?? (await testDataset()).db);
  const app = await buildServer(ctx, { logger: { level: 'info', stream } });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    ctx,
    log,
    close: async () => {
      await app.close();
      ctx.engine.close();
    },
    get: (path, headers) => fetch(url + path, { headers }),
    post: (path, body, headers) =>
      fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
  };
}

let s: TestServer;
before(async () => {
  s = await startServer({ connections: 4 });
});
after(async () => {
  await s?.close();
});

test('0. eight clients that close their socket right after asking for manifest.txt leave every cohort route answering', async () => {
  for (let i = 0; i < 8; i++) {
    await abandon(s.url, 'POST', '/v3/cohort/manifest.txt', { filters: CT });
    await new Promise((r) => setTimeout(r, 30));
  }
  for (const [path, body] of [
    ['/v3/cohort/counts', CT],
    ['/v3/cohort/manifest', { filters: CT, page_size: 5 }],
    ['/v3/cohort/manifest.txt', { filters: CT, limit: 3 }],
    ['/v3/licenses', CT],
  ] as const) {
    const r = await within(5000, s.post(path, body), path);
    assert.equal(r.status, 200, path);
    await r.arrayBuffer();
  }
  await eventually(3000, () => s.ctx.engine.stats().curated.busy === 0, 'no engine connection stays taken');
});

test('1. stalled readers hold no engine connection: counts answer, and a response its client stops reading is cut at the write deadline', async () => {
  const t = await loggedServer({ connections: 4, writeTimeoutMs: 1000, v2MaxPageSize: 200_000 });
  try {
    const readers = Array.from({ length: 10 }, () => stalledReader(t.url, 'POST', '/v3/cohort/manifest.txt', WHOLE_S5CMD));
    // Every instance in one page: about 70 MB, more than loopback socket buffers hold (up to 32 MB here), so its writing stalls.
    const bigPage = { cohort_def: { name: 'x', description: 'y', filters: {} }, fields: ['SOPInstanceUID', 'SeriesInstanceUID', 'gcs_url', 'aws_url'], page_size: 200_000 };
    const pages = Array.from({ length: 2 }, () => stalledReader(t.url, 'POST', '/v2/cohorts/manifest/preview', bigPage));
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 4; i++) {
      const r = await within(3000, t.post('/v3/cohort/counts', CT), `counts probe ${i + 1} with 12 stalled readers`);
      assert.equal(r.status, 200);
      await r.json();
    }
    await eventually(10_000, () => t.ctx.engine.stats().curated.busy === 0, 'stalled readers hold no engine connection once their queries are done');
    const cut = () => t.log.filter((l) => l.path === '/v2/cohorts/manifest/preview' && l.status === 499).length;
    await eventually(20_000, () => cut() === 2, 'the server cuts the two stalled pages after the write deadline');
    await eventually(8000, () => t.ctx.engine.stats().exports.busy === 0, 'their export slots are free again');
    for (const r of [...readers, ...pages]) r.socket.destroy();
  } finally {
    await t.close();
  }
});

test('2. a result of big rows is cut at the byte budget, with truncated_reason, and never builds a huge body', async () => {
  const t = await startServer({ sqlMaxBytes: 1_000_000 });
  try {
    const big = { sql: "SELECT range AS i, repeat('x', 50000) AS s FROM range(2000)", max_rows: 2000 };
    const r = await within(20_000, t.post('/v3/sql', big), 'big rows');
    const text = await r.text();
    assert.equal(r.status, 200, text.slice(0, 300));
    assert.ok(text.length <= 1_000_000 + 4096, `body of ${text.length} bytes exceeds the byte budget`);
    const j = JSON.parse(text) as Json;
    assert.equal(j.truncated, true);
    assert.equal(j.truncated_reason, 'max_bytes');
    assert.ok(j.row_count > 0 && j.row_count < 2000, `row_count ${j.row_count}`);
    assert.equal(j.rows.length, j.row_count);
    assert.deepEqual(j.rows.map((x: Json) => x.i), Array.from({ length: j.row_count }, (_, i) => i), 'the rows kept are the first ones, whole');
    // The row cap still reports itself as the reason when it is what cut.
    const rows = (await (await t.post('/v3/sql', { sql: 'SELECT range AS i FROM range(100)', max_rows: 10 })).json()) as Json;
    assert.equal(rows.truncated, true);
    assert.equal(rows.truncated_reason, 'max_rows');
    const whole = (await (await t.post('/v3/sql', { sql: 'SELECT 1 AS a' })).json()) as Json;
    assert.equal(whole.truncated, false);
    assert.equal(whole.truncated_reason, null);
    // The issue's own case at the default budget: 10,000 rows of 50 KB (500 MB) with max_rows 10,000.
    const issue = await within(30_000, s.post('/v3/sql', { sql: "SELECT range AS i, repeat('x', 50000) AS s FROM range(10000)", max_rows: 10_000 }), 'big rows at the default budget');
    const issueText = await issue.text();
    assert.equal(issue.status, 200, issueText.slice(0, 300));
    assert.ok(issueText.length <= s.ctx.config.sqlMaxBytes + 4096, `body of ${issueText.length} bytes exceeds the default byte budget`);
    assert.equal((JSON.parse(issueText) as Json).truncated_reason, 'max_bytes');
    // Four at once: all cut the same way while the service keeps answering.
    const four = Array.from({ length: 4 }, () => t.post('/v3/sql', big).then(async (x) => [x.status, (await x.text()).length]));
    const v = await within(10_000, t.get('/v3/version'), '/v3/version during four big queries');
    assert.equal(v.status, 200);
    for (const [status, length] of await within(30_000, Promise.all(four), 'four big queries')) {
      assert.equal(status, 200);
      assert.ok((length as number) <= 1_000_000 + 4096);
    }
  } finally {
    await t.close();
  }
});

test('2. a query that blows past the caller-SQL memory cap costs only its worker: 503, then SQL answers again', async () => {
  const t = await startServer({ sqlConnections: 1, sqlMemoryLimit: '512MB' });
  try {
    const r = await within(60_000, t.post('/v3/sql', { sql: 'SELECT list(range(100000000))::VARCHAR AS s' }), 'list(range(1e8))');
    const body = await r.text();
    assert.ok(r.status === 503 || r.status === 400, `${r.status} ${body.slice(0, 300)}`);
    const j = assertV3Envelope(r.status, body, 'memory blow-up');
    assert.match(j.error.message, /memory/i);
    assert.match(j.error.message, /IDQS_SQL_MEMORY_LIMIT/);
    // Callers cannot run SET: the engine's advice to its operator is not passed on.
    assert.doesNotMatch(j.error.message, /\bSET\b|Possible solution/i);
    const ok = await within(15_000, t.post('/v3/sql', { sql: 'SELECT 42 AS a' }), 'SQL after the blow-up');
    assert.equal(ok.status, 200);
    assert.deepEqual(((await ok.json()) as Json).rows, [{ a: 42 }]);
  } finally {
    await t.close();
  }
});

test('3. the SQL deadline is real: a parser-bound nested expression answers 504 at the deadline and SQL keeps answering', async () => {
  const t = await startServer({ sqlTimeoutMs: 1000, sqlConnections: 1 });
  try {
    const nested = `SELECT ${'abs('.repeat(900)}1${')'.repeat(900)} AS x`;
    const started = Date.now();
    const r = await within(5000, t.post('/v3/sql', { sql: nested }), 'nested expression');
    const j = assertV3Envelope(r.status, await r.text(), 'nested expression');
    assert.equal(r.status, 504);
    assert.equal(j.error.code, 'query_timeout');
    assert.match(j.error.message, /IDQS_SQL_TIMEOUT_MS/);
    assert.ok(Date.now() - started < 4000);
    const ok = await within(10_000, t.post('/v3/sql', { sql: 'SELECT 1 AS a' }), 'SELECT 1 after the nested expression');
    assert.equal(ok.status, 200);
    const again = await within(5000, t.post('/v3/sql', { sql: 'SELECT 2 AS a' }), 'the next query');
    assert.equal(again.status, 200);
  } finally {
    await t.close();
  }
});

test('4. a /v2 client that disconnects while its page waits cancels it; a parked page nobody collects is cancelled', async () => {
  const t = await startServer({ connections: 1, v2DeadlineMs: 200, v2OrphanMs: 500 });
  try {
    const body = { cohort_def: { name: 'x', description: 'y', filters: { collection_id: ['nlst'] } }, fields: ['SeriesInstanceUID'], page_size: 10 };
    // Once answered, so what every page shares (the data version) is known; then the only connection is taken.
    assert.equal((await t.post('/v2/cohorts/manifest/preview', body)).status, 200);
    await eventually(10_000, () => t.ctx.engine.stats().curated.busy === 0, 'start-up work done');
    const held = await t.ctx.engine.curated.acquire();
    const before = t.ctx.engine.stats().curated;
    // The client leaves while its page waits for the engine.
    const c = connect(portOf(t.url), '127.0.0.1');
    c.write(httpText('POST', '/v2/cohorts/manifest/preview', body));
    await eventually(2000, () => t.ctx.engine.stats().curated.queued > 0, 'the page waits for the engine');
    c.destroy();
    await eventually(2000, () => t.ctx.engine.stats().curated.queued === 0, 'the page leaves the queue when its client goes');
    // A page that outlives the deadline is parked (202); nobody collects it, so it is cancelled.
    const r = await t.post('/v2/cohorts/manifest/preview', body);
    assert.equal(r.status, 202);
    await r.json();
    await eventually(3000, () => t.ctx.engine.stats().curated.queued === 0, 'the uncollected page is cancelled');
    held.release();
    const after = t.ctx.engine.stats().curated;
    assert.ok(after.cancelled >= before.cancelled + 2, `cancelled ${before.cancelled} -> ${after.cancelled}`);
    const ok = await t.post('/v2/cohorts/manifest/preview', body);
    assert.equal(ok.status, 200);
  } finally {
    await t.close();
  }
});

test('5. a body that arrives slowly and a connection that sends no headers are closed by their deadlines', async () => {
  const t = await startServer({ requestTimeoutMs: 1000, headersTimeoutMs: 1000 });
  try {
    // Headers, then one byte of a 40-byte body every 200 ms.
    const slow = connect(portOf(t.url), '127.0.0.1');
    let slowText = '';
    slow.on('data', (d) => (slowText += d.toString()));
    slow.on('error', () => undefined);
    const slowClosed = new Promise<void>((r) => slow.on('close', () => r()));
    slow.write('POST /v3/sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{');
    const drip = setInterval(() => slow.writable && slow.write(' '), 200);
    try {
      await within(4000, slowClosed, 'slow body closed');
    } finally {
      clearInterval(drip);
    }
    const answer = parseRaw(slowText);
    assert.equal(answer.status, 408, slowText.slice(0, 200));
    assertV3Envelope(408, answer.body, 'slow body');
    // No request at all, and headers that never end.
    const idle = await rawExchange(t.url, '', 4000);
    assert.equal(idle.closedByServer, true, 'an idle connection is closed');
    const partial = await rawExchange(t.url, 'GET /v3/version HTTP/1.1\r\nHost: 127.0.0.1\r\n', 4000);
    assert.equal(partial.closedByServer, true, 'unfinished headers are closed');
  } finally {
    await t.close();
  }
});

test('6. caller SQL reads no server file, runs no maintenance, learns no server path, and a NUL byte is refused', async () => {
  const db = (await testDataset()).db;
  const refused = [
    `SELECT octet_length(content) AS n FROM read_blob('${db}')`,
    `SELECT content FROM read_blob('${db}.tmp/*')`,
    `SELECT * FROM read_text('${db}')`,
    `SELECT * FROM glob('${dirname(db)}/*')`,
    'SELECT * FROM checkpoint()',
    'SELECT * FROM force_checkpoint()',
    'SELECT * FROM duckdb_temporary_files()',
    "SELECT current_setting('temp_directory') AS t",
    "SELECT current_setting('secret_directory') AS t",
    'SELECT * FROM duckdb_databases()',
    'SELECT * FROM duckdb_databases',
    'SELECT path FROM system.main.duckdb_databases',
    'SELECT * FROM pragma_database_list',
    'SELECT file FROM "PRAGMA_DATABASE_LIST"',
    'SELECT d.* FROM (SELECT 1 AS x) t, pragma_database_list d',
    'SELECT * FROM duckdb_settings()',
    'SELECT * FROM duckdb_extensions()',
    "SELECT * FROM query('SELECT 1')",
    `SELECT * FROM '${db}'`,
  ];
  const secrets = [dirname(db), homedir(), process.cwd()].filter((p) => p.length > 1);
  for (const sql of refused) {
    const r = await s.post('/v3/sql', { sql });
    const text = await r.text();
    assert.equal(r.status, 400, `${sql}: ${text.slice(0, 300)}`);
    const j = assertV3Envelope(400, text, sql);
    assert.equal(j.error.code, 'invalid_query', sql);
    for (const p of secrets) assert.ok(!text.includes(p), `${sql} discloses ${p}: ${text.slice(0, 300)}`);
  }
  const nul = await s.post('/v3/sql', { sql: 'SELECT 1\u0000 garbage' });
  const nulBody = assertV3Envelope(nul.status, await nul.text(), 'NUL');
  assert.equal(nul.status, 400);
  assert.match(nulBody.error.message, /NUL/);
  // Ordinary queries that use functions and tables still work.
  const ok = await s.post('/v3/sql', { sql: "SELECT count(*) AS n, max(length(collection_id)) AS l FROM index WHERE list_contains(['CT', 'MR'], Modality)" });
  assert.equal(ok.status, 200);
});

test('7. the Host header is never echoed: absolute URLs come from the configured public URL or an allowed host', async (t) => {
  // On loopback a foreign Host is refused outright (test/http-rebinding.test.ts); a server bound to all interfaces answers it.
  const open = await startServer({ host: '0.0.0.0' });
  t.after(() => open.close());
  const evil = await httpGet(open.url, '/v2/about', { Host: 'evil.example' });
  assert.equal(evil.status, 200);
  assert.ok(!evil.text.includes('evil.example'), evil.text);
  const manifest = await httpGet(open.url, '/v3/cohort/manifest', { Host: 'evil.example' }, 'POST', { filters: CT, page_size: 1 });
  assert.equal(manifest.status, 200);
  assert.ok(!manifest.text.includes('evil.example'), 'download commands do not name the Host header');
  // Behind a trusted proxy, the forwarded scheme and an allowed forwarded host are used.
  const proxied = await startServer({ trustProxy: true, allowedHosts: ['api.example.org'] });
  try {
    const r = await httpGet(proxied.url, '/v3/cohort/manifest', { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.example.org' }, 'POST', { filters: CT, page_size: 1 });
    const j = JSON.parse(r.text) as Json;
    assert.match(j.download.commands.save_manifest, /https:\/\/api\.example\.org\/v3\/cohort\/manifest\.txt/);
    const other = await httpGet(proxied.url, '/v3/cohort/manifest', { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.example' }, 'POST', { filters: CT, page_size: 1 });
    assert.ok(!other.text.includes('evil.example'));
  } finally {
    await proxied.close();
  }
  const configured = await startServer({ publicUrl: 'https://idqs.example.org/api', host: '0.0.0.0' });
  try {
    const r = await httpGet(configured.url, '/v2/about', { Host: 'evil.example' });
    assert.match(r.text, /https:\/\/idqs\.example\.org\/api\/v2\/swagger/);
  } finally {
    await configured.close();
  }
});

test('8. SIGTERM stops the server within IDQS_SHUTDOWN_S although a client is stalled on a manifest', async () => {
  const db = (await testDataset()).db;
  const port = await freePort();
  const proc = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', String(port)], {
    env: { ...process.env, IDQS_SHUTDOWN_S: '2', IDQS_LOG_LEVEL: 'warn', IDQS_CACHE_DIR: join(tmpdir(), 'idqs-robust-cache') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  // The start-up poll stops with the test, so a server that never comes up fails it instead of hanging the file.
  let polling = true;
  try {
    const url = `http://127.0.0.1:${port}`;
    await within(20_000, (async () => {
      while (polling) {
        if (proc.exitCode !== null) throw new Error(`the server exited with ${proc.exitCode}: ${stderr}`);
        try {
          if ((await fetch(url + '/v3/health')).ok) return;
        } catch {
          /* not up yet */
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })(), 'server start');
    const reader = stalledReader(url, 'POST', '/v3/cohort/manifest.txt', WHOLE_S5CMD);
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    proc.kill('SIGTERM');
    const code = await within(6000, exited, `exit after SIGTERM (stderr: ${stderr})`);
    assert.equal(code, 0, stderr);
    assert.ok(Date.now() - t0 < 5000);
    reader.socket.destroy();
  } finally {
    polling = false;
    proc.kill('SIGKILL');
  }
});

test('9. range bounds beyond 64-bit integers are a 400 on every route and tool that takes a filter', async () => {
  const huge = { ranges: { instanceCount: { gte: 1e20 } } };
  const negative = { ranges: { instanceCount: { lte: -1e19 } } };
  for (const [path, body] of [
    ['/v3/cohort/counts', huge],
    ['/v3/cohort/counts', negative],
    ['/v3/cohort/manifest', { filters: huge }],
    ['/v3/cohort/manifest.txt', { filters: huge }],
    ['/v3/licenses', huge],
    ['/v3/citations', { filters: huge }],
    ['/v3/cohort/facets', { filters: huge }],
    ['/v3/cohort/table', { filters: huge }],
  ] as const) {
    const r = await s.post(path, body);
    const text = await r.text();
    assert.equal(r.status, 400, `${path}: ${text.slice(0, 300)}`);
    const j = assertV3Envelope(400, text, path);
    assert.equal(j.error.code, 'invalid_query');
    assert.match(j.error.message, /instanceCount/);
  }
  const mcp = new Client({ name: 'robustness', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const r = (await mcp.callTool({ name: 'get_cohort_counts', arguments: huge })) as CallToolResult;
    assert.equal(r.isError, true);
    assert.equal((r.structuredContent as Json).error.code, 'invalid_query');
  } finally {
    await mcp.close();
  }
  const v2 = await s.post('/v2/cohorts/manifest/preview', {
    cohort_def: { name: 'x', description: 'y', filters: { age_at_diagnosis_gte: [1e20] } },
    fields: ['PatientID'],
  });
  const v2Text = await v2.text();
  assert.equal(v2.status, 400, v2Text.slice(0, 300));
  assertV2Envelope(400, v2Text, '/v2 preview with a huge bound');
  // The exact 64-bit limits are in range (JSON's 9223372036854775807 reads as 2^63, one past the maximum).
  const all = (await s.ctx.engine.one('SELECT count(*)::INTEGER AS n FROM "index"'))!.n;
  const limits = await s.post('/v3/cohort/counts', '{"ranges": {"instanceCount": {"gte": -9223372036854775808, "lte": 9223372036854775807}}}');
  const limitsText = await limits.text();
  assert.equal(limits.status, 200, limitsText.slice(0, 300));
  assert.equal((JSON.parse(limitsText) as Json).series, all);
  const none = await s.post('/v3/cohort/counts', '{"ranges": {"instanceCount": {"gte": 9223372036854775807}}}');
  assert.equal(none.status, 200);
  assert.equal(((await none.json()) as Json).series, 0);
  const v2Limit = await s.post('/v2/cohorts/manifest/preview', '{"cohort_def": {"filters": {"age_at_diagnosis_lte": [9223372036854775807]}}, "fields": [], "counts": true}');
  assert.equal(v2Limit.status, 200, (await v2Limit.text()).slice(0, 300));
});

test('9. errors raised before routing use the envelope of their interface: 431, 414, bad URL encoding, bad JSON', async () => {
  const cases: [string, string | Buffer, number, 'v3' | 'v2'][] = [
    ['header too large', `GET /v3/version HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'v3'],
    ['URL too long', `GET /v3/version?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'v3'],
    ['parameter too long', `GET /v3/collections/${'a'.repeat(500)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414, 'v3'],
    ['bad URL encoding', `GET /v3/collections/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n`, 400, 'v3'],
    ['bad URL encoding /v2', `GET /v2/filters/values/%zz HTTP/1.1\r\nHost: x\r\n\r\n`, 400, 'v2'],
    ['bad JSON', httpText('POST', '/v3/cohort/counts', '{"terms": '), 400, 'v3'],
    ['bad JSON /v2', httpText('POST', '/v2/cohorts/manifest/preview', '{"x'), 400, 'v2'],
    ['not HTTP', 'HELLO\r\n\r\n', 400, 'v3'],
  ];
  for (const [what, bytes, status, surface] of cases) {
    const { text } = await rawExchange(s.url, bytes, 3000);
    const r = parseRaw(text);
    assert.equal(r.status, status, `${what}: ${text.slice(0, 300)}`);
    if (surface === 'v3') assertV3Envelope(status, r.body, what);
    else assertV2Envelope(status, r.body, what);
  }
});

test('9. a seeded fuzz pass over every route of both OpenAPI documents: no 5xx, every error in its envelope', async () => {
  const docs = await Promise.all(['/v3/openapi.json', '/v2/openapi.json'].map(async (p) => (await (await s.get(p)).json()) as Json));
  const ops: { method: string; path: string; op: Json; v2: boolean }[] = [];
  docs.forEach((doc, i) => {
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) if (['get', 'post'].includes(method)) ops.push({ method, path, op: op as Json, v2: i === 1 });
    }
  });
  assert.ok(ops.length > 30, `${ops.length} operations`);
  const junk = fc.oneof(
    fc.constant(1e20),
    fc.constant(-1e20),
    fc.constant(2 ** 63),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constant(''),
    fc.constant('\u0000'),
    fc.constant(null),
    fc.boolean(),
    fc.constant('%'),
    fc.constant('../../etc/passwd'),
    fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(1e20)), { maxLength: 3 }),
  );
  const names = ['terms', 'ranges', 'filters', 'Modality', 'collection_id', 'instanceCount', 'StudyDate', 'page', 'page_size', 'limit', 'max_rows', 'sql', 'source', 'format', 'cohort_def', 'fields', 'next_page', 'gte', 'lte', 'age_at_diagnosis_gte', 'attributes', 'count', 'citation_format', 'crdc_series_uuid', 'x'];
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, junk, tie('o'), fc.array(tie('v'), { maxLength: 3 })),
    o: fc.dictionary(fc.constantFrom(...names), tie('v'), { maxKeys: 4 }),
  })).v;
  const rng = fc.sample(fc.tuple(fc.nat(ops.length - 1), value, fc.dictionary(fc.constantFrom(...names), fc.oneof(fc.string(), fc.constant('1e20'), fc.constant('-1')), { maxKeys: 3 }), fc.string()), { seed: 15, numRuns: 900 });
  let requests = 0;
  for (const [k, body, query, segment] of rng) {
    const { method, path, op, v2 } = ops[k]!;
    const concrete = path.replace(/\{[^}]+\}/g, () => encodeURIComponent(segment || 'x'));
    const qs = new URLSearchParams(query as Record<string, string>).toString();
    const url = `${concrete}${qs ? `?${qs}` : ''}`;
    const r =
      method === 'get'
        ? await s.get(url)
        : await s.post(url, typeof body === 'string' && body.length % 3 === 0 ? body : JSON.stringify(op.requestBody ? body : {}));
    const text = await r.text();
    requests++;
    assert.ok(r.status < 500, `${method.toUpperCase()} ${url} ${JSON.stringify(body).slice(0, 200)} -> ${r.status} ${text.slice(0, 300)}`);
    if (r.status >= 400) {
      if (v2) assertV2Envelope(r.status, text, `${method} ${url}`);
      else assertV3Envelope(r.status, text, `${method} ${url}`);
    }
  }
  assert.equal(requests, 900);
});

test('10. a corrupt database file is the operator’s problem: 503 with a log line, /v3/ready says so, never a caller’s 400', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'idqs-corrupt-'));
  const db = join(dir, 'corrupt.duckdb');
  copyFileSync((await testDataset()).db, db);
  const t = await loggedServer({}, db);
  try {
    assert.equal((await t.get('/v3/ready')).status, 200);
    // Overwrite the second half of the file: data blocks no query has read yet.
    const size = statSync(db).size;
    const fd = openSync(db, 'r+');
    const junk = Buffer.alloc(64 * 1024, 0xa5);
    for (let off = Math.floor(size / 2); off < size - junk.length; off += junk.length) writeSync(fd, junk, 0, junk.length, off);
    closeSync(fd);
    const r = await within(20_000, t.post('/v3/sql', { sql: 'SELECT count(DISTINCT SeriesInstanceUID) AS n, sum(length(series_aws_url)) AS l FROM index' }), 'query on a corrupt file');
    const text = await r.text();
    assert.equal(r.status, 503, text.slice(0, 300));
    const j = assertV3Envelope(503, text, 'corrupt');
    assert.equal(j.error.code, 'unavailable');
    assert.ok(!text.includes(dir), 'no server path in the answer');
    assert.ok(
      t.log.some((l) => l.level >= 50 && /database/i.test(String(l.msg)) && l.req_id === j.error.request_id),
      'an operator-facing log line names the request',
    );
    const ready = await t.get('/v3/ready');
    assert.equal(ready.status, 503);
    assert.equal(assertV3Envelope(503, await ready.text(), 'ready').error.code, 'not_ready');
    assert.equal((await t.get('/v3/health')).status, 200, 'liveness is unchanged');
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('10. a SQL response whose client went away is logged as 499, not 200', async () => {
  const t = await loggedServer({});
  try {
    const c = connect(portOf(t.url), '127.0.0.1');
    c.on('error', () => undefined);
    c.write(httpText('POST', '/v3/sql', { sql: 'SELECT count(*) AS n FROM range(3000000000) a' }));
    await new Promise((r) => setTimeout(r, 400));
    c.destroy();
    await eventually(10_000, () => t.log.some((l) => l.path === '/v3/sql'), 'the request is logged');
    const line = t.log.find((l) => l.path === '/v3/sql')!;
    assert.equal(line.status, 499, JSON.stringify(line));
  } finally {
    await t.close();
  }
});

test('11. a bad configuration stops start-up with every problem, naming each variable', () => {
  const problems = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (e) {
      assert.ok(e instanceof ConfigError, String(e));
      return e.message;
    }
    return assert.fail(`${JSON.stringify(env)} was accepted`);
  };
  assert.match(problems({ IDQS_VALUES_LIMIT: '20000' }), /IDQS_VALUES_LIMIT.*IDQS_VALUES_LIMIT_CAP/);
  assert.match(problems({ IDQS_SQL_MAX_ROWS: '12.5' }), /IDQS_SQL_MAX_ROWS.*integer/);
  // An unknown IDQS_ name is a warning (with the did-you-mean), not a problem.
  assert.equal(loadConfig({ IDQS_CONECTIONS: '4', IDQS_BASE: 'http://x' }).connections, 8);
  assert.deepEqual(
    configWarnings({ IDQS_CONECTIONS: '4', IDQS_BASE: 'http://x', IDQS_DB: 'a.duckdb' }).map((w) => w.split(' ')[0]),
    ['IDQS_BASE', 'IDQS_CONECTIONS'],
  );
  assert.match(configWarnings({ IDQS_CONECTIONS: '4' })[0]!, /IDQS_CONECTIONS is not a setting.*Did you mean 'IDQS_CONNECTIONS'/);
  assert.match(problems({ IDQS_MEMORY_LIMIT: 'lots' }), /IDQS_MEMORY_LIMIT/);
  assert.match(problems({ IDQS_PUBLIC_URL: 'idqs.example.org' }), /IDQS_PUBLIC_URL/);
  assert.match(problems({ IDQS_TRUST_PROXY: 'maybe' }), /IDQS_TRUST_PROXY/);
  const all = problems({ IDQS_PAGE_SIZE: '0', IDQS_SHUTDOWN_S: '-1', IDQS_SQL_LOG_MODE: 'full' });
  for (const v of ['IDQS_PAGE_SIZE', 'IDQS_SHUTDOWN_S', 'IDQS_SQL_LOG_MODE']) assert.match(all, new RegExp(v), 'every problem at once');
  // The defaults are a valid configuration, and so are values at their caps.
  assert.equal(loadConfig({}).valuesLimit, 100);
  assert.equal(loadConfig({ IDQS_VALUES_LIMIT: '10000' }).valuesLimit, 10_000);
});

test('11. idqs serve refuses a bad configuration before opening anything, naming the variable; an unknown IDQS_ name only warns', async () => {
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const c = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d) => (stdout += d));
      c.stderr.on('data', (d) => (stderr += d));
      c.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const r = await run(['serve', '--port', '0'], { IDQS_VALUES_LIMIT: '20000', IDQS_SQL_TIMOUT_MS: '5' });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /IDQS_VALUES_LIMIT/);
  assert.match(r.stderr, /warning: IDQS_SQL_TIMOUT_MS is not a setting.*IDQS_SQL_TIMEOUT_MS/);
  // A variable some other program exported does not stop a command: it runs, and says once what it ignored.
  const db = (await testDataset()).db;
  const ok = await run(['sql', 'SELECT 41 + 1 AS n', '--db', db, '--format', 'json'], { IDQS_BASE: 'http://127.0.0.1:9', IDQS_CONECTIONS: '4' });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /42/);
  assert.equal(ok.stderr.match(/warning: IDQS_BASE is not a setting and is ignored/g)?.length, 1, ok.stderr);
  assert.match(ok.stderr, /warning: IDQS_CONECTIONS is not a setting.*Did you mean 'IDQS_CONNECTIONS'/);
});
