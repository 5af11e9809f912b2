// What the service can do, by stable id. Core code names a capability by its
// id (an error that says where to look next, for example); each surface says
// it in its own words: REST a route, MCP a tool, the CLI a command. Which
// route, tool and command belong to an id is written in src/contract/capabilities.ts.

export const CAPABILITY_IDS = [
  'get_idc_version',
  'list_releases',
  'get_stats',
  'list_collections',
  'get_collection',
  'list_analysis_results',
  'list_attributes',
  'get_attribute_values',
  'list_tables',
  'get_table_schema',
  'list_clinical_tables',
  'get_clinical_table_schema',
  'get_clinical_table',
  'get_cohort_counts',
  'build_cohort',
  'get_cohort_urls',
  'get_cohort_facets',
  'get_cohort_table',
  'lookup_series',
  'resolve_series',
  'get_cohort_changes',
  'run_sql',
  'get_viewer_url',
  'get_citations',
  'get_licenses',
] as const;

export type CapabilityId = (typeof CAPABILITY_IDS)[number];
