// A cache of answers computed once and shared while they are computed (a
// promise per key), bounded by the bytes the answers hold: a pending answer
// counts a fixed amount, a settled one its measured size, a failed one is
// dropped. The least recently used answers leave first.

import { LRUCache } from 'lru-cache';

/** What a pending answer counts until it settles. */
const PENDING_BYTES = 1024;

export class PromiseCache<V extends object> {
  private readonly lru: LRUCache<string, Promise<V>>;

  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (v: V) => number,
  ) {
    // An answer larger than an eighth of the budget is not kept: it would push out many others.
    this.lru = new LRUCache<string, Promise<V>>({ maxSize: Math.max(1, maxBytes), maxEntrySize: Math.max(PENDING_BYTES, maxBytes / 8) });
  }

  /** The answer of `key`, kept or computed by `compute` (callers asking meanwhile share it). */
  get(key: string, compute: () => Promise<V>): Promise<V> {
    const kept = this.lru.get(key);
    if (kept) return kept;
    const p = compute();
    if (this.maxBytes <= 0) return p;
    this.lru.set(key, p, { size: PENDING_BYTES });
    p.then(
      (v) => {
        // Still the entry (not evicted or replaced meanwhile): count what it really holds.
        // (lru-cache keeps the old size when the same value is set again: delete, then set.)
        if (this.lru.peek(key) !== p) return;
        this.lru.delete(key);
        this.lru.set(key, p, { size: Math.max(1, this.sizeOf(v)) });
      },
      () => {
        if (this.lru.peek(key) === p) this.lru.delete(key);
      },
    );
    return p;
  }

  stats(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: this.lru.size, bytes: this.lru.calculatedSize, maxBytes: this.maxBytes };
  }
}

/** Bytes a JSON-like value holds, roughly: two a character of its text. */
export const jsonBytes = (v: unknown): number => 2 * JSON.stringify(v).length;
