// The agent tools through real transports: the SDK's Client over stdio
// (spawning the CLI) and over streamable HTTP, and the HTTP endpoint spoken
// to directly (stateless: initialize, tools/list and tools/call each stand
// alone; malformed bodies get JSON-RPC errors).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServer, testDataset, withoutRequestId, type TestServer } from './fixture.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The agent limits the README documents (default / cap), under the default configuration the test server runs with. */
const LIMITS = { sqlRows: { default: 100, cap: 1000 }, pageSize: { default: 10, cap: 100 }, values: { default: 50, cap: 500 } };

const TOOLS = [
  'build_cohort', 'get_attribute_values', 'get_citations', 'get_clinical_table', 'get_clinical_table_schema', 'get_cohort_changes', 'get_cohort_counts', 'get_cohort_facets', 'get_cohort_urls',
  'get_collection', 'get_idc_version', 'get_licenses', 'get_stats', 'get_table_schema', 'get_viewer_url', 'list_analysis_results', 'list_attributes',
  'list_clinical_tables', 'list_collections', 'list_tables', 'resolve_series', 'run_sql',
];

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
});

interface ErrorEnvelope {
  error: { code: string; message: string };
}

function structured<T>(r: unknown): T {
  return (r as CallToolResult).structuredContent as T;
}

/** What every client must see, whatever the transport. */
async function exercise(client: Client): Promise<void> {
  const tools = await client.listTools();
  assert.deepEqual(tools.tools.map((t) => t.name).sort(), TOOLS);
  for (const t of tools.tools) {
    assert.ok((t.description ?? '').length > 40, `${t.name} has a description`);
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(t.annotations?.readOnlyHint, true);
  }
  const values = tools.tools.find((t) => t.name === 'get_attribute_values')!;
  assert.match(values.description!, /before filtering/);

  const resources = await client.listResources();
  const uris = resources.resources.map((r) => r.uri);
  assert.ok(uris.includes('idqs://guide') && uris.includes('idqs://tables') && uris.includes('idqs://schema/index'), uris.join(' '));
  const templates = await client.listResourceTemplates();
  assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ['idqs://schema/{table}', 'idc://schema/{table}']);
  const guide = await client.readResource({ uri: 'idqs://guide' });
  assert.match((guide.contents[0] as { text: string }).text, /Data model/);
  const schema = JSON.parse(((await client.readResource({ uri: 'idqs://schema/index' })).contents[0] as { text: string }).text) as { columns: { name: string }[] };
  assert.deepEqual(
    schema.columns.map((c) => c.name),
    s.ctx.catalog.columns.get('index')!.map((c) => c.name),
  );
  await assert.rejects(client.readResource({ uri: 'idqs://schema/indx' }), /Unknown table 'indx'.*Did you mean 'index'/s);
  // The public service's name of the same resource.
  const alias = JSON.parse(((await client.readResource({ uri: 'idc://schema/index' })).contents[0] as { text: string }).text) as { columns: { name: string }[] };
  assert.deepEqual(alias, schema);
  await assert.rejects(client.readResource({ uri: 'idc://schema/indx' }), /Unknown table 'indx'/);

  // run_sql against independent SQL.
  const sql = 'SELECT collection_id, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC, collection_id';
  const expected = await s.ctx.engine.rows('SELECT collection_id, count(*) AS n FROM "index" GROUP BY 1 ORDER BY n DESC, collection_id');
  const r = structured<{ rows: unknown[]; truncated: boolean; max_rows: number }>(await client.callTool({ name: 'run_sql', arguments: { sql, max_rows: 3 } }));
  assert.deepEqual(r.rows, expected.slice(0, 3));
  assert.equal(r.truncated, expected.length > 3);

  // A cohort tool against independent SQL.
  const coll = String(expected[0]!.collection_id);
  const counts = structured<{ series: number; patients: number }>(await client.callTool({ name: 'get_cohort_counts', arguments: { terms: { collection_id: [coll] } } }));
  const truth = (await s.ctx.engine.one('SELECT count(*) AS series, count(DISTINCT PatientID) AS patients FROM "index" WHERE collection_id = ?', [coll]))!;
  assert.equal(counts.series, Number(truth.series));
  assert.equal(counts.patients, Number(truth.patients));

  // Errors keep the code and a message a model can act on.
  const bad = (await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT count(*) FROM indx' } })) as CallToolResult;
  assert.equal(bad.isError, true);
  const env = structured<ErrorEnvelope>(bad);
  assert.equal(env.error.code, 'invalid_query');
  assert.match(env.error.message, /Did you mean "index"/);
  assert.deepEqual(JSON.parse((bad.content[0] as { text: string }).text), env);
  const unknownFilter = structured<ErrorEnvelope>(await client.callTool({ name: 'build_cohort', arguments: { terms: { modality: ['CT'] } } }));
  assert.equal(unknownFilter.error.code, 'invalid_query');
  assert.match(unknownFilter.error.message, /Did you mean 'Modality'/);
  assert.match(unknownFilter.error.message, /list_attributes lists them/, 'routes are named as tools');
}

