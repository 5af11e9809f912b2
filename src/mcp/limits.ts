// Limits of the agent tools: small defaults and hard caps suited to a
// language model's context (a REST client streams; a model reads every row).
// Each cap is also kept under the server's own REST ceiling; values are
// lowered with the contract's rule (src/contract/limits.ts).

import type { Config } from '../config.ts';
import { restLimits, type Limit } from '../contract/limits.ts';

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

/** An agent default and cap, neither above the REST cap. */
function agent(def: number, cap: number, rest: Limit): Limit {
  const c = Math.max(1, Math.min(cap, rest.cap));
  return { default: Math.min(def, c), cap: c };
}

export function toolLimits(config: Config): ToolLimits {
  const rest = restLimits(config);
  return {
    values: agent(50, 500, rest.values),
    sqlRows: agent(100, 1000, rest.sqlRows),
    clinicalRows: agent(50, 500, rest.clinicalRows),
    pageSize: agent(10, 100, rest.pageSize),
    urls: agent(100, 1000, rest.manifestLines),
  };
}
