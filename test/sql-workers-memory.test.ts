// How caller SQL is sized and kept healthy (the fourth audit, items 1 and 2):
// the default comes from the machine (RAM or the container's cgroup limit,
// cores), an explicit setting is kept, and a worker that ran out of memory is
// replaced before the next query instead of failing it. On the test dataset;
// the real release's heavy queries are in sql-memory-real.test.ts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { callerSizing } from '../src/core/engine/caller-sizing.ts';
import { machineMemory } from '../src/core/engine/machine.ts';
import { overShare, planWorkerMemory, runningCap } from '../src/core/engine/worker-memory.ts';
import { startServer } from './fixture.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

test('the memory of the machine is the RAM, or the cgroup limit when a container sets a lower one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idqs-cgroup-'));
  const v2 = join(dir, 'memory.max');
  const v1 = join(dir, 'memory.limit_in_bytes');
  writeFileSync(v2, 'max\n');
  writeFileSync(v1, `${4 * GiB}\n`);
  // v2 says no limit: v1 is read next.
  assert.deepEqual(machineMemory([v2, v1], 24 * GiB), { bytes: 4 * GiB, source: 'cgroup' });
  writeFileSync(v2, `${2 * GiB}\n`);
  assert.deepEqual(machineMemory([v2, v1], 24 * GiB), { bytes: 2 * GiB, source: 'cgroup' });
  // A limit above the RAM, v1's "unlimited" sentinel and a missing file are no limit.
  writeFileSync(v2, `${64 * GiB}\n`);
  assert.deepEqual(machineMemory([v2], 24 * GiB), { bytes: 24 * GiB, source: 'ram' });
  writeFileSync(v1, '9223372036854771712\n');
  assert.deepEqual(machineMemory([v1, join(dir, 'absent')], 24 * GiB), { bytes: 24 * GiB, source: 'ram' });
});