test('the SDK client over streamable HTTP lists tools and resources and calls run_sql, a cohort tool and an error case', async () => {
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    assert.equal(client.getServerVersion()?.name, 'IDQS');
    assert.equal(client.getServerVersion()?.version, s.ctx.serverVersion);
    assert.match(client.getInstructions() ?? '', /get_attribute_values/);
    await exercise(client);
  } finally {
    await client.close();
  }
});

test('the SDK client over stdio (spawning idqs mcp) does the same, with logs on stderr only', async () => {
  const ds = await testDataset();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin/idqs.cjs'), 'mcp', '--db', ds.db],
    env: { ...(process.env as Record<string, string>), IDQS_LOG_LEVEL: 'info' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion()?.name, 'IDQS');
    await exercise(client);
  } finally {
    await client.close();
  }
  assert.match(stderr, /agent tools \(MCP\) on stdio/);
  // The audit log: one JSON line per tool call, on stderr.
  const calls = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.tool);
  const sqlCall = calls.find((l) => l.tool === 'run_sql' && l.outcome === 'ok')!;
  assert.equal(sqlCall.row_count, 3);
  assert.match(String(sqlCall.sql), /^SELECT collection_id/);
  assert.equal(calls.find((l) => l.tool === 'run_sql' && l.outcome === 'error')?.error, 'invalid_query');
});

