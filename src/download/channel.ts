// A bounded queue between the listing of series and the transfer of their
// files: the lister waits when `max` files are waiting, the transfer workers
// wait when none is, and close() lets them finish. What bounds the
// downloader's memory however many files a cohort has.

export class Channel<T> {
  private items: T[] = [];
  private head = 0;
  private closed = false;
  private takers: ((v: T | null) => void)[] = [];
  private room: (() => void)[] = [];

  constructor(private readonly max: number) {}

  get size(): number {
    return this.items.length - this.head;
  }

  /** Add an item, waiting while the queue is full. */
  async push(item: T): Promise<void> {
    while (this.size >= this.max && !this.closed) await new Promise<void>((ok) => this.room.push(ok));
    if (this.closed) return;
    const taker = this.takers.shift();
    if (taker) taker(item);
    else this.items.push(item);
  }

  /** The next item, or null once the queue is closed and empty. */
  async take(): Promise<T | null> {
    if (this.size > 0) {
      const item = this.items[this.head++]!;
      // Drop the consumed front now and then, so the array does not keep every item ever queued.
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      this.room.shift()?.();
      return item;
    }
    if (this.closed) return null;
    return new Promise((ok) => this.takers.push(ok));
  }

  /** No more items: waiting takers get null, waiting pushers return. */
  close(): void {
    this.closed = true;
    for (const t of this.takers.splice(0)) t(null);
    for (const r of this.room.splice(0)) r();
  }
}
