// Logging and progress through the official SDK client: a slow run_sql that
// carries a progress token gets progress notifications while it runs (over
// streamable HTTP, whose response then becomes an SSE stream, and over
// stdio), strictly increasing and all before the result; logging/setLevel is
// honoured (no log messages before it, the call's record at info, nothing
// below warning after raising the level); calls without a token stay plain JSON.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { startServer, testDataset, type TestServer } from './fixture.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Progress interval of the servers under test: short, so that a query of a second or more is "slow". */
const PROGRESS_MS = 100;
/** A query the engine needs a while for (49 million rows hashed): half a second or more on an idle core, more under load. */
const N = 7_000;
const SLOW_SQL = `SELECT sum(hash(a.range * 7 + b.range)) AS h FROM range(${N}) a, range(${N}) b`;

let s: TestServer;
before(async () => {
  // The slow query is asked several times and must run each time: no caller-SQL cache here.
  s = await startServer({ mcpProgressMs: PROGRESS_MS, sqlCacheMb: 0 });
});
after(async () => {
  await s?.close();
});

async function exercise(client: Client): Promise<void> {
  assert.deepEqual(client.getServerCapabilities()?.logging, {});
  const logs: { level: string; data: Record<string, unknown> }[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push({ level: n.params.level, data: n.params.data as Record<string, unknown> }));

  // No level set yet: no log messages.
  await client.callTool({ name: 'get_stats', arguments: {} });
  assert.equal(logs.length, 0, JSON.stringify(logs));

  await client.setLoggingLevel('info');
  const progress: { p: Progress; at: number }[] = [];
  const started = performance.now();
  const r = (await client.callTool({ name: 'run_sql', arguments: { sql: SLOW_SQL } }, undefined, {
    onprogress: (p) => void progress.push({ p, at: performance.now() }),
    timeout: 60_000,
  })) as CallToolResult;
  const resultAt = performance.now();
  const took = resultAt - started;
  assert.notEqual(r.isError, true, JSON.stringify(r.structuredContent));
  // The answer is the engine's own: the same SQL run directly.
  const truth = await s.ctx.engine.one(SLOW_SQL);
  assert.equal(String((r.structuredContent as { rows: { h: unknown }[] }).rows[0]!.h), String(truth!.h));
  // A call of `took` ms reports about every PROGRESS_MS after the first PROGRESS_MS.
  assert.ok(took > 3 * PROGRESS_MS, `the query is slow enough to test (${Math.round(took)} ms)`);
  assert.ok(progress.length >= 2, `${progress.length} progress notifications in ${Math.round(took)} ms`);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.p.progress > progress[i - 1]!.p.progress, 'progress increases');
  for (const { p, at } of progress) {
    assert.match(p.message ?? '', /^run_sql: running for \d+\.\d s$/);
    assert.ok(at <= resultAt, 'received while the call ran');
  }
  assert.ok(progress[0]!.p.progress >= PROGRESS_MS / 1000 - 0.05);

  // The call's record at info: tool, outcome, row count, never the rows.
  const record = logs.find((l) => l.data.tool === 'run_sql');
  assert.equal(record?.level, 'info', JSON.stringify(logs));
  assert.equal(record!.data.outcome, 'ok');
  assert.equal(record!.data.row_count, 1);
  assert.ok(!JSON.stringify(logs).includes(String(truth!.h)), 'no result values in log messages');
  assert.ok(!logs.some((l) => l.level === 'debug'), 'nothing below the level set');

  // Raised to warning: a successful call logs nothing, a failing one logs a warning with its code.
  logs.length = 0;
  await client.setLoggingLevel('warning');
  await client.callTool({ name: 'get_stats', arguments: {} });
  const bad = (await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT * FROM indx' } })) as CallToolResult;
  assert.equal(bad.isError, true);
  assert.deepEqual(logs.map((l) => [l.level, l.data.tool, l.data.error]), [['warning', 'run_sql', 'invalid_query']]);
}

test('over streamable HTTP: progress of a slow run_sql arrives during the call, in an SSE response; setLevel is honoured per request', async () => {
  const client = new Client({ name: 'progress-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    // Stateless HTTP: each request has its own server, so a level set in one request does not reach the next.
    assert.deepEqual(client.getServerCapabilities()?.logging, {});
    const progress: Progress[] = [];
    const started = performance.now();
    const r = (await client.callTool({ name: 'run_sql', arguments: { sql: SLOW_SQL } }, undefined, { onprogress: (p) => void progress.push(p), timeout: 60_000 })) as CallToolResult;
    const took = performance.now() - started;
    assert.notEqual(r.isError, true);
    assert.ok(took > 3 * PROGRESS_MS, `slow enough (${Math.round(took)} ms)`);
    assert.ok(progress.length >= 2, `${progress.length} progress notifications in ${Math.round(took)} ms`);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress);
    assert.deepEqual(await client.setLoggingLevel('debug'), {});
  } finally {
    await client.close();
  }
  // On the wire: with a token the answer is an SSE stream (progress events, then the result); without, plain JSON.
  const call = (meta: Record<string, unknown> | undefined, sql = SLOW_SQL) =>
    fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run_sql', arguments: { sql }, ...(meta ? { _meta: meta } : {}) } }),
    });
  const streamed = await call({ progressToken: 'tok-1' });
  assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = (await streamed.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { method?: string; id?: number; params?: { progressToken?: string } });
  assert.ok(events.length >= 3, JSON.stringify(events).slice(0, 300));
  assert.equal(events.at(-1)!.id, 7, 'the result comes last');
  assert.ok(events.slice(0, -1).every((e) => e.method === 'notifications/progress' && e.params?.progressToken === 'tok-1'));
  const plain = await call(undefined, 'SELECT 1 AS x');
  assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(((await plain.json()) as { id: number }).id, 7);
  // A level the protocol does not have is the caller's mistake: -32602 (invalid params) naming the levels, no validation dump.
  for (const params of [{ level: 'loud' }, {}]) {
    const bad = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'logging/setLevel', params }),
    });
    const text = await bad.text();
    const body = JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as { error: { code: number; message: string } };
    assert.equal(body.error.code, -32602, text);
    assert.match(body.error.message, /level must be one of debug, info, notice, warning, error, critical, alert, emergency; got/);
    assert.ok(body.error.message.length < 200, body.error.message);
  }
});

test('over stdio (spawning idqs mcp): progress of a slow run_sql during the call; logging/setLevel honoured', async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin/idqs.cjs'), 'mcp', '--db', (await testDataset()).db],
    env: { ...(process.env as Record<string, string>), IDQS_LOG_LEVEL: 'warn', IDQS_MCP_PROGRESS_MS: String(PROGRESS_MS) },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'progress-stdio', version: '1.0.0' });
  await client.connect(transport);
  try {
    await exercise(client);
  } finally {
    await client.close();
  }
});