test('with --demo, the generated dataset is built with its progress on stderr, stdout carries only JSON-RPC, and the instructions say the data is generated', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'idqs-mcp-'));
  try {
    const child = spawn(process.execPath, [join(root, 'bin/idqs.cjs'), 'mcp', '--demo'], {
      env: { ...process.env, IDQS_CACHE_DIR: cache, IDQS_SCALE: '0.0005', IDQS_DB: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.stdin.write(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) + '\n',
    );
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_stats', arguments: {} } }) + '\n');
    // Wait for both answers, then close stdin: the server exits.
    while (stdout.split('\n').filter((l) => l.trim()).length < 2) {
      if (child.exitCode !== null) assert.fail(`exited early: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.stdin.end();
    assert.equal(await exited, 0);
    const lines = stdout.split('\n').filter((l) => l.trim());
    const messages = lines.map((l) => JSON.parse(l) as { jsonrpc: string; id: number; result: { structuredContent?: { series: number }; instructions?: string } });
    assert.deepEqual(messages.map((m) => [m.jsonrpc, m.id]), [['2.0', 1], ['2.0', 2]]);
    assert.match(messages[0]!.result.instructions!, /^This server serves GENERATED DEMO DATA: every patient, study and series identifier is made up/);
    assert.match(stderr, /data: the generated demo dataset \(identifiers are not real\)/);
    assert.ok(messages[1]!.result.structuredContent!.series > 0);
    assert.match(stderr, /generating default dataset/);
    assert.match(stderr, /building database/);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

/** A raw POST to /mcp. */
async function rpc(body: unknown, headers: Record<string, string> = {}, path = '/mcp'): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const r = await fetch(s.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

test('the HTTP endpoint answers initialize, tools/list and tools/call without a session, in plain JSON', async () => {
  const init = await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  assert.equal(init.status, 200);
  assert.match(init.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(init.headers.get('mcp-session-id'), null, 'stateless: no session id');
  const initResult = init.json.result as { serverInfo: { name: string; version: string }; capabilities: Record<string, { listChanged?: boolean }> };
  assert.deepEqual(initResult.serverInfo, { name: 'IDQS', title: 'IDQS: Imaging Data Query Service', version: s.ctx.serverVersion });
  assert.equal(initResult.capabilities.tools?.listChanged, false, 'the tool list is fixed');
  assert.ok(initResult.capabilities.resources);

  // Each request on its own: no initialize before, no session header.
  const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { accept: 'application/json' });
  assert.equal(list.status, 200);
  assert.deepEqual((list.json.result as { tools: { name: string }[] }).tools.map((t) => t.name).sort(), TOOLS);

  const sql = 'SELECT count(*) AS n FROM index';
  const call = await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'run_sql', arguments: { sql } } }, { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(call.status, 200);
  assert.equal(call.json.id, 3);
  const res = call.json.result as { structuredContent: { rows: { n: number }[]; max_rows: number } };
  assert.equal(res.structuredContent.rows[0]!.n, Number((await s.ctx.engine.one('SELECT count(*) AS n FROM "index"'))!.n));
  assert.equal(res.structuredContent.max_rows, LIMITS.sqlRows.default, 'the agent default row cap applies');
  assert.equal(call.headers.get('cache-control'), 'no-store');
  assert.equal(call.headers.get('etag'), null);

  // The trailing-slash spelling works too, and a batch of requests is answered as a batch.
  const twin = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_stats', arguments: {} } }, {}, '/mcp/');
  assert.equal(twin.status, 200);
  assert.equal((twin.json.result as { structuredContent: { series: number } }).structuredContent.series, res.structuredContent.rows[0]!.n);

  // An unknown tool is a JSON-RPC invalid-params error that suggests the right name.
  const unknown = await rpc({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'run_sq', arguments: {} } });
  assert.equal((unknown.json.error as { code: number }).code, -32602);
  assert.match((unknown.json.error as { message: string }).message, /Did you mean 'run_sql'/);
});

test('the HTTP endpoint rejects malformed bodies and other methods with JSON-RPC errors', async () => {
  const notJson = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
  assert.equal(notJson.status, 400);
  assert.deepEqual(notJson.json, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null });

  // JSON that is not JSON-RPC is an invalid request (-32600); -32700 is for text that does not parse.
  for (const body of [{ hello: 'world' }, { jsonrpc: '2.0' }, [1], [], 'x', [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, 7]]) {
    const notRpc = await rpc(JSON.stringify(body));
    assert.equal(notRpc.status, 400, JSON.stringify(body));
    assert.equal(notRpc.json.jsonrpc, '2.0');
    assert.equal((notRpc.json.error as { code: number }).code, -32600, JSON.stringify(body));
    assert.match((notRpc.json.error as { message: string }).message, /^Invalid Request/);
    assert.equal(notRpc.json.id, null);
  }

  const empty = await rpc('');
  assert.equal(empty.status, 400);
  assert.equal((empty.json.error as { code: number }).code, -32700);

  const wrongType = await rpc('{}', { 'content-type': 'text/plain' });
  assert.equal(wrongType.status, 415);
  assert.equal((wrongType.json.error as { code: number }).code, -32000);

  const html = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'text/html' });
  assert.equal(html.status, 406);

  const tooLarge = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_sql', arguments: { sql: 'SELECT 1 --' + 'x'.repeat(s.ctx.config.bodyLimit) } } }));
  assert.equal(tooLarge.status, 413);
  assert.equal(tooLarge.json.jsonrpc, '2.0');

  for (const method of ['GET', 'DELETE']) {
    const r = await fetch(`${s.url}/mcp`, { method, headers: { accept: 'text/event-stream', 'if-none-match': s.ctx.etag } });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get('etag'), null);
    assert.equal(r.headers.get('allow'), 'POST, OPTIONS');
    const body = (await r.json()) as { jsonrpc: string; error: { code: number; message: string } };
    assert.equal(body.jsonrpc, '2.0');
    assert.match(body.error.message, /stateless/);
  }
});

test('limits: small defaults, hard caps, truncated flags and a warning when a page is cut down', async () => {
  const limits = LIMITS;
  const client = new Client({ name: 'limits-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const total = Number((await s.ctx.engine.one('SELECT count(*) AS n FROM "index"'))!.n);
    assert.ok(total > limits.sqlRows.cap, 'the test data has more series than the row cap');
    const big = structured<{ row_count: number; truncated: boolean; max_rows: number }>(
      await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT SeriesInstanceUID FROM index', max_rows: 1_000_000 } }),
    );
    assert.deepEqual([big.row_count, big.truncated, big.max_rows], [limits.sqlRows.cap, true, limits.sqlRows.cap]);

    const coll = String((await s.ctx.engine.one(`SELECT collection_id FROM "index" GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`))!.collection_id);
    const page = structured<{ page_size: number; returned: number; has_more: boolean; warnings: string[]; total_series: number }>(
      await client.callTool({ name: 'build_cohort', arguments: { terms: { collection_id: [coll] }, page_size: 100_000 } }),
    );
    assert.equal(page.page_size, limits.pageSize.cap);
    assert.equal(page.returned, Math.min(limits.pageSize.cap, page.total_series));
    assert.equal(page.has_more, page.total_series > limits.pageSize.cap);
    assert.ok(page.warnings.includes('page_size 100000 is above the cap of 100; lowered to 100. Use page to read further.'), page.warnings.join(' | '));
    const dflt = structured<{ page_size: number }>(await client.callTool({ name: 'build_cohort', arguments: { terms: { collection_id: [coll] } } }));
    assert.equal(dflt.page_size, limits.pageSize.default);

    const values = structured<{ values: unknown[]; truncated: boolean }>(await client.callTool({ name: 'get_attribute_values', arguments: { attribute: 'SeriesInstanceUID' } }));
    assert.deepEqual([values.values.length, values.truncated], [limits.values.default, true]);

    // null stands for an omitted argument; a wrong type is refused with the member named.
    const nulls = structured<{ series: number }>(await client.callTool({ name: 'get_cohort_counts', arguments: { terms: null, ranges: null } }));
    assert.equal(nulls.series, total);
    const wrong = structured<ErrorEnvelope>(await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT 1', max_rows: 'many' } }));
    assert.deepEqual(withoutRequestId(wrong), { error: { code: 'invalid_request', message: 'arguments.max_rows must be integer.' } });
  } finally {
    await client.close();
  }
});
