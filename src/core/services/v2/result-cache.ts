// Manifests being paged, kept whole for a while. Once a client asks for a
// second page, the ordered result is materialized once (the JSON text of
// each row, in the engine's own chunks, off the JS heap) and later pages are slices of it, so paging a
// million rows costs one query instead of a thousand. Bounded by an estimated
// byte budget (least recently used entries go first) and an idle time. Pure
// optimization: tokens stay self-sufficient, and without an entry (another
// replica, a restart, too large) a page is read with its keyset query.

import type { DuckDBDataChunk } from '@duckdb/node-api';

/** A manifest as the JSON text of its rows, in order, held in the engine's chunks (one VARCHAR column). */
export interface Materialized {
  chunks: DuckDBDataChunk[];
  /** Row offset at which each chunk starts. */
  starts: number[];
  rows: number;
}

interface Entry {
  value: Promise<Materialized | null>;
  bytes: number;
  lastUsed: number;
}

const IDLE_MS = 10 * 60_000;

export function materialized(chunks: DuckDBDataChunk[]): Materialized {
  const starts: number[] = [];
  let rows = 0;
  for (const c of chunks) {
    starts.push(rows);
    rows += c.rowCount;
  }
  return { chunks, starts, rows };
}

/** The JSON text of rows [offset, offset + size). */
export function slice(m: Materialized, offset: number, size: number): string[] {
  const out: string[] = [];
  if (offset < 0 || offset >= m.rows) return out;
  // Last chunk starting at or before offset.
  let lo = 0;
  let hi = m.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (m.starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  const end = Math.min(m.rows, offset + size);
  for (let ci = lo, pos = offset; pos < end; ci++) {
    const chunk = m.chunks[ci]!;
    const column = chunk.getColumnVector(0);
    for (let r = pos - m.starts[ci]!; r < chunk.rowCount && pos < end; r++, pos++) out.push(column.getItem(r) as string);
  }
  return out;
}

export class ResultCache {
  private readonly entries = new Map<string, Entry>();
  private used = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Whether a result of about `bytes` may be kept at all. */
  fits(bytes: number): boolean {
    return bytes <= this.budgetBytes;
  }

  /** The entry for `key`, computing it with `load` (estimated `bytes`) when absent. */
  get(key: string, bytes: number, load: () => Promise<Materialized | null>): Promise<Materialized | null> {
    this.expire();
    const hit = this.entries.get(key);
    if (hit) {
      hit.lastUsed = Date.now();
      return hit.value;
    }
    this.makeRoom(bytes);
    const value = load().catch(() => null);
    const entry: Entry = { value, bytes, lastUsed: Date.now() };
    this.entries.set(key, entry);
    this.used += bytes;
    // A failed load leaves no entry behind.
    void value.then((m) => {
      if (m === null && this.entries.get(key) === entry) this.drop(key);
    });
    return value;
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.used -= e.bytes;
  }

  private expire(): void {
    const now = Date.now();
    for (const [k, e] of this.entries) if (now - e.lastUsed > IDLE_MS) this.drop(k);
  }

  private makeRoom(bytes: number): void {
    const byAge = [...this.entries.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [k] of byAge) {
      if (this.used + bytes <= this.budgetBytes) break;
      this.drop(k);
    }
  }
}
