// One writer per cache target across processes. Every write into the cache
// (a download, an unpacked wheel, a generated dataset, a database build) runs
// under `withCacheLock(target)`: a lock file beside the target (proper-lockfile:
// a directory created atomically, its mtime refreshed while the owner lives)
// and an owner note (pid, host, what) so a process that waits can say whom it
// waits for. A lock whose owner died is taken over: at once when the owner's
// pid is gone from this host, else when its refresh is overdue.

import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

export interface LockOwner {
  pid: number;
  host: string;
  what: string;
  since: string;
}

/** What a waiting process reports: the target, and who holds it (null when the owner note is not readable yet). */
export interface LockEvent {
  kind: 'wait' | 'takeover';
  target: string;
  owner: LockOwner | null;
  waitedS: number;
}

let listener: (e: LockEvent) => void = () => {};

/** Where waits and takeovers are told (the command line prints them); core itself never writes to a terminal. */
export function onCacheLockEvent(l: (e: LockEvent) => void): void {
  listener = l;
}

/** The lock was taken from us (we looked dead: stalled past the stale time); the work is redone under a new lock. */
export class LockLostError extends Error {
  constructor(target: string) {
    super(`lost the lock on ${target} to another process; starting again`);
    this.name = 'LockLostError';
  }
}

export interface HeldLock {
  /** Throws LockLostError when the lock is no longer ours: call it before renaming work into place. */
  assertOwned: () => void;
}

/** A lock not refreshed for this long belongs to a dead (or frozen) process. */
const STALE_MS = 10_000;
/** A dead owner's lock on this host: taken over once its last refresh is this old. */
const DEAD_OWNER_STALE_MS = 2_000;
const UPDATE_MS = 2_000;
const POLL_MS = 200;
const SAY_EVERY_MS = 15_000;

const lockPath = (target: string) => `${target}.lock`;
const ownerPath = (target: string) => `${target}.lock-owner.json`;

/** Whether a process of this host is alive (EPERM: alive, not ours). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(target: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(ownerPath(target), 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function acquire(target: string, what: string, onLost: (e: Error) => void, signal?: AbortSignal): Promise<() => Promise<void>> {
  // Loaded on first use: it hooks process exit to remove held locks.
  const lockfile = (await import('proper-lockfile')).default;
  mkdirSync(dirname(target), { recursive: true });
  const started = Date.now();
  let said = 0;
  for (;;) {
    signal?.throwIfAborted();
    const owner = existsSync(lockPath(target)) ? readOwner(target) : null;
    const dead = owner !== null && owner.host === hostname() && owner.pid !== process.pid && !pidAlive(owner.pid);
    try {
      const release = await lockfile.lock(target, {
        realpath: false,
        lockfilePath: lockPath(target),
        stale: dead ? DEAD_OWNER_STALE_MS : STALE_MS,
        update: UPDATE_MS,
        retries: 0,
        onCompromised: onLost,
      });
      const mine: LockOwner = { pid: process.pid, host: hostname(), what, since: new Date().toISOString() };
      writeFileSync(ownerPath(target), JSON.stringify(mine));
      // The lock was there a moment ago and its owner is dead: we took it over.
      if (dead) listener({ kind: 'takeover', target, owner, waitedS: (Date.now() - started) / 1000 });
      return async () => {
        if (readOwner(target)?.pid === process.pid) rmSync(ownerPath(target), { force: true });
        await release().catch(() => {}); // already taken from us: nothing of ours to remove
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') throw e;
    }
    if (said === 0 || Date.now() - said >= SAY_EVERY_MS) {
      said = Date.now();
      listener({ kind: 'wait', target, owner: readOwner(target), waitedS: Math.round((Date.now() - started) / 1000) });
    }
    await sleep(POLL_MS);
  }
}

/**
 * Run `fn` as the only process writing `target`. A process that finds the
 * target locked waits (reported through onCacheLockEvent) and then runs `fn`
 * itself, which should find the work done and reuse it. When the lock is
 * taken from us mid-way, the work is started again under a new lock.
 */
export async function withCacheLock<T>(target: string, what: string, fn: (held: HeldLock) => Promise<T>, signal?: AbortSignal): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let lost = false;
    const release = await acquire(target, what, () => void (lost = true), signal);
    const held: HeldLock = {
      assertOwned: () => {
        if (lost) throw new LockLostError(target);
      },
    };
    try {
      return await fn(held);
    } catch (e) {
      if (!(e instanceof LockLostError) || attempt >= 3) throw e;
    } finally {
      await release();
    }
  }
}

/**
 * Leftovers of dead processes beside `target`, named `<target><marker><pid>[suffix]`
 * (a build's `.building-<pid>`, a generation's `.partial-<pid>`): removed by the
 * lock's new owner. A live process's files are never touched.
 */
export function removeDeadLeftovers(target: string, marker: string): void {
  const dir = dirname(target);
  if (!existsSync(dir)) return;
  const prefix = `${basename(target)}${marker}`;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^\d+/.exec(name.slice(prefix.length))?.[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !pidAlive(pid)) rmSync(join(dir, name), { recursive: true, force: true });
  }
}
