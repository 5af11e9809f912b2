// Histogram bins of a range attribute, fixed once per data release over the
// attribute's whole domain so that a histogram keeps its axis while filters
// change. Edges are numbers people read easily: a 1-2-5 sequence for
// quantities spanning several orders of magnitude (sizes, instance counts),
// even steps otherwise, and calendar years or months for dates.

/** Ascending edges; bin i is [edges[i], edges[i + 1]). The last edge is above the maximum. */
export type Edges = number[] | string[];

const TARGET_BINS = 20;

/** A step of 1, 2 or 5 times a power of ten, close to `raw`. */
function niceStep(raw: number, integer: boolean): number {
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  return integer ? Math.max(1, Math.round(step)) : step;
}

/** Avoid 0.30000000000000004 in edges that are multiples of a decimal step. */
function tidy(x: number): number {
  return Number(x.toPrecision(12));
}

/** Edges over [min, max] of a numeric attribute. */
export function numericEdges(min: number, max: number, integer: boolean): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (min === max) return [min, integer ? min + 1 : tidy(min + Math.max(Math.abs(min) * 1e-9, 1e-9))];
  // Heavy-tailed non-negative quantities: 1-2-5 steps per decade, from the
  // largest step value at or below the smallest positive magnitude.
  const base = min > 0 ? min : integer ? 1 : Math.max(max / 1e6, 1e-3);
  if (min >= 0 && max / base >= 1000) {
    const seq: number[] = [];
    for (let p = integer ? Math.max(1, 10 ** Math.floor(Math.log10(base))) : 10 ** Math.floor(Math.log10(base)); seq.at(-1) === undefined || seq.at(-1)! <= max; p *= 10) {
      for (const m of [1, 2, 5]) if (seq.at(-1) === undefined || seq.at(-1)! <= max) seq.push(tidy(m * p));
    }
    let i = 0;
    while (i + 1 < seq.length && seq[i + 1]! <= base) i++;
    return min < seq[i]! ? [min, ...seq.slice(i)] : seq.slice(i);
  }
  const step = niceStep((max - min) / TARGET_BINS, integer);
  const start = tidy(Math.floor(min / step) * step);
  const edges: number[] = [];
  for (let e = start; ; e = tidy(e + step)) {
    edges.push(e);
    if (e > max) return edges;
  }
}

const DATE = /^(\d{4})-(\d{2})-\d{2}/;

/** Edges over [min, max] of a YYYY-MM-DD attribute: calendar years, or months for spans under three years. */
export function dateEdges(min: string, max: string): string[] {
  const a = DATE.exec(min);
  const b = DATE.exec(max);
  if (!a || !b) return [];
  const y0 = Number(a[1]);
  const y1 = Number(b[1]);
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  if (y1 - y0 >= 3) {
    const edges: string[] = [];
    for (let y = y0; y <= y1 + 1; y++) edges.push(`${pad(y, 4)}-01-01`);
    return edges;
  }
  const edges: string[] = [];
  for (let m = y0 * 12 + Number(a[2]) - 1; m <= y1 * 12 + Number(b[2]); m++) edges.push(`${pad(Math.floor(m / 12), 4)}-${pad((m % 12) + 1, 2)}-01`);
  return edges;
}

/**
 * Index of the bin holding `v` (0-based): the last edge <= v. Values below
 * the first edge or at or above the last (only strings that are not dates can
 * be) go to the first and last bin, so every value is counted once.
 */
export function binOf(edges: Edges, v: number | string): number {
  let lo = 0;
  let hi = edges.length - 2;
  if (hi < 0) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((edges[mid] as number | string) <= v) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
