// A caller-SQL worker whose start hangs (its process neither says it is ready
// nor exits: here its database is a FIFO nobody writes, so opening it blocks)
// holds no request forever: the query answers 503 once the statement timeout
// passes, naming the setting, the hung process is killed, and the next query
// starts a fresh one (which, here, hangs and is refused the same way).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqlWorkers } from '../src/core/engine/sql-workers.ts';
import { processAlive as alive } from '../src/core/engine/worker-temp.ts';
import { IdqsError } from '../src/core/errors.ts';

test('a worker that never starts: 503 at the statement timeout naming it, the process killed, the next query tries a fresh one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'idqs-start-'));
  const fifo = join(dir, 'hangs.duckdb');
  execFileSync('mkfifo', [fifo]);
  const workers = new SqlWorkers({ path: fifo, workers: 1, memoryBytes: 512 * 1024 * 1024, memoryLimit: '512MB', threads: 1, tempDirSize: '1GB', queue: 4, queueTimeoutMs: 10_000, timeoutMs: 1500, idleMs: 0 });
  const said: { msg: string; pid?: number }[] = [];
  workers.events.on('operator', (e: { msg: string; pid?: number }) => said.push(e));
  try {
    const pids: number[] = [];
    for (let i = 0; i < 2; i++) {
      const t0 = Date.now();
      const e = await workers.run('SELECT 1', 10, 1e6).then(
        () => null,
        (x: unknown) => x,
      );
      const waited = Date.now() - t0;
      assert.ok(e instanceof IdqsError, String(e));
      assert.equal(e.code, 'unavailable');
      assert.match(e.message, /did not start within 1\.5s \(IDQS_SQL_TIMEOUT_MS\)/);
      assert.ok(waited >= 1400 && waited < 6000, `answered after ${waited} ms`);
      const killed = said.filter((x) => /did not start within the statement timeout/.test(x.msg)).at(-1);
      assert.ok(killed?.pid, JSON.stringify(said));
      pids.push(killed.pid);
      for (const until = Date.now() + 3000; alive(killed.pid) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
      assert.ok(!alive(killed.pid), 'the hung process is gone');
    }
    assert.notEqual(pids[0], pids[1], 'each query tried a fresh process');
  } finally {
    await workers.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
