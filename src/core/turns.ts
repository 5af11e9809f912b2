// Sharing the one main thread. Work that may run for tens of milliseconds (a
// pasted list of 45,000 identifiers compiled, a manifest of 100,000 lines read)
// gives other requests their turn between its steps: `breathe()` yields to the
// event loop once the current stretch of synchronous work has run SLICE_MS, and
// costs nothing otherwise.

/** Longest stretch of synchronous work between turns given to others (ms). */
export const SLICE_MS = 4;

/** Resolves on the next turn of the event loop, after pending I/O (other requests) has run. */
export const nextTurn = (): Promise<void> => new Promise<void>((r) => setImmediate(r));

/** When the stretch under way started (its first call of `breathe`), or null when the loop has turned since. */
let sliceStart: number | null = null;
const loopTurned = () => (sliceStart = null);

/** Yield to other requests when the stretch of work under way has run SLICE_MS; else resolve at once (undefined). */
export function breathe(): Promise<void> | undefined {
  const now = performance.now();
  if (sliceStart === null) {
    sliceStart = now;
    setImmediate(loopTurned);
    return undefined;
  }
  if (now - sliceStart < SLICE_MS) return undefined;
  sliceStart = null;
  return nextTurn();
}
