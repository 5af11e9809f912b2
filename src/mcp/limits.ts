// Limits of the agent tools: small defaults and hard caps suited to a
// language model's context (a REST client streams; a model reads every row).
// Each cap is also kept under the server's own REST ceiling.

import type { AppContext } from '../core/context.ts';

export interface Limit {
  default: number;
  cap: number;
}

export interface ToolLimits {
  /** get_attribute_values `limit`. */
  values: Limit;
  /** run_sql `max_rows`. */
  sqlRows: Limit;
  /** get_clinical_table `max_rows`. */
  clinicalRows: Limit;
  /** build_cohort `page_size`. */
  pageSize: Limit;
  /** get_cohort_urls `limit`. */
  urls: Limit;
}

function limit(def: number, cap: number, serverCap: number): Limit {
  const c = Math.max(1, Math.min(cap, serverCap));
  return { default: Math.min(def, c), cap: c };
}

export function toolLimits(ctx: AppContext): ToolLimits {
  const c = ctx.config;
  return {
    values: limit(50, 500, c.valuesLimitCap),
    sqlRows: limit(100, 1000, c.sqlMaxRowsCap),
    clinicalRows: limit(50, 500, c.clinicalMaxRowsCap),
    pageSize: limit(10, 100, c.maxPageSize),
    urls: limit(100, 1000, c.manifestCap),
  };
}

/** The value to apply: the default when absent, else at most the cap (reported through `clamped`). */
export function applyLimit(requested: number | undefined, l: Limit): { value: number; clamped: boolean } {
  if (requested === undefined) return { value: l.default, clamped: false };
  if (requested > l.cap) return { value: l.cap, clamped: true };
  return { value: requested, clamped: false };
}
