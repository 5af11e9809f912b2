// Caller SQL answers kept by statement (the performance issue: repeated caller
// SQL costs nothing twice): the same statement answers from the cache with the
// same body and without a worker's run, a statement whose answer can change
// between runs is never kept, the row cap is part of the key, failures are not
// kept, and IDQS_SQL_CACHE_MB=0 keeps nothing. On the test dataset, against
// SQL written here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './fixture.ts';
import { isDeterministic } from '../src/core/services/sql-cache.ts';

const runs = (s: Awaited<ReturnType<typeof startServer>>) => s.ctx.engine.stats().sql.admitted;

test('the same statement answers from the cache: same body, X-Cache hit, no worker run; the row cap is part of the key', async () => {
  const s = await startServer();
  try {
    const sql = 'SELECT Modality, count(*) AS n FROM "index" GROUP BY 1 ORDER BY n DESC, Modality';
    const want = await s.ctx.engine.rows(sql);
    const first = await s.post('/v3/sql', { sql });
    assert.equal(first.headers.get('x-cache'), 'miss');
    const body = await first.text();
    assert.deepEqual(JSON.parse(body).rows, want.map((r) => ({ Modality: r.Modality, n: Number(r.n) })));
    const before = runs(s);
    const again = await s.post('/v3/sql', { sql });
    assert.equal(again.headers.get('x-cache'), 'hit');
    assert.equal(await again.text(), body);
    assert.equal(runs(s), before, 'no worker ran the statement again');
    // Another row cap is another answer.
    const capped = await s.post('/v3/sql', { sql, max_rows: 1 });
    assert.equal(capped.headers.get('x-cache'), 'miss');
    const c = (await capped.json()) as { rows: unknown[]; truncated: boolean };
    assert.equal(c.rows.length, 1);
    assert.equal(c.truncated, want.length > 1);
    // CORS lets a browser read the header.
    const cors = await s.post('/v3/sql', { sql }, { origin: 'https://example.org' });
    assert.match(cors.headers.get('access-control-expose-headers') ?? '', /X-Cache/);
  } finally {
    await s.close();
  }
});

test('statements whose answer can change are never kept; failures are not kept; 0 MB keeps nothing', async () => {
  const s = await startServer();
  try {
    const volatile = 'SELECT random() AS r FROM range(3)';
    const a = await s.post('/v3/sql', { sql: volatile });
    const b = await s.post('/v3/sql', { sql: volatile });
    assert.deepEqual([a.headers.get('x-cache'), b.headers.get('x-cache')], ['bypass', 'bypass']);
    assert.notDeepEqual(((await a.json()) as { rows: unknown[] }).rows, ((await b.json()) as { rows: unknown[] }).rows, 'two runs of random() differ');
    for (let i = 0; i < 2; i++) {
      const bad = await s.post('/v3/sql', { sql: 'SELECT nope FROM "index"' });
      assert.equal(bad.status, 400);
    }
  } finally {
    await s.close();
  }
  const off = await startServer({ sqlCacheMb: 0 });
  try {
    for (let i = 0; i < 2; i++) assert.equal((await off.post('/v3/sql', { sql: 'SELECT 1 AS a' })).headers.get('x-cache'), 'bypass');
  } finally {
    await off.close();
  }
});

test('what counts as a statement whose answer can change', () => {
  for (const q of ['SELECT random()', 'select NOW()', 'SELECT * FROM index USING SAMPLE 10', 'SELECT * FROM index TABLESAMPLE 5%', 'SELECT gen_random_uuid()', 'SELECT current_date', "SELECT nextval('s')"]) assert.equal(isDeterministic(q), false, q);
  // Conservative by design: the word alone (even in a string) bypasses the cache; a longer name does not.
  assert.equal(isDeterministic("SELECT 'random' AS word"), false);
  for (const q of ['SELECT count(*) FROM index', 'SELECT randomised_col FROM t', 'SELECT now_playing FROM t', 'SELECT Modality FROM index WHERE StudyDate < DATE \'2020-01-01\'']) assert.equal(isDeterministic(q), true, q);
});
