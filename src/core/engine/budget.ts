// One admission rule for every kind of work: a budget of slots (engine
// connections, SQL worker processes, export or facet slots), a bounded FIFO
// queue, a deadline on the wait, and a refusal that says which setting to
// change (503 busy with Retry-After). A waiter whose client goes away leaves
// the queue. Leases are released once (release is idempotent), and a lease
// held past its budget's longest legitimate hold is reported as leaked.

import { busy, cancelled, msg, setting } from '../errors.ts';

export interface BudgetOptions {
  /** What the budget admits, for messages: "curated queries", "SQL queries". */
  what: string;
  /** Most that may wait for a slot (0: none). */
  queue: number;
  queueTimeoutMs: number;
  /** Settings named in refusals. */
  settings: { slots: string; queue: string; queueTimeout: string };
  /** A lease held longer than this is counted as leaked (Infinity: never). */
  maxHoldMs?: number;
  /** What to do with an item given back after close (close a connection). */
  retire?: (item: never) => void;
}

export interface Lease<T> {
  readonly item: T;
  /** Give the slot back (once; later calls do nothing). */
  release(): void;
}

export interface BudgetStats {
  slots: number;
  busy: number;
  queued: number;
  /** Slots granted since start. */
  admitted: number;
  /** Refused because the queue was full. */
  rejected: number;
  /** Gave up waiting at the queue deadline. */
  expired: number;
  /** Left the queue, or were stopped while running, because nobody waited any more. */
  cancelled: number;
  /** Stopped at their run deadline (counted by the budget's user). */
  timed_out: number;
  /** Leases held longer than the budget allows. */
  leaked: number;
}

interface Waiter<T> {
  resolve: (l: Lease<T>) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** Seconds a refused client is told to wait. */
export const RETRY_AFTER_SECONDS = 2;

export class Pool<T> {
  private readonly idle: T[];
  private readonly waiters: Waiter<T>[] = [];
  private readonly held = new Map<object, number>();
  private closed = false;
  private readonly counts = { admitted: 0, rejected: 0, expired: 0, cancelled: 0, timed_out: 0 };

  constructor(
    private readonly items: T[],
    readonly options: BudgetOptions,
  ) {
    this.idle = [...items];
  }

  get size(): number {
    return this.items.length;
  }

  /** Take a slot: at once when one is free, else in arrival order; refused when the queue is full or the wait too long. */
  acquire(signal?: AbortSignal): Promise<Lease<T>> {
    if (this.closed) return Promise.reject(cancelled('The service is shutting down.'));
    if (signal?.aborted) {
      this.counts.cancelled++;
      return Promise.reject(cancelled('The client went away before its work started.'));
    }
    const item = this.idle.pop();
    if (item !== undefined) return Promise.resolve(this.lease(item));
    const o = this.options;
    if (this.waiters.length >= o.queue) {
      this.counts.rejected++;
      return Promise.reject(
        busy(
          msg`Too many ${o.what} right now: ${this.items.length} run at once (${setting(o.settings.slots)}) and ${o.queue} may wait (${setting(o.settings.queue)}). Retry in a few seconds.`,
          RETRY_AFTER_SECONDS,
        ),
      );
    }
    return new Promise<Lease<T>>((resolve, reject) => {
      const w: Waiter<T> = {
        resolve,
        reject,
        signal,
        onAbort: undefined,
        timer: setTimeout(() => {
          this.drop(w);
          this.counts.expired++;
          reject(
            busy(
              msg`The service is busy: this request waited ${o.queueTimeoutMs} ms (${setting(o.settings.queueTimeout)}) for one of ${this.items.length} slots for ${o.what}. Retry in a few seconds.`,
              RETRY_AFTER_SECONDS,
            ),
          );
        }, o.queueTimeoutMs),
      };
      if (signal) {
        w.onAbort = () => {
          this.drop(w);
          this.counts.cancelled++;
          reject(cancelled('The client went away while its work waited.'));
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
    });
  }

  private drop(w: Waiter<T>): void {
    clearTimeout(w.timer);
    if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  private lease(item: T): Lease<T> {
    this.counts.admitted++;
    const token = {};
    this.held.set(token, Date.now());
    let done = false;
    return {
      item,
      release: () => {
        if (done) return;
        done = true;
        this.held.delete(token);
        this.give(item);
      },
    };
  }

  /** A slot comes back: to the first waiter, else idle. */
  private give(item: T): void {
    if (this.closed) {
      (this.options.retire as ((item: T) => void) | undefined)?.(item);
      return;
    }
    const w = this.waiters.shift();
    if (w) {
      this.drop(w);
      w.resolve(this.lease(item));
    } else {
      this.idle.push(item);
    }
  }

  /** Swap an item for a new one (a worker replaced), wherever it is. */
  replace(old: T, next: T): void {
    const i = this.items.indexOf(old);
    if (i >= 0) this.items[i] = next;
    const j = this.idle.indexOf(old);
    if (j >= 0) this.idle[j] = next;
  }

  /** Count a run stopped at its deadline, or work cancelled while running. */
  count(what: 'timed_out' | 'cancelled'): void {
    this.counts[what]++;
  }

  stats(): BudgetStats {
    const max = this.options.maxHoldMs ?? Infinity;
    const now = Date.now();
    let leaked = 0;
    for (const since of this.held.values()) if (now - since > max) leaked++;
    return { slots: this.items.length, busy: this.items.length - this.idle.length, queued: this.waiters.length, ...this.counts, leaked };
  }

  /** Every item, idle or not (to close them). */
  all(): readonly T[] {
    return this.items;
  }

  /** Refuse new work and fail the waiters; items in use stay with their users. */
  close(): T[] {
    this.closed = true;
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
      w.reject(cancelled('The service is shutting down.'));
    }
    return this.idle.splice(0);
  }
}

/** A budget of plain slots (no item behind each). */
export function slots(n: number, options: BudgetOptions): Pool<number> {
  return new Pool(
    Array.from({ length: n }, (_, i) => i),
    options,
  );
}
