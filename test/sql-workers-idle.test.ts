// Caller-SQL workers start on first use and an idle one is stopped after
// IDQS_SQL_IDLE_S (its process really ends); the next query starts another.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from './fixture.ts';

let s: TestServer;
before(async () => {
  s = await startServer({ sqlIdleS: 1 });
});
after(async () => {
  await s?.close();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let asked = 0;
/** A count of the index, each time in other words (the same statement again would be answered from the cache, by no worker). */
async function query(): Promise<number> {
  const r = await s.post('/v3/sql', { sql: `SELECT count(*) AS n, ${asked++} AS k FROM "index"` });
  const body = (await r.json()) as { rows: { n: number }[] };
  assert.equal(r.status, 200, JSON.stringify(body));
  return Number(body.rows[0]!.n);
}

function workerPids(): number[] {
  return (s.ctx.engine.sql.pool.all() as readonly { proc: { pid?: number } | null }[]).flatMap((w) => (w.proc?.pid ? [w.proc.pid] : []));
}

test('no worker at start; the first query starts one; idle, it is stopped (no error logged); the next query starts another', async () => {
  const said: { level: string; msg: string }[] = [];
  s.ctx.engine.sql.events.on('operator', (e: { level: string; msg: string }) => said.push(e));
  assert.equal(s.ctx.engine.sql.stats().running, 0);
  const want = Number((await s.ctx.engine.one('SELECT count(*) AS n FROM "index"'))!.n);
  assert.equal(await query(), want);
  const [pid] = workerPids();
  assert.ok(pid && alive(pid), 'a worker process runs after the first query');
  const deadline = Date.now() + 15_000;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  assert.equal(alive(pid), false, 'the idle worker process ended');
  assert.equal(s.ctx.engine.sql.stats().running, 0);
  assert.equal(s.ctx.engine.sql.stats().restarts, 0, 'an idle stop is not counted as a restart');
  // An idle stop is no failure: nothing at warn or error (it was logged as "could not start" with an old request id).
  assert.deepEqual(said.filter((e) => e.level === 'error' || e.level === 'warn'), []);
  assert.equal(await query(), want);
  assert.equal(s.ctx.engine.sql.stats().running, 1);
});
