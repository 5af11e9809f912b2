// The admission rule every budget of work uses (src/core/engine/budget.ts)
// and the time-limit helper (src/core/engine/work.ts), without HTTP or an
// engine: arrival order, a full queue and a queue deadline refused as busy
// naming their settings, a waiter whose client leaves, idempotent release,
// close while waiting, leaks, and deadline reasons told apart from a client leaving.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Pool, slots } from '../src/core/engine/budget.ts';
import { DeadlineReached, WorkCancelled, deadline, detached, currentWork, runWork } from '../src/core/engine/work.ts';
import { IdqsError } from '../src/core/errors.ts';

const options = (queue: number, queueTimeoutMs = 10_000, maxHoldMs?: number) => ({
  what: 'test work',
  queue,
  queueTimeoutMs,
  settings: { slots: 'IDQS_T_SLOTS', queue: 'IDQS_T_QUEUE', queueTimeout: 'IDQS_T_WAIT' },
  ...(maxHoldMs === undefined ? {} : { maxHoldMs }),
});

async function rejectsWith(p: Promise<unknown>, code: string, text: RegExp): Promise<IdqsError> {
  const e = await p.then(
    () => assert.fail('expected a refusal'),
    (x: unknown) => x,
  );
  assert.ok(e instanceof IdqsError, String(e));
  assert.equal(e.code, code);
  assert.match(e.message, text);
  return e;
}

test('slots are granted at once while free, then in arrival order', async () => {
  const pool = new Pool(['a', 'b'], options(10));
  const first = await pool.acquire();
  const second = await pool.acquire();
  assert.notEqual(first.item, second.item);
  const order: string[] = [];
  const waiters = [1, 2, 3].map((n) => pool.acquire().then((l) => (order.push(`w${n}`), l)));
  assert.equal(pool.stats().queued, 3);
  first.release();
  second.release();
  const [w1, w2] = await Promise.all(waiters.slice(0, 2));
  assert.deepEqual(order, ['w1', 'w2']);
  w1!.release();
  const w3 = await waiters[2]!;
  assert.deepEqual(order, ['w1', 'w2', 'w3']);
  w2!.release();
  w3.release();
  assert.deepEqual(pool.stats(), { slots: 2, busy: 0, queued: 0, admitted: 5, rejected: 0, expired: 0, cancelled: 0, timed_out: 0, leaked: 0 });
});

test('a full queue is refused at once as busy, naming the slots and queue settings, with a retry delay', async () => {
  const pool = slots(1, options(1));
  const held = await pool.acquire();
  const waiting = pool.acquire();
  const e = await rejectsWith(pool.acquire(), 'busy', /1 run at once \(IDQS_T_SLOTS\) and 1 may wait \(IDQS_T_QUEUE\)/);
  assert.ok(e.retryAfterSeconds! > 0);
  assert.equal(pool.stats().rejected, 1);
  held.release();
  (await waiting).release();
});

test('a wait past the queue deadline is refused as busy naming that setting, and leaves the queue', async () => {
  const pool = slots(1, options(5, 50));
  const held = await pool.acquire();
  const started = Date.now();
  await rejectsWith(pool.acquire(), 'busy', /waited 50 ms \(IDQS_T_WAIT\)/);
  assert.ok(Date.now() - started >= 45);
  assert.equal(pool.stats().queued, 0);
  assert.equal(pool.stats().expired, 1);
  held.release();
  assert.equal(pool.stats().busy, 0, 'the slot went back to no one');
});

test('a waiter whose client leaves is removed and cancelled; the slot goes to the next one', async () => {
  const pool = slots(1, options(5));
  const held = await pool.acquire();
  const ac = new AbortController();
  const gone = pool.acquire(ac.signal);
  const next = pool.acquire();
  ac.abort(new WorkCancelled('test'));
  await rejectsWith(gone, 'cancelled', /went away/);
  assert.equal(pool.stats().queued, 1);
  held.release();
  (await next).release();
  assert.deepEqual([pool.stats().cancelled, pool.stats().admitted], [1, 2]);
  // Already gone before asking: refused without waiting.
  await rejectsWith(pool.acquire(AbortSignal.abort()), 'cancelled', /before its work started/);
});

test('release is idempotent: a double release does not free a slot twice', async () => {
  const pool = slots(1, options(5));
  const a = await pool.acquire();
  a.release();
  a.release();
  const b = await pool.acquire();
  const c = pool.acquire();
  assert.equal(pool.stats().queued, 1, 'the second release gave nothing away');
  b.release();
  (await c).release();
});

test('closing refuses new work, fails the waiters, and retires items given back later', async () => {
  const retired: string[] = [];
  const pool = new Pool(['x'], { ...options(5), retire: (i: string) => retired.push(i) });
  const held = await pool.acquire();
  const waiting = pool.acquire();
  assert.deepEqual(pool.close(), []);
  await rejectsWith(waiting, 'cancelled', /shutting down/);
  await rejectsWith(pool.acquire(), 'cancelled', /shutting down/);
  held.release();
  assert.deepEqual(retired, ['x']);
});

test('a lease held past the budget’s longest legitimate hold is counted as leaked', async () => {
  const pool = slots(2, options(5, 1000, 30));
  const a = await pool.acquire();
  assert.equal(pool.stats().leaked, 0);
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(pool.stats().leaked, 1);
  a.release();
  assert.equal(pool.stats().leaked, 0);
});

test('a deadline aborts with a reason naming its setting; a parent aborting passes its own reason', async () => {
  const d = deadline(30, 'IDQS_T_TIMEOUT');
  // The deadline's own timer does not keep a process alive: this one does, meanwhile.
  const alive = setTimeout(() => undefined, 5000);
  await new Promise((r) => d.signal.addEventListener('abort', r));
  clearTimeout(alive);
  assert.ok(d.signal.reason instanceof DeadlineReached);
  assert.equal((d.signal.reason as DeadlineReached).setting, 'IDQS_T_TIMEOUT');
  d.clear();
  const parent = new AbortController();
  const child = deadline(10_000, 'IDQS_T_TIMEOUT', parent.signal);
  parent.abort(new WorkCancelled('the client went away'));
  assert.ok(child.signal.aborted);
  assert.ok(child.signal.reason instanceof WorkCancelled);
  child.clear();
});

test('work carries its signal and id through awaits; detached work keeps the id, not the signal', async () => {
  const ac = new AbortController();
  await runWork({ signal: ac.signal, requestId: 'r1' }, async () => {
    await new Promise((r) => setTimeout(r, 1));
    assert.equal(currentWork()?.requestId, 'r1');
    assert.equal(currentWork()?.signal, ac.signal);
    await detached(async () => {
      await new Promise((r) => setTimeout(r, 1));
      assert.equal(currentWork()?.requestId, 'r1');
      assert.equal(currentWork()?.signal, undefined);
    });
  });
  assert.equal(currentWork(), undefined);
});
