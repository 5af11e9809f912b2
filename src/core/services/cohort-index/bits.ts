// Row sets of the cohort index as bitsets: bit r % 32 of word r >>> 5 is row
// r (table order). A million rows are 32,768 words, so combining clauses
// (AND, OR) and counting (popcount) cost a pass over words, not rows.

/** Words for n rows. */
export const wordsFor = (n: number): number => (n + 31) >>> 5;

/** Set bits of a 32-bit word. */
export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Set bits of a bitset. */
export function countBits(bits: Uint32Array): number {
  let n = 0;
  for (let w = 0; w < bits.length; w++) if (bits[w] !== 0) n += popcount(bits[w]!);
  return n;
}

/** Set the bits of these rows. */
export function setRows(bits: Uint32Array, rows: ArrayLike<number>): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    bits[r >>> 5]! |= 1 << (r & 31);
  }
}

/** Clear the bits of these rows. */
export function clearRows(bits: Uint32Array, rows: ArrayLike<number>): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    bits[r >>> 5]! &= ~(1 << (r & 31));
  }
}

/** Set the bits of rows 0..n and clear the rest (`bits` has wordsFor(n) words). */
export function fillRows(bits: Uint32Array, n: number): void {
  bits.fill(0xffffffff);
  if ((n & 31) !== 0) bits[n >>> 5] = (1 << (n & 31)) - 1;
}

/** Words not zero. */
export function countWords(bits: Uint32Array): number {
  let k = 0;
  for (let w = 0; w < bits.length; w++) k += +(bits[w] !== 0);
  return k;
}

/** The rows of a bitset, ascending, into `rows` (room for every set bit); returns how many. */
export function rowsOfBits(bits: Uint32Array, rows: Uint32Array): number {
  let k = 0;
  for (let w = 0; w < bits.length; w++) {
    let x = bits[w]!;
    const base = w << 5;
    while (x !== 0) {
      const low = x & -x;
      rows[k++] = base + 31 - Math.clz32(low);
      x ^= low;
    }
  }
  return k;
}
