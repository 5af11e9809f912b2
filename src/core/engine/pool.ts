// A small fair pool of DuckDB connections. A connection runs one query at a
// time, so independent requests each take their own; waiters are served in
// arrival order and may give up after a deadline.

import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

interface Waiter {
  resolve: (c: DuckDBConnection) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

export class ConnectionPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiters: Waiter[] = [];
  private closed = false;

  private constructor(
    private readonly all: DuckDBConnection[],
    readonly maxQueue: number,
  ) {
    this.idle.push(...all);
  }

  static async create(instance: DuckDBInstance, size: number, maxQueue = Infinity): Promise<ConnectionPool> {
    const conns: DuckDBConnection[] = [];
    for (let i = 0; i < size; i++) conns.push(await instance.connect());
    return new ConnectionPool(conns, maxQueue);
  }

  get size(): number {
    return this.all.length;
  }
  get busy(): number {
    return this.all.length - this.idle.length;
  }
  get queued(): number {
    return this.waiters.length;
  }

  /** Take a connection; rejects with `onFull()` when the queue is full and with `onTimeout()` after `waitMs`. */
  acquire(waitMs?: number, errors?: { onFull: () => Error; onTimeout: () => Error }): Promise<DuckDBConnection> {
    if (this.closed) return Promise.reject(new Error('engine is closed'));
    const c = this.idle.pop();
    if (c) return Promise.resolve(c);
    if (this.waiters.length >= this.maxQueue) return Promise.reject(errors?.onFull() ?? new Error('pool queue is full'));
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject };
      if (waitMs !== undefined && Number.isFinite(waitMs)) {
        w.timer = setTimeout(() => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(errors?.onTimeout() ?? new Error('timed out waiting for a connection'));
        }, Math.max(0, waitMs));
      }
      this.waiters.push(w);
    });
  }

  release(c: DuckDBConnection): void {
    if (this.closed) {
      c.closeSync();
      return;
    }
    const w = this.waiters.shift();
    if (w) {
      if (w.timer) clearTimeout(w.timer);
      w.resolve(c);
    } else {
      this.idle.push(c);
    }
  }

  async use<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const c = await this.acquire();
    try {
      return await fn(c);
    } finally {
      this.release(c);
    }
  }

  /**
   * Refuse new work and close idle connections; a connection still running a
   * query (a response being streamed, a manifest being materialized) is
   * interrupted and closed when its user releases it, never under it.
   */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error('engine is closed'));
    const idle = new Set(this.idle.splice(0));
    for (const c of this.all) {
      if (idle.has(c)) c.closeSync();
      else c.interrupt();
    }
  }
}