test('auto sizing: a quarter of the memory, one worker per core (at most four), divided among a fleet, never shares below 256 MB', () => {
  const auto = loadConfig({});
  assert.equal(auto.sqlMemoryLimit, 'auto');
  assert.equal(auto.sqlConnections, 'auto');
  const ram = (gib: number) => ({ bytes: gib * GiB, source: 'ram' as const });
  assert.deepEqual(
    [callerSizing(auto, ram(24), 2).workers, callerSizing(auto, ram(24), 2).memoryBytes],
    [2, 6 * GiB],
  );
  assert.match(callerSizing(auto, ram(24), 2).memoryText, /^auto \(6\.0 GB: a quarter of 24\.0 GB of RAM\)$/);
  assert.equal(callerSizing(auto, ram(64), 16).workers, 4);
  // A fleet of four on 8 cores: each process gets a sixteenth of the memory and two workers.
  const fleet = callerSizing({ ...auto, fleetSize: 4 }, ram(32), 8);
  assert.deepEqual([fleet.workers, fleet.memoryBytes], [2, 2 * GiB]);
  assert.match(fleet.memoryText, /divided among 4 serving processes/);
  // A 1 GB container with 8 cores: 256 MB in all, so one worker with all of it.
  const small = callerSizing(auto, { bytes: 1 * GiB, source: 'cgroup' }, 8);
  assert.deepEqual([small.workers, small.memoryBytes], [1, 256 * MiB]);
  assert.match(small.memoryText, /container's memory limit/);
  // Set by the operator: kept as written.
  const set = loadConfig({ IDQS_SQL_MEMORY_LIMIT: '2GB', IDQS_SQL_CONNECTIONS: '3' });
  assert.deepEqual(callerSizing(set, ram(24), 2), { workers: 3, memoryBytes: 2e9, memoryText: '2GB' });
});

test('the settings accept auto or a value, and refuse anything else saying what is accepted', () => {
  assert.equal(loadConfig({ IDQS_SQL_MEMORY_LIMIT: 'AUTO', IDQS_SQL_CONNECTIONS: 'auto' }).sqlMemoryLimit, 'auto');
  assert.throws(() => loadConfig({ IDQS_SQL_MEMORY_LIMIT: 'lots' }), /IDQS_SQL_MEMORY_LIMIT="lots" must be auto or a size such as 512MB or 2GB/);
  assert.throws(() => loadConfig({ IDQS_SQL_CONNECTIONS: 'many' }), /IDQS_SQL_CONNECTIONS="many" must be auto or an integer from 1 to 64/);
  assert.throws(() => loadConfig({ IDQS_SQL_CONNECTIONS: '0' }), /IDQS_SQL_CONNECTIONS=0 must be auto or an integer from 1 to 64/);
  assert.throws(() => loadConfig({ IDQS_SQL_MEMORY_LIMIT: '1MB' }), /below 16MB/);
});

test("a worker's limits nest: the engine within the share, the running cap above the runtime plus twice the engine's limit", () => {
  for (const share of [128 * MiB, 512 * MiB, 3 * GiB, 16 * GiB]) {
    const p = planWorkerMemory(share);
    // The engine stays within the share, leaving at least a fifth of it (or 128 MB) to the heap.
    assert.ok(p.engineMb * MiB <= share - Math.min(share * 0.2, 128 * MiB) + MiB, `share ${share}: ${JSON.stringify(p)}`);
    assert.ok(p.heapMb >= 128 && p.heapMb <= 512);
    const runtime = 700 * MiB;
    assert.ok(runtime + 2 * p.engineMb * MiB + p.heapMb * MiB < runningCap(p, runtime));
    // Starting needs more room than any Node has shown (3 GB of address space before the engine works).
    assert.ok(p.startCapBytes >= 3 * GiB + 2 * p.engineMb * MiB);
  }
  const started = { rss: 300 * MiB, data: 900 * MiB };
  assert.equal(overShare({ rss: 1200 * MiB, data: 1500 * MiB }, started, GiB, 4 * GiB), null);
  assert.match(overShare({ rss: 1400 * MiB, data: 1500 * MiB }, started, GiB, 4 * GiB) ?? '', /more than its 1024 MB share/);
  assert.match(overShare({ rss: 400 * MiB, data: 3990 * MiB }, started, GiB, 4 * GiB) ?? '', /near its cap/);
});

test('a worker that ran out of memory is replaced before the next query, which a fresh process answers', async () => {
  const s = await startServer({ sqlConnections: 1, sqlMemoryLimit: '512MB' });
  const said: string[] = [];
  s.ctx.engine.sql.events.on('operator', (e: { msg: string }) => said.push(e.msg));
  try {
    const warm = await s.post('/v3/sql', { sql: 'SELECT 1 AS a' });
    assert.equal(warm.status, 200);
    const [before] = s.ctx.engine.sql.memory();
    assert.ok(before, 'a running worker');
    const r = await s.post('/v3/sql', { sql: 'SELECT list(range(100000000))::VARCHAR AS s' });
    const body = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(r.status, 503, JSON.stringify(body));
    assert.equal(body.error.code, 'resource_exhausted');
    assert.match(body.error.message, /memory/i);
    // The replacement is started at once, without waiting for a query to ask for it.
    const end = Date.now() + 20_000;
    while (!s.ctx.engine.sql.memory().some((w) => w.pid !== before.pid)) {
      assert.ok(Date.now() < end, 'no replacement worker within 20 s');
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(!s.ctx.engine.sql.memory().some((w) => w.pid === before.pid), 'the worker that ran out is gone');
    const next = await s.post('/v3/sql', { sql: 'SELECT 42 AS a' });
    assert.equal(next.status, 200);
    assert.deepEqual(((await next.json()) as { rows: unknown[] }).rows, [{ a: 42 }]);
    assert.ok(said.some((m) => /replaced before its next query/.test(m)) || s.ctx.engine.stats().sql.restarts > 0, said.join(' | '));
  } finally {
    await s.close();
  }
});
