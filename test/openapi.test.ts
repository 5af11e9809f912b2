// The OpenAPI document is generated from the same schemas that validate
// requests; every operation is documented and every declared example works.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './fixture.ts';
import { V3_EXAMPLE_CHECKS } from './example-checks.ts';
import { SURFACES } from '../src/contract/capabilities.ts';

interface Param {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
  schema?: { examples?: unknown[]; example?: unknown };
}
interface Op {
  summary?: string;
  description?: string;
  parameters?: Param[];
  requestBody?: { content: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }>; schema?: { examples?: unknown[] } }> };
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
type Doc = { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, unknown> } };

let s: TestServer;
let doc: Doc;
before(async () => {
  s = await startServer();
  doc = (await (await s.get('/v3/openapi.json')).json()) as Doc;
});
after(async () => {
  await s.close();
});

function paramExample(p: Param): unknown {
  if (p.example !== undefined) return p.example;
  if (p.examples) return Object.values(p.examples)[0]?.value;
  return p.schema?.examples?.[0] ?? p.schema?.example;
}

function ops(): [string, string, Op][] {
  return Object.entries(doc.paths).flatMap(([path, m]) => Object.entries(m).map(([method, op]) => [method, path, op] as [string, string, Op]));
}

test('the document is OpenAPI 3.1 with the server version and every route of the spec', () => {
  assert.match(doc.openapi, /^3\.1\./);
  assert.equal(doc.info.version, s.ctx.serverVersion);
  const want = [
    'get /v3/version', 'get /v3/stats', 'get /v3/collections', 'get /v3/collections/{collection_id}', 'get /v3/analysis_results',
    'get /v3/attributes', 'get /v3/attributes/{attribute}/values', 'get /v3/tables', 'get /v3/tables/{table}', 'get /v3/clinical/tables',
    'get /v3/clinical/tables/{table}', 'get /v3/clinical/tables/{table}/rows', 'post /v3/cohort/counts', 'post /v3/cohort/manifest',
    'post /v3/cohort/manifest.txt', 'post /v3/series/lookup', 'post /v3/sql', 'get /v3/viewer-url', 'post /v3/citations', 'post /v3/licenses', 'get /v3/health', 'get /v3',
  ];
  const have = new Set(ops().map(([m, p]) => `${m} ${p}`));
  for (const w of want) assert.ok(have.has(w), `missing ${w}`);
});

test('the route of every capability in the catalog is an operation of the document, with the tool twin it names', () => {
  const have = new Set(ops().map(([m, p]) => `${m.toUpperCase()} ${p}`));
  for (const [id, v] of Object.entries(SURFACES)) {
    assert.ok(have.has(`${v.rest.method} ${v.rest.path}`), `${id}: ${v.rest.method} ${v.rest.path} is documented`);
    assert.ok(v.tool === null || v.tool === id, `${id}: its tool has its name`);
  }
});

test('every operation has a summary, a description, and declares its errors with the envelope', () => {
  assert.ok(doc.components.schemas.ErrorBody, 'ErrorBody component');
  for (const [m, p, op] of ops()) {
    assert.ok(op.summary && op.summary.length > 3, `${m} ${p} summary`);
    assert.ok(op.description && op.description.length > 20, `${m} ${p} description`);
    for (const [code, r] of Object.entries(op.responses)) {
      if (Number(code) >= 400) assert.equal(r.content?.['application/json']?.schema?.$ref, '#/components/schemas/ErrorBody', `${m} ${p} ${code}`);
    }
    if (m === 'post') assert.ok(op.responses['422'], `${m} ${p} declares 422`);
  }
  const text = doc.paths['/v3/cohort/manifest.txt']!.post!.responses['200']!.content!;
  assert.ok(text['text/plain'], 'manifest.txt declares text/plain');
});

test('every declared example answers what independent SQL says it should', async () => {
  let fired = 0;
  for (const [method, path, op] of ops()) {
    let url = path;
    const query = new URLSearchParams();
    let skip = false;
    for (const p of op.parameters ?? []) {
      const ex = paramExample(p);
      if (ex === undefined) {
        if (p.required) skip = true;
        continue;
      }
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(ex)));
      else if (p.in === 'query') query.set(p.name, String(ex));
    }
    assert.ok(!skip, `${method} ${path} has a required parameter without an example`);
    const qs = query.size ? `?${query}` : '';
    let r: Response;
    let body: unknown;
    if (method === 'post') {
      const media = op.requestBody?.content['application/json'];
      body = media?.example ?? (media?.examples ? Object.values(media.examples)[0]?.value : undefined) ?? media?.schema?.examples?.[0];
      assert.ok(body !== undefined, `${method} ${path} has no body example`);
      r = await s.post(url + qs, body);
    } else {
      r = await s.get(url + qs);
    }
    const text = await r.text();
    assert.equal(r.status, 200, `${method} ${path}${qs} -> ${r.status} ${text.slice(0, 300)}`);
    const check = V3_EXAMPLE_CHECKS[`${method} ${path}`];
    assert.ok(check, `${method} ${path} has a check in test/example-checks.ts`);
    const isJson = (r.headers.get('content-type') ?? '').includes('json');
    await check(s.ctx.engine, { url: new URL(url + qs, s.url), body: body as Record<string, unknown> | undefined, json: isJson ? JSON.parse(text) : {}, text });
    fired++;
  }
  assert.equal(fired, Object.keys(V3_EXAMPLE_CHECKS).length, 'every check ran');
});

test('the interactive reference is served', async () => {
  const r = await s.get('/v3/docs');
  assert.equal(r.status, 200);
  assert.match(await r.text(), /swagger/i);
});
