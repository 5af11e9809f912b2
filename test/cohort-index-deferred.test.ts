// A server that loads the cohort index from its file keeps only what counts
// and pages need; the facet codes, the entities' orders and most range
// columns are read from the file on first use. The very first requests that
// need each of them answer as SQL written here (counts over each deferred
// range) and as a server whose index was built from the engine (facets).

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, testConfig, testDataset, type TestServer } from './fixture.ts';
import { referenceCounts, sampleOf, type Filter } from './cohort-index-support.ts';
import { cohortIndex, indexOrigin } from '../src/core/services/cohort-index/build.ts';
import { prepareIndexFile } from '../src/core/services/cohort-index/prepare.ts';

const dir = mkdtempSync(join(tmpdir(), 'idqs-index-deferred-'));
const open: TestServer[] = [];
after(async () => {
  for (const s of open) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(s: TestServer, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await s.post(path, body);
  const out = (await r.json()) as Record<string, unknown>;
  assert.equal(r.status, 200, `${path} ${JSON.stringify(body)}: ${JSON.stringify(out).slice(0, 300)}`);
  return out;
}

test('the parts read on first use answer, on that first use, as SQL and as an index built from the engine', async () => {
  const db = join(dir, 'loaded.duckdb');
  const other = join(dir, 'built.duckdb');
  copyFileSync((await testDataset()).db, db);
  copyFileSync((await testDataset()).db, other);
  assert.equal((await prepareIndexFile(testConfig(), db))?.outcome, 'written');

  const loaded = await startServer({}, db);
  open.push(loaded);
  const ix = (await cohortIndex(loaded.ctx))!;
  assert.equal(indexOrigin(loaded.ctx)?.loaded, true, 'the server loaded the file');
  // Which parts wait for their first use: accessors until then (a built index holds plain arrays).
  const accessor = (o: object, k: string) => typeof Object.getOwnPropertyDescriptor(o, k)?.get === 'function';
  assert.ok(accessor(ix.table, 'codes'), 'the facet codes are read on first use');
  const deferred = [...ix.table.columns].filter(([, c]) => c.kind === 'range' && accessor(c, 'values')).map(([name]) => name);
  assert.ok(deferred.length >= 2, `some range columns are read on first use: ${deferred.join(', ')}`);
  assert.ok(!deferred.includes('instanceCount') && !deferred.includes('series_size_MB'), 'the totals of every count are at hand');

  // First use of each deferred range: a count, against SQL.
  const sample = await sampleOf(loaded.ctx);
  const filters: Filter[] = [];
  for (const name of deferred) {
    const vs = [...(sample.numbers.get(name) ?? sample.dates.get(name) ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    assert.ok(vs.length >= 3, `values of ${name} in the test dataset`);
    filters.push({ terms: {}, ranges: { [name]: { gte: vs[Math.floor(vs.length / 4)]!, lte: vs[Math.floor((3 * vs.length) / 4)]! } } });
  }
  const want = await referenceCounts(loaded.ctx, filters, 1);
  for (const [i, f] of filters.entries()) {
    const got = await post(loaded, '/v3/cohort/counts', f);
    for (const k of ['patients', 'studies', 'series', 'instances'] as const) assert.equal(got[k], want[i]![k], `${k} of ${JSON.stringify(f)}`);
    assert.ok(want[i]!.series > 0, `the range of ${JSON.stringify(f)} selects rows`);
  }

  // First use of the facet codes and entities' orders: facets, against a server that built its index from the engine.
  const built = await startServer({}, other);
  open.push(built);
  await cohortIndex(built.ctx);
  assert.equal(indexOrigin(built.ctx)?.loaded, false, 'the other server built its index');
  for (const f of [{ terms: {}, ranges: {} }, ...filters]) {
    const a = JSON.stringify(await post(loaded, '/v3/cohort/facets', { filters: f }));
    const b = JSON.stringify(await post(built, '/v3/cohort/facets', { filters: f }));
    assert.equal(a, b, `facets of ${JSON.stringify(f)}`);
  }
  assert.equal(ix.table.codes.length, ix.rows * ix.table.width, 'the facet codes read on first use are whole');
});
