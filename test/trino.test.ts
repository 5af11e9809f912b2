// Trino as the third engine, on a real cluster (one coordinator, one worker,
// started once for the file by deploy/trino/cluster.sh over the test dataset's
// Parquet): the cohort questions answered by Trino equal DuckDB's answers and
// SQL written here; caller SQL on either engine; and the faults: a cluster
// stopped, a query over its limits, a client that leaves.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, testDataset, type TestServer } from './fixture.ts';
import { filterArb, referenceCounts, sampleOf, unionArb, type Filter } from './cohort-index-support.ts';
import { startTrinoCluster, type TrinoCluster } from './trino-cluster.ts';
import { plannerStats } from '../src/core/planner/plan.ts';

/** This file's ports (the coordinator's, the worker's next to it). */
const PORT = 18350;

let cluster: TrinoCluster;
let duck: TestServer;
let trino: TestServer;

before(async () => {
  const { folder } = await testDataset();
  cluster = await startTrinoCluster(folder, PORT, 1);
  // The cohort index off on both: every question goes past it, to Trino on one server, to DuckDB on the other.
  duck = await startServer({ cohortIndex: 'off' });
  trino = await startServer({ cohortIndex: 'off', trinoUrl: cluster.url });
});
after(async () => {
  await trino?.close();
  await duck?.close();
  await cluster?.stop();
});

/** Answers given by Trino so far, by question. */
function trinoAnswers(): Record<string, number> {
  return Object.fromEntries(plannerStats().filter((s) => s.evaluator === 'trino').map((s) => [s.question, s.answers]));
}

/** A body with each server's own address written out (download commands name it). */
async function bodyOf(s: TestServer, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const r = await s.post(path, body);
  const text = (await r.text()).replaceAll(s.url, 'http://server');
  const parsed = JSON.parse(text) as Record<string, unknown>;
  delete parsed.request_id;
  return { status: r.status, body: parsed };
}

test('cohort questions answered by Trino equal DuckDB\'s answers and SQL written here', async () => {
  const sample = await sampleOf(duck.ctx);
  const filters: Filter[] = [{ terms: {}, ranges: {} }, ...fc.sample(fc.oneof(filterArb(sample, 3), unionArb(sample)), { numRuns: 10, seed: 37 })];
  const reference = await referenceCounts(duck.ctx, filters, 1);
  const before = trinoAnswers();
  let asked = 0;
  const same = async (path: string, body: unknown) => {
    const [a, b] = await Promise.all([bodyOf(duck, path, body), bodyOf(trino, path, body)]);
    assert.equal(a.status, 200, `${path} ${JSON.stringify(body)} on DuckDB: ${JSON.stringify(a.body)}`);
    assert.deepEqual(b, a, `${path} ${JSON.stringify(body)}`);
    asked++;
    return b.body as Record<string, unknown>;
  };
  for (const [i, f] of filters.entries()) {
    const counts = await same('/v3/cohort/counts', f);
    const want = reference[i]!;
    assert.deepEqual(
      [counts.patients, counts.studies, counts.series, counts.instances],
      [want.patients, want.studies, want.series, want.instances],
      `counts of ${JSON.stringify(f)} against SQL written in the test`,
    );
    assert.ok(Math.abs(Number(counts.size_MB) - want.size_MB) < 0.01);
    await same('/v3/licenses', { filters: f });
    await same('/v3/cohort/manifest', { filters: f, page: 2, page_size: 7 });
    await same('/v3/cohort/table', { filters: f, level: 'collections' });
    await same('/v3/cohort/table', { filters: f, level: 'patients', sort: 'studies', order: 'desc', page_size: 6 });
    await same('/v3/cohort/table', { filters: f, level: 'studies', sort: 'StudyDate', order: 'asc', page: 2, page_size: 5 });
    await same('/v3/cohort/table', { filters: f, level: 'series', sort: 'series_size_MB', order: 'desc', page_size: 8 });
  }
  assert.ok(asked >= 50, `${asked} questions`);
  const now = trinoAnswers();
  for (const q of ['counts', 'licenses', 'seriesRows', 'tableRows', 'tableTotal']) {
    assert.ok((now[q] ?? 0) - (before[q] ?? 0) >= filters.length, `Trino answered ${q} (${(now[q] ?? 0) - (before[q] ?? 0)} times), not DuckDB in its place`);
  }
});

test('/v3/version lists the engines in the order they are asked', async () => {
  const v = (await (await trino.get('/v3/version')).json()) as { engines: string[] };
  assert.deepEqual(v.engines, ['trino', 'duckdb']);
  const d = (await (await duck.get('/v3/version')).json()) as { engines: string[] };
  assert.deepEqual(d.engines, ['duckdb']);
});
