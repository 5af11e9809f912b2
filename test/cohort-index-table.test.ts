// Pages of POST /v3/cohort/table for random filters (the index's every
// clause kind, unions among them), at every level, sorted on every sortable
// column (or in the default order), ascending and descending, at random
// pages: each page equals SQL written here (its own GROUP BY, ORDER BY with
// NULLS LAST and the keys as tie-break), on the test dataset and on the real
// release. Every page is checked to be ordered by the index.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { filterArb, sampleOf, unionArb, whereOf, type Filter } from './cohort-index-support.ts';
import { compileFilter } from '../src/core/filters/v3.ts';
import { cohortIndex } from '../src/core/services/cohort-index/build.ts';
import { selectRows } from '../src/core/services/cohort-index/evaluate.ts';
import { loadEngineRanks, orderedGroups, sortedSeries } from '../src/core/services/cohort-index/table-page.ts';
import { pinnedRelease, SKIP_REAL } from './real-releases.ts';

let s: TestServer;
let real: TestServer | undefined;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s?.close();
  await real?.close();
});

const listOf = (col: string) => `CASE WHEN count(${col}) = 0 THEN NULL ELSE list_sort(list_distinct(list(${col}))) END`;

/** Each level's columns and keys, written here. */
const LEVELS: Record<string, { keys: string[]; columns: Record<string, string>; lists: string[] }> = {
  collections: {
    keys: ['collection_id'],
    columns: {
      collection_id: 'collection_id',
      patients: 'count(DISTINCT PatientID)',
      studies: 'count(DISTINCT StudyInstanceUID)',
      series: 'count(*)',
      size_MB: 'round(coalesce(sum(series_size_MB), 0), 3)',
    },
    lists: ['Modality', 'license_short_name'],
  },
  patients: {
    keys: ['collection_id', 'PatientID'],
    columns: {
      collection_id: 'collection_id',
      PatientID: 'PatientID',
      PatientSex: 'min(PatientSex)',
      studies: 'count(DISTINCT StudyInstanceUID)',
      series: 'count(*)',
      size_MB: 'round(coalesce(sum(series_size_MB), 0), 3)',
    },
    lists: ['Modality'],
  },
  studies: {
    keys: ['collection_id', 'PatientID', 'StudyInstanceUID'],
    columns: {
      collection_id: 'collection_id',
      PatientID: 'PatientID',
      StudyInstanceUID: 'StudyInstanceUID',
      StudyDate: 'min(StudyDate)',
      StudyDescription: 'min(StudyDescription)',
      series: 'count(*)',
      size_MB: 'round(coalesce(sum(series_size_MB), 0), 3)',
    },
    lists: ['Modality'],
  },
  series: {
    keys: ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID'],
    columns: Object.fromEntries(
      ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality', 'BodyPartExamined', 'SeriesDescription', 'SeriesNumber', 'SeriesDate', 'instanceCount', 'series_size_MB', 'license_short_name'].map((c) => [c, c]),
    ),
    lists: [],
  },
};
const LIST_NAMES: Record<string, string> = { Modality: 'modalities', license_short_name: 'licenses' };

const PAIRS: [string, string | null][] = Object.entries(LEVELS).flatMap(([level, l]) => [[level, null] as [string, null], ...Object.keys(l.columns).map((c) => [level, c] as [string, string])]);

interface Draw {
  f: Filter;
  pair: [string, string | null];
  desc: boolean;
  size: number;
  at: number;
}

