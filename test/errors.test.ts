// One error, every surface: the same core error answered over /v3 (HTTP
// status, envelope, no-store, routes named), /v2 (its own envelope), MCP
// (a tool error naming tools, never a route) and the command line (flags
// named, exit status 2 for a caller mistake). Expected words are literal.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServer, testDataset, withoutRequestId, type TestServer } from './fixture.ts';

const CLI = fileURLToPath(new URL('../bin/idqs.cjs', import.meta.url));

interface Envelope {
  error: { code: string; message: string; suggestions?: string[]; see?: { capability: string; args?: Record<string, string> }[] };
}

let s: TestServer;
let mcp: Client;
before(async () => {
  s = await startServer();
  mcp = new Client({ name: 'errors-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
});
after(async () => {
  await mcp?.close();
  await s?.close();
});

/** A /v3 error: its status, the envelope's keys, and that it is not cacheable. */
async function rest(r: Response, status: number): Promise<Envelope['error']> {
  assert.equal(r.status, status);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.equal(r.headers.get('etag'), null);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await r.json()) as Envelope;
  assert.deepEqual(Object.keys(body), ['error']);
  return body.error;
}

async function tool(name: string, args: Record<string, unknown>): Promise<Envelope['error']> {
  const r = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(r.isError, true);
  const e = (r.structuredContent as unknown as Envelope).error;
  assert.deepEqual(JSON.parse((r.content[0] as { text: string }).text), r.structuredContent);
  assert.doesNotMatch(e.message, /\/v3\//, 'a tool error names no route');
  return e;
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('an unknown attribute: REST names routes, MCP names tools, both suggest the same names and point to the same capabilities', async () => {
  const r = await rest(await s.get('/v3/attributes/Modalty/values'), 400);
  assert.equal(r.code, 'invalid_query');
  assert.equal(
    r.message,
    "Unknown attribute 'Modalty': it is not a column of table index (names are case-sensitive). Did you mean 'Modality'? " +
      'GET /v3/attributes lists the filterable attributes; GET /v3/tables/index lists every column.',
  );
  assert.deepEqual(r.suggestions, ['Modality']);
  assert.deepEqual(r.see, [{ capability: 'list_attributes' }, { capability: 'get_table_schema', args: { table: 'index' } }]);
  const t = await tool('get_attribute_values', { attribute: 'Modalty' });
  assert.equal(t.code, 'invalid_query');
  assert.equal(
    t.message,
    "Unknown attribute 'Modalty': it is not a column of table index (names are case-sensitive). Did you mean 'Modality'? " +
      'list_attributes lists the filterable attributes; get_table_schema {"table":"index"} lists every column.',
  );
  assert.deepEqual([t.suggestions, t.see], [r.suggestions, r.see]);
});

test('a main table asked as a clinical one: the route and the tool of its schema, with their argument', async () => {
  const r = await rest(await s.get('/v3/clinical/tables/seg_index'), 404);
  assert.equal(r.code, 'not_found');
  assert.match(r.message, /^Unknown clinical table 'seg_index': not found\. 'seg_index' is a main table, not a clinical one: read its schema with GET \/v3\/tables\/seg_index\. GET \/v3\/clinical\/tables lists the clinical tables \(optionally of one collection_id\)\.$/);
  const t = await tool('get_clinical_table_schema', { table: 'seg_index' });
  assert.equal(
    t.message,
    "Unknown clinical table 'seg_index': not found. 'seg_index' is a main table, not a clinical one: read its schema with get_table_schema {\"table\":\"seg_index\"}. " +
      'list_clinical_tables lists the clinical tables (optionally of one collection_id).',
  );
  assert.equal(r.suggestions, undefined, 'no suggestion: nothing is close');
});

test('/v2 keeps its own envelope for core errors, with the status mirrored', async () => {
  const r = await s.get('/v2/filters/values/NoSuchFilter');
  assert.equal(r.status, 400);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.deepEqual(withoutRequestId(await r.json()), { code: 400, message: 'Invalid filter ID' });
});

test('the command line names flags, exits 2 for what the caller can fix, and lowers a cap with a warning like the API', async () => {
  const { db } = await testDataset();
  const zero = await cli(['sql', 'SELECT 1 AS a', '--db', db, '--max-rows', '0']);
  assert.equal(zero.code, 2);
  assert.equal(zero.stdout, '');
  assert.equal(zero.stderr, 'error (invalid_request): --max-rows must be an integer from 1 to 10000; got 0.\n');

  const typo = await cli(['sql', 'SELECT count(*) FROM indx', '--db', db]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /^error \(invalid_query\): .*Did you mean "index"/s);

  const big = await cli(['sql', 'SELECT 1 AS a', '--db', db, '--max-rows', '50000', '--format', 'json']);
  assert.equal(big.code, 0, big.stderr);
  assert.equal(big.stderr, 'warning: --max-rows 50000 is above the cap of 10000; lowered to 10000.\n');
  assert.deepEqual(JSON.parse(big.stdout), { columns: ['a'], types: ['INTEGER'], rows: [{ a: 1 }], row_count: 1, truncated: false, truncated_reason: null, max_rows: 10000, engine: 'duckdb' });
});
