// Size conventions: decimal units (1 TB = 1e6 MB), as the index stores MB.

/** Round to `digits` decimals without binary-float surprises such as 0.1 + 0.2. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round((x + Number.EPSILON) * f) / f;
}

/** Terabytes from megabytes; six decimals so small cohorts do not read as 0. */
export function tbFromMb(mb: number): number {
  return round(mb / 1e6, 6);
}

export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== '') return Number(v);
  return 0;
}