async function check(server: TestServer, runs: number, seed: number): Promise<{ pairs: Set<string>; nonEmpty: number }> {
  const ix = await cohortIndex(server.ctx);
  assert.ok(ix, 'the index is built');
  const sample = await sampleOf(server.ctx);
  const draws: Draw[] = fc.sample(
    fc.record({
      f: fc.oneof({ weight: 3, arbitrary: filterArb(sample, 3) }, { weight: 1, arbitrary: unionArb(sample) }),
      pair: fc.constantFrom(...PAIRS),
      desc: fc.boolean(),
      size: fc.integer({ min: 1, max: 12 }),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    { numRuns: runs, seed },
  );
  const pairs = new Set<string>();
  let nonEmpty = 0;
  for (const { f, pair, desc, size, at } of draws) {
    const [level, sort] = pair;
    const def = LEVELS[level]!;
    const where = whereOf(f);
    const grouped = level !== 'series';
    const cols = Object.entries(def.columns).map(([n, sql]) => `${sql} AS "${n}"`);
    for (const l of def.lists) cols.push(`${listOf(l)} AS "${LIST_NAMES[l]}"`);
    const keys = def.keys.map((k) => `${k} ASC NULLS LAST`).join(', ');
    const orderBy = `${sort === null ? '' : `"${sort}" ${desc ? 'DESC' : 'ASC'} NULLS LAST, `}${keys}`;
    const from = `FROM "index" WHERE ${where}${grouped ? ` GROUP BY ${def.keys.join(', ')}` : ''}`;
    const total = Number((await server.ctx.engine.one(`SELECT count(*) AS n FROM (SELECT 1 ${from})`))!.n);
    const pages = Math.max(1, Math.ceil(total / size));
    const page = Math.min(pages - 1, Math.floor(at * pages));
    const want = await server.ctx.engine.rows(`SELECT ${cols.join(', ')} ${from} ORDER BY ${orderBy} LIMIT ${size} OFFSET ${page * size}`);
    const body = { filters: f, level, page, page_size: size, ...(sort === null ? {} : { sort, order: desc ? 'desc' : 'asc' }) };
    const r = await server.post('/v3/cohort/table', body);
    const got = (await r.json()) as { total: number; rows: Record<string, unknown>[] };
    const label = JSON.stringify(body);
    assert.equal(r.status, 200, `${label}: ${JSON.stringify(got)}`);
    assert.equal(got.total, total, `total of ${label}`);
    assert.equal(got.rows.length, want.length, `rows of ${label}`);
    want.forEach((w, i) => {
      const g = got.rows[i]!;
      for (const [k, v] of Object.entries(JSON.parse(JSON.stringify(w)) as Record<string, unknown>)) {
        if (k === 'size_MB' || k === 'series_size_MB') {
          assert.ok(v === null ? g[k] === null : Math.abs(Number(g[k]) - Number(v)) <= 0.0011, `${k} of row ${i} of ${label}: ${String(g[k])} vs ${String(v)}`);
        } else assert.deepEqual(g[k], v, `${k} of row ${i} of ${label}`);
      }
    });
    if (want.length > 0) nonEmpty++;
    pairs.add(`${level}/${sort}`);
    // Not a silent fallback: every page's order comes from the index (descriptions and SeriesNumber by their ranks read from the engine).
    {
      await loadEngineRanks(server.ctx, ix, sort);
      const sel = selectRows(ix, (await compileFilter(server.ctx, f)).filters_applied);
      assert.ok(sel !== null, `the index evaluates ${label}`);
      const fromIndex = grouped
        ? orderedGroups(ix, sel, level as 'collections', sort, desc, page * size, size)
        : sort === null || sortedSeries(ix, sel, sort, desc, page * size, size);
      assert.ok(fromIndex !== null, `the index orders ${label}`);
    }
  }
  return { pairs, nonEmpty };
}

test('table pages from the index equal SQL at every level and sort on the test dataset', async () => {
  const { pairs, nonEmpty } = await check(s, 500, 31);
  assert.deepEqual([...pairs].sort(), PAIRS.map(([l, c]) => `${l}/${c}`).sort(), 'every level and sort was drawn');
  assert.ok(nonEmpty >= 150, `only ${nonEmpty} non-empty pages`);
});

test('table pages from the index equal SQL on the real release', { skip: SKIP_REAL }, async () => {
  real = await startServer({}, (await pinnedRelease()).db);
  const { nonEmpty } = await check(real, 40, 32);
  assert.ok(nonEmpty >= 10, `only ${nonEmpty} non-empty pages`);
});
