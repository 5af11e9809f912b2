// The prompts through real transports (the SDK's Client over streamable HTTP
// and over stdio, spawning the CLI): listed, got with their arguments woven
// into ready-to-send tool calls, every tool they name exists and every call
// they spell out succeeds against the served data; bad arguments are refused
// with a message that says what to fix.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServer, testDataset, type TestServer } from './fixture.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const PROMPTS = ['cite_cohort', 'download_cohort', 'explore_collection', 'find_cohort', 'query_sql'];

let s: TestServer;
/** A collection of the test data with CT series, and a table other than index, found by SQL. */
let collection: string;
let otherTable: string;
before(async () => {
  s = await startServer();
  const row = await s.ctx.engine.one(`SELECT collection_id, count(*) AS n FROM "index" WHERE Modality = 'CT' GROUP BY 1 ORDER BY n DESC, 1 LIMIT 1`);
  collection = String(row!.collection_id);
  otherTable = s.ctx.catalog.tables.find((t) => t !== 'index' && t.endsWith('_index'))!;
});
after(async () => {
  await s?.close();
});

/** The tool calls a prompt's text spells out: `name` or `name {json}`. */
function callsIn(text: string): { tool: string; args?: Record<string, unknown> }[] {
  return [...text.matchAll(/`([a-z_]+)(?: (\{.*?\}))?`/g)].map((m) => ({ tool: m[1]!, args: m[2] === undefined ? undefined : (JSON.parse(m[2]) as Record<string, unknown>) }));
}

async function getText(client: Client, name: string, args: Record<string, string>): Promise<string> {
  const r = await client.getPrompt({ name, arguments: args });
  assert.equal(r.messages.length, 1);
  assert.equal(r.messages[0]!.role, 'user');
  const content = r.messages[0]!.content as { type: string; text: string };
  assert.equal(content.type, 'text');
  return content.text;
}

