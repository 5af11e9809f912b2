// A bounded spool between a producer that must not wait (an engine query
// holding a connection) and a reader that may be slow (a client socket). The
// producer pushes until the spool is full, then stops and releases what it
// holds; `drained` tells it when the reader has caught up (half empty) so it
// can resume. A failure or the end reaches the reader after the data before it.
// A block may be pushed unread (its size and how to read it): it is then read
// only when the reader takes it, so a burst of production never converts a
// whole cohort on the event loop at once, and a stalled reader costs none.

/** A block not read yet: its size, and how to read it. */
export interface LazyBlock {
  bytes: number;
  read(): Buffer;
}

export class Spool {
  private readonly blocks: (Buffer | LazyBlock)[] = [];
  private bytes = 0;
  private ended = false;
  /** The producer's failure, once it failed. */
  error: unknown = null;
  private readerWake: (() => void) | null = null;
  private roomWake: (() => void) | null = null;
  private onStart: (() => void) | null = null;
  private readonly start: Promise<void>;

  constructor(readonly highWater: number) {
    this.start = new Promise((resolve) => (this.onStart = resolve));
  }

  /** The producer should stop and come back later. */
  get full(): boolean {
    return this.bytes >= this.highWater;
  }

  push(block: Buffer | LazyBlock): void {
    this.blocks.push(block);
    this.bytes += Buffer.isBuffer(block) ? block.length : block.bytes;
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(e: unknown): void {
    this.error ??= e;
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    this.onStart?.();
    this.onStart = null;
    const w = this.readerWake;
    this.readerWake = null;
    w?.();
  }

  /** Settles at the first block, the end or a failure. */
  started(): Promise<void> {
    return this.start;
  }

  /** Resolves once the reader has taken half of what is spooled; rejects when `signal` aborts. */
  drained(signal: AbortSignal): Promise<void> {
    if (this.bytes <= this.highWater / 2) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.roomWake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
    });
  }

  /** The blocks in order; throws the producer's failure after the blocks before it. */
  async *drain(): AsyncGenerator<Buffer> {
    for (;;) {
      const next = this.blocks.shift();
      if (next) {
        const b = Buffer.isBuffer(next) ? next : next.read();
        this.bytes -= Buffer.isBuffer(next) ? next.length : next.bytes;
        if (this.roomWake && this.bytes <= this.highWater / 2) {
          const w = this.roomWake;
          this.roomWake = null;
          w();
        }
        yield b;
        continue;
      }
      if (this.error) throw this.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.readerWake = resolve));
    }
  }
}
