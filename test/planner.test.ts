// The planner (src/core/planner/): every question each evaluator says it can
// answer is answered the same by it and by SQL, the evaluator of last resort,
// for random filters (unions among them) on the test dataset; the planner asks
// the cohort index first once it is ready, and SQL for what the index cannot
// answer (a past release's rows). SQL's own answers are checked against SQL
// written in the tests of each route (http-cohort, cohort-index-answers, …).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { filterArb, sampleOf, unionArb } from './cohort-index-support.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { compileFilter, type FilterObject } from '../src/core/filters/v3.ts';
import { indexEvaluator } from '../src/core/planner/index-evaluator.ts';
import { sqlEvaluator } from '../src/core/planner/sql-evaluator.ts';
import { answer, evaluatorFor, plannerStats } from '../src/core/planner/plan.ts';
import type { ManifestLinesAsk } from '../src/core/planner/questions.ts';
import { tableAsk } from '../src/core/services/cohort-table.ts';
import type { AppContext } from '../src/core/context.ts';

let s: TestServer;
before(async () => {
  s = await startServer();
  assert.ok(await cohortIndex(s.ctx), 'the index is built');
});
after(async () => {
  await s?.close();
});

/** Sums of sizes differ in the last bits between summing orders: compare them to the micro-megabyte (the service reports thousandths). */
const sums = (groups: { license: string | null; series: number; sizeMb: number }[]) => groups.map((g) => ({ ...g, sizeMb: Math.round(g.sizeMb * 1e6) / 1e6 }));

const SELECT = 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, series_size_MB';
/** The lines of a manifest as the stream would read them: `take` lines at `offset`, through the engine. */
async function linesOf(ctx: AppContext, m: Awaited<ReturnType<typeof sqlEvaluator.manifestLines>>, offset: number, take: number): Promise<string[]> {
  const q = m.linesAt(take, offset);
  return (await ctx.engine.rows(q.sql, q.params)).map((r) => String(r.line));
}

test('for random filters, each question the cohort index answers is answered the same by SQL', async () => {
  const ctx = s.ctx;
  const sample = await sampleOf(ctx);
  const filters = fc.sample(fc.oneof(filterArb(sample, 3), unionArb(sample)), { numRuns: 40, seed: 35 });
  const answeredByIndex = new Map<string, number>();
  const saw = (q: string) => answeredByIndex.set(q, (answeredByIndex.get(q) ?? 0) + 1);
  for (const f of [{}, ...filters]) {
    const label = JSON.stringify(f);
    const c = await compileFilter(ctx, f as FilterObject);
    const counts = await indexEvaluator.counts(ctx, c);
    if (counts !== null) {
      saw('counts');
      assert.deepEqual(counts, await sqlEvaluator.counts(ctx, c), `counts of ${label}`);
    }
    const licenses = await indexEvaluator.licenses(ctx, c);
    if (licenses !== null) {
      saw('licenses');
      assert.deepEqual(sums(licenses), sums(await sqlEvaluator.licenses(ctx, c)), `licenses of ${label}`);
    }
    const rows = await indexEvaluator.seriesRows(ctx, c, 3, 11, SELECT);
    if (rows !== null) {
      saw('seriesRows');
      assert.deepEqual(rows, await sqlEvaluator.seriesRows(ctx, c, 3, 11, SELECT), `seriesRows of ${label}`);
    }
    const asks = [tableAsk('series', null, 'asc', 2, 9), tableAsk('series', 'Modality', 'desc', 0, 9), tableAsk('studies', null, 'asc', 1, 9), tableAsk('studies', 'StudyDate', 'asc', 0, 5), tableAsk('collections', null, 'asc', 0, 9)];
    for (const t of asks) {
      for (const q of ['tableRows', 'tableTotal'] as const) {
        const a = await indexEvaluator[q](ctx, c, t);
        if (a === null) continue;
        saw(q);
        assert.deepEqual(a, await sqlEvaluator[q](ctx, c, t), `${q} ${t.level} sorted by ${t.sort} of ${label}`);
      }
    }
    const m: ManifestLinesAsk = {
      from: '"index"',
      where: c.where,
      params: c.params,
      indexable: true,
      filters: c.filters_applied,
      line: { sql: "'s3://' || aws_bucket || '/' || crdc_series_uuid || '/*'", params: [] },
      columns: 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, aws_bucket, crdc_series_uuid, series_cloud1_url',
      order: 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID',
    };
    const fromIndex = await indexEvaluator.manifestLines(ctx, m);
    if (fromIndex !== null) {
      saw('manifestLines');
      const bySql = await sqlEvaluator.manifestLines(ctx, m);
      assert.equal(await fromIndex.total(), await bySql.total(), `manifest total of ${label}`);
      for (const [offset, take] of [[0, 5], [4, 7]] as const) {
        assert.deepEqual(await linesOf(ctx, fromIndex, offset, take), await linesOf(ctx, bySql, offset, take), `manifest lines ${offset}+${take} of ${label}`);
      }
    }
  }
  // The index answered every kind of question at least once: the comparison above is not empty.
  for (const q of ['counts', 'licenses', 'seriesRows', 'tableRows', 'tableTotal', 'manifestLines']) assert.ok((answeredByIndex.get(q) ?? 0) > 0, `the index answered no ${q}`);
});

test('the planner asks the index first, and SQL where the index cannot answer; each answer is counted', async () => {
  const ctx = s.ctx;
  const c = await compileFilter(ctx, { terms: { Modality: ['CT'] } });
  assert.equal(await evaluatorFor('counts', ctx, c), 'cohort-index');
  const before = plannerStats().find((x) => x.evaluator === 'cohort-index' && x.question === 'counts')?.answers ?? 0;
  assert.deepEqual(await answer('counts', ctx, c), await sqlEvaluator.counts(ctx, c));
  const after = plannerStats().find((x) => x.evaluator === 'cohort-index' && x.question === 'counts')?.answers ?? 0;
  assert.equal(after, before + 1);
  // Rows that are not the served index's (a past release's versions): only SQL can list them.
  const pastRows: ManifestLinesAsk = {
    from: '(SELECT * FROM "index" LIMIT 3)',
    where: 'TRUE',
    params: [],
    indexable: false,
    filters: c.filters_applied,
    line: { sql: 'SeriesInstanceUID', params: [] },
    columns: 'SeriesInstanceUID',
    order: 'SeriesInstanceUID',
  };
  assert.equal(await evaluatorFor('manifestLines', ctx, pastRows), 'duckdb');
  assert.equal(await (await answer('manifestLines', ctx, pastRows)).total(), 3);
});