async function exercise(client: Client): Promise<void> {
  const listed = await client.listPrompts();
  assert.deepEqual(listed.prompts.map((p) => p.name).sort(), PROMPTS);
  for (const p of listed.prompts) {
    assert.ok((p.title ?? '').length > 5 && (p.description ?? '').length > 40, p.name);
    assert.ok((p.arguments ?? []).length > 0, p.name);
  }
  const tools = new Set((await client.listTools()).tools.map((t) => t.name));

  const filters = JSON.stringify({ terms: { Modality: ['CT'] }, ranges: { instanceCount: { gte: 10 } } });
  const cases: [string, Record<string, string>, (text: string, calls: { tool: string; args?: Record<string, unknown> }[]) => void][] = [
    ['find_cohort', { description: 'chest CT of lung cancer patients', collection_id: collection }, (text, calls) => {
      assert.match(text, /chest CT of lung cancer patients/);
      assert.deepEqual(calls.find((c) => c.tool === 'get_cohort_counts')!.args, { terms: { collection_id: [collection] } });
    }],
    ['download_cohort', { filters, collection_id: collection, source: 'gcs', out: 'data/ct' }, (text, calls) => {
      const expected = { terms: { Modality: ['CT'], collection_id: [collection] }, ranges: { instanceCount: { gte: 10 } } };
      assert.deepEqual(calls.find((c) => c.tool === 'get_cohort_counts')!.args, expected);
      assert.equal(calls.find((c) => c.tool === 'get_cohort_urls')!.args!.source, 'gcs');
      assert.ok(text.includes(`idqs download --filters '${JSON.stringify(expected)}' --source gcs --out data/ct --dry-run`), text);
    }],
    ['cite_cohort', { collection_id: collection, citation_format: 'bibtex' }, (_text, calls) => {
      assert.deepEqual(calls.find((c) => c.tool === 'get_citations')!.args, { terms: { collection_id: [collection] }, citation_format: 'bibtex' });
    }],
    ['explore_collection', { collection_id: collection }, (_text, calls) => {
      assert.deepEqual(calls.find((c) => c.tool === 'get_collection')!.args, { collection_id: collection });
    }],
    ['query_sql', { question: 'how many CT series per collection?', table: otherTable }, (text, calls) => {
      assert.match(text, /how many CT series per collection\?/);
      assert.deepEqual(calls.find((c) => c.tool === 'get_table_schema')!.args, { table: otherTable });
    }],
  ];
  for (const [name, args, check] of cases) {
    const text = await getText(client, name, args);
    const calls = callsIn(text);
    assert.ok(calls.length >= 3, `${name} names its tools: ${text}`);
    for (const c of calls) assert.ok(tools.has(c.tool), `${name} names ${c.tool}, which tools/list does not have`);
    check(text, calls);
    // Every call the template spells out works as written.
    for (const c of calls.filter((x) => x.args)) {
      const r = (await client.callTool({ name: c.tool, arguments: c.args })) as CallToolResult;
      assert.notEqual(r.isError, true, `${name}: ${c.tool} ${JSON.stringify(c.args)} failed: ${JSON.stringify(r.structuredContent).slice(0, 300)}`);
    }
  }
  // The CT counts the download prompt starts from are the data's own.
  const counts = (await client.callTool({ name: 'get_cohort_counts', arguments: { terms: { collection_id: [collection], Modality: ['CT'] }, ranges: { instanceCount: { gte: 10 } } } })) as CallToolResult;
  const truth = await s.ctx.engine.one(`SELECT count(*) AS n FROM "index" WHERE collection_id = ? AND Modality = 'CT' AND instanceCount >= 10`, [collection]);
  assert.equal((counts.structuredContent as { series: number }).series, Number(truth!.n));

  // Bad arguments: refused, saying what to fix.
  const refusals: [string, Record<string, string>, RegExp][] = [
    ['explore_collection', { collection_id: collection.toUpperCase() + 'x' }, new RegExp(`no collection has collection_id.*Did you mean '${collection}'`)],
    ['explore_collection', {}, /Missing required argument "collection_id"/],
    ['find_cohort', { description: '  ' }, /Missing required argument "description"/],
    ['download_cohort', {}, /Give the cohort: filters .* or collection_id/],
    ['download_cohort', { filters: '{"terms": ' }, /filters is not JSON/],
    ['download_cohort', { filters: '{"term": {"Modality": ["CT"]}}' }, /Unknown member "term" in filters; accepted: terms, ranges/],
    ['download_cohort', { filters: '{"ranges": {"instanceCount": {"from": 1}}}' }, /Unknown member "from" in filters\.ranges\.instanceCount; accepted: gte, lte/],
    ['download_cohort', { collection_id: collection, source: 'azure' }, /source must be one of cloud1, cloud2, aws, gcs/],
    ['cite_cohort', { collection_id: collection, citation_format: 'bibtx' }, /citation_format must be one of apa, bibtex, csl-json, ris.*Did you mean 'bibtex'/],
    ['query_sql', { question: 'q', table: 'indx' }, /no table "indx".*Did you mean 'index'/],
    ['query_sql', { question: 'q', sql: 'SELECT 1' }, /Unknown argument "sql" of prompt query_sql; accepted: question, table/],
    ['find_cohorts', {}, /Unknown prompt "find_cohorts".*Did you mean 'find_cohort'/],
  ];
  for (const [name, args, pattern] of refusals) {
    await assert.rejects(client.getPrompt({ name, arguments: args }), (e: Error & { code?: number }) => {
      assert.equal(e.code, -32602, `${name} ${JSON.stringify(args)}: ${e.message}`);
      assert.match(e.message, pattern);
      return true;
    }, `${name} ${JSON.stringify(args)} is refused`);
  }
}

test('prompts over streamable HTTP: listed, got with their arguments, every spelled-out call works, bad arguments refused', async () => {
  const client = new Client({ name: 'prompts-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    assert.deepEqual(client.getServerCapabilities()?.prompts, { listChanged: false });
    await exercise(client);
  } finally {
    await client.close();
  }
});

test('prompts over stdio (spawning idqs mcp): the same', async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin/idqs.cjs'), 'mcp', '--db', (await testDataset()).db],
    env: { ...(process.env as Record<string, string>), IDQS_LOG_LEVEL: 'warn' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'prompts-stdio', version: '1.0.0' });
  await client.connect(transport);
  try {
    assert.deepEqual(client.getServerCapabilities()?.prompts, { listChanged: false });
    await exercise(client);
  } finally {
    await client.close();
  }
});
