// The shapes of a facets answer (/v3/cohort/facets and its tool): per
// attribute a term facet (values with their counts) or a range facet (bins),
// the cohort's totals and what was applied. Types only, shared by the served
// release's facets (cohort-facets.ts) and a past release's (as-of-facets.ts).

import type { Counts } from '../version.ts';
import type { FiltersApplied } from '../cohort.ts';
import type { CountMode } from './table.ts';

export interface Bucket {
  count: number;
  filtered_count: number;
}

export interface FacetValue extends Bucket {
  value: string;
}

export interface TermFacet {
  kind: 'term';
  categorical: boolean;
  selected: string[];
  values: FacetValue[];
  distinct: number | null;
  truncated: boolean;
  missing: Bucket | null;
}

export interface FacetBin extends Bucket {
  gte: number | string;
  lt: number | string;
}

export interface RangeFacet {
  kind: 'range';
  value_format?: 'YYYY-MM-DD';
  selected: { gte?: number | string; lte?: number | string } | null;
  min: number | string | null;
  max: number | string | null;
  bins: FacetBin[];
  missing: Bucket;
}

export type Facet = TermFacet | RangeFacet;

export interface CohortFacets {
  count: CountMode;
  totals: Counts;
  facets: Record<string, Facet>;
  filters_applied: FiltersApplied;
  warnings: string[];
  as_of?: string;
  computed_on?: string;
}
