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

/**
 * The words of rows a..b (inclusive): bits a % 32 .. 31 of the first word, 0 .. b % 32 of the last.
 * Rows of a list often follow one another (a study's series, a collection's rows): a run is set or
 * cleared a word at a time rather than row by row.
 */
function spanMask(a: number, b: number): number {
  return (-1 << (a & 31)) & (-1 >>> (31 - (b & 31)));
}

/** Set the bits of rows a..b (inclusive). `summary`, when given, gets the bit of every word written (see liveWords). */
export function setSpan(bits: Uint32Array, a: number, b: number, summary: Uint32Array | null = null): void {
  const wa = a >>> 5;
  const wb = b >>> 5;
  if (a === b) bits[wa]! |= 1 << (a & 31);
  else if (wa === wb) bits[wa]! |= spanMask(a, b);
  else {
    bits[wa]! |= spanMask(a, 31);
    for (let w = wa + 1; w < wb; w++) bits[w] = 0xffffffff;
    bits[wb]! |= spanMask(0, b);
  }
  if (summary !== null) for (let w = wa; w <= wb; w++) summary[w >>> 5]! |= 1 << (w & 31);
}

/** Clear the bits of rows a..b (inclusive). */
export function clearSpan(bits: Uint32Array, a: number, b: number): void {
  const wa = a >>> 5;
  const wb = b >>> 5;
  if (a === b) bits[wa]! &= ~(1 << (a & 31));
  else if (wa === wb) bits[wa]! &= ~spanMask(a, b);
  else {
    bits[wa]! &= ~spanMask(a, 31);
    for (let w = wa + 1; w < wb; w++) bits[w] = 0;
    bits[wb]! &= ~spanMask(0, b);
  }
}

/** Set the bits of these rows, each run of adjacent rows (r, r + 1, ...) at once (setSpan). `summary` as in setSpan. */
export function setRows(bits: Uint32Array, rows: ArrayLike<number>, summary: Uint32Array | null = null): void {
  const n = rows.length;
  for (let i = 0; i < n; ) {
    const a = rows[i++]!;
    let b = a;
    while (i < n && rows[i] === b + 1) b = rows[i++]!;
    setSpan(bits, a, b, summary);
  }
}

/** Clear the bits of these rows, each run of adjacent rows at once (clearSpan). */
export function clearRows(bits: Uint32Array, rows: ArrayLike<number>): void {
  const n = rows.length;
  for (let i = 0; i < n; ) {
    const a = rows[i++]!;
    let b = a;
    while (i < n && rows[i] === b + 1) b = rows[i++]!;
    clearSpan(bits, a, b);
  }
}

/** Set the bits of rows 0..n and clear the rest (`bits` has wordsFor(n) words). */
export function fillRows(bits: Uint32Array, n: number): void {
  bits.fill(0xffffffff);
  if ((n & 31) !== 0) bits[n >>> 5] = (1 << (n & 31)) - 1;
}

/** Words of the summary of a bitset of `words` words: one bit per word. */
export const summaryFor = (words: number): number => (words + 31) >>> 5;

/**
 * The words of `bits` that may hold a set bit, ascending, into `into`; returns how many. From `summary`
 * when given (a bit per word, set for every word written since it was cleared: a superset of the
 * words not zero, read in a pass over 1/32 of the words), else the words not zero, from a pass over all.
 */
export function liveWords(bits: Uint32Array, summary: Uint32Array | null, into: Uint32Array): number {
  let k = 0;
  if (summary === null) {
    for (let w = 0; w < bits.length; w++) if (bits[w] !== 0) into[k++] = w;
    return k;
  }
  for (let i = 0; i < summary.length; i++) {
    for (let x = summary[i]!, base = i << 5; x !== 0; ) {
      const low = x & -x;
      x ^= low;
      into[k++] = base + 31 - Math.clz32(low);
    }
  }
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
