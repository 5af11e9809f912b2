// Size parameters (max_rows, limit, page_size): one rule for every surface.
// Absent means the default; above the cap is lowered to the cap, with one
// warning style that bodies with a warnings list carry; below the minimum,
// where a route accepts it, is raised. Core services refuse values outside
// their configured range, so every adapter applies this first, with its own caps.

import { manifestCapOf, type Config } from '../config.ts';

export interface Limit {
  default: number;
  cap: number;
  /** Smallest value raised rather than refused (only where the interface accepts less). */
  min?: number;
}

export interface AppliedLimit {
  value: number;
  /** Says what was changed, or null. */
  warning: string | null;
}

/** The value of size parameter `name` to use for a request. */
export function applyLimit(name: string, requested: number | null | undefined, limit: Limit): AppliedLimit {
  if (requested === undefined || requested === null) return { value: limit.default, warning: null };
  if (requested > limit.cap) return { value: limit.cap, warning: `${name} ${requested} is above the cap of ${limit.cap}; lowered to ${limit.cap}.` };
  if (limit.min !== undefined && requested < limit.min) return { value: limit.min, warning: `${name} ${requested} is below ${limit.min}; raised to ${limit.min}.` };
  return { value: requested, warning: null };
}

/** A limit whose default never exceeds its cap. */
function bounded(def: number, cap: number, min?: number): Limit {
  return min === undefined ? { default: Math.min(def, cap), cap } : { default: Math.min(def, cap), cap, min };
}

/** The size parameters of the HTTP API, from the configuration. */
export function restLimits(c: Config) {
  return {
    /** GET /v3/attributes/{attribute}/values `limit`. */
    values: bounded(c.valuesLimit, c.valuesLimitCap),
    /** POST /v3/sql `max_rows`. */
    sqlRows: bounded(c.sqlMaxRows, c.sqlMaxRowsCap),
    /** GET /v3/clinical/tables/{table}/rows `max_rows`. */
    clinicalRows: bounded(c.clinicalMaxRows, c.clinicalMaxRowsCap),
    /** POST /v3/cohort/manifest `page_size` (the public service clamps it to 1 and above). */
    pageSize: bounded(c.pageSize, c.maxPageSize, 1),
    /** POST /v3/cohort/manifest.txt `limit` (no cap configured: the whole cohort). */
    manifestLines: bounded(manifestCapOf(c), manifestCapOf(c)),
  };
}

export type RestLimits = ReturnType<typeof restLimits>;
