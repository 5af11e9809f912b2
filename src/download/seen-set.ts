// The series (and objects) already planned in one pass over a manifest, so a
// series named twice is downloaded once. A manifest can name a million
// series: a Set of strings would hold a million heap objects (about 50 bytes
// each, and the garbage collector lets the heap grow in proportion to what it
// holds). Here each key is 16 bytes in an open-addressing table outside the
// JavaScript heap: a series folder (crdc_series_uuid) is its own 128 bits,
// exactly; any other key (bucket/key of an object) is its MD5, whose
// collisions between distinct manifest lines do not happen in practice.

import { createHash } from 'node:crypto';

/** What dedup needs of a set (a Set<string> has it too). */
export interface Seen {
  has(key: string): boolean;
  add(key: string): unknown;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Grow when this fraction of the slots is taken (linear probing stays short below it). */
const MAX_LOAD = 0.7;

export class SeenSet implements Seen {
  /** Four 32-bit words per slot. */
  private words: Uint32Array;
  /** 1 where a slot holds a key (the all-zero key is a valid one). */
  private used: Uint8Array;
  private mask: number;
  size = 0;
  private readonly key = new Uint32Array(4);

  constructor(private readonly initialSlots = 1024) {
    this.words = new Uint32Array(initialSlots * 4);
    this.used = new Uint8Array(initialSlots);
    this.mask = initialSlots - 1;
    if ((initialSlots & this.mask) !== 0) throw new Error('initialSlots must be a power of two');
  }

  /** The 128-bit form of a key, into this.key. */
  private load(key: string): void {
    const k = this.key;
    if (UUID.test(key)) {
      k[0] = parseInt(key.slice(0, 8), 16);
      k[1] = parseInt(key.slice(9, 13) + key.slice(14, 18), 16);
      k[2] = parseInt(key.slice(19, 23) + key.slice(24, 28), 16);
      k[3] = parseInt(key.slice(28, 36), 16);
      return;
    }
    const d = createHash('md5').update(key).digest();
    for (let i = 0; i < 4; i++) k[i] = d.readUInt32LE(i * 4);
  }

  private slotOf(k: Uint32Array, words: Uint32Array, used: Uint8Array, mask: number): number {
    // The words are random bits already (UUIDs, digests): a cheap mix of two is spread enough.
    let i = (Math.imul(k[0]! ^ k[3]!, 0x9e3779b1) >>> 0) & mask;
    while (used[i] === 1) {
      const w = i * 4;
      if (words[w] === k[0] && words[w + 1] === k[1] && words[w + 2] === k[2] && words[w + 3] === k[3]) return i;
      i = (i + 1) & mask;
    }
    return i;
  }

  has(key: string): boolean {
    this.load(key);
    return this.used[this.slotOf(this.key, this.words, this.used, this.mask)] === 1;
  }

  /** Add a key; true if it was not there yet. */
  add(key: string): boolean {
    this.load(key);
    const i = this.slotOf(this.key, this.words, this.used, this.mask);
    if (this.used[i] === 1) return false;
    this.words.set(this.key, i * 4);
    this.used[i] = 1;
    this.size++;
    if (this.size > MAX_LOAD * (this.mask + 1)) this.grow();
    return true;
  }

  /** Empty again, keeping the table's memory (the next pass names as many series). */
  clear(): void {
    this.used.fill(0);
    this.size = 0;
  }

  private grow(): void {
    const slots = (this.mask + 1) * 2;
    const words = new Uint32Array(slots * 4);
    const used = new Uint8Array(slots);
    const mask = slots - 1;
    const k = new Uint32Array(4);
    for (let i = 0; i <= this.mask; i++) {
      if (this.used[i] !== 1) continue;
      k.set(this.words.subarray(i * 4, i * 4 + 4));
      const j = this.slotOf(k, words, used, mask);
      words.set(k, j * 4);
      used[j] = 1;
    }
    this.words = words;
    this.used = used;
    this.mask = mask;
  }
}
