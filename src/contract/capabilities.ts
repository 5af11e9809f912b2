// How each surface exposes a capability: the REST route, the MCP tool (null
// when the capability is served over REST only, with the reason) and the CLI
// command where there is one. The one place that ties core capability ids to
// routes, tools and commands; errors are rendered and download commands
// written from it, and tests check it against the OpenAPI document and the
// tool list.

import type { CapabilityId } from '../core/capabilities.ts';

export interface Surfaces {
  /** Route, with path parameters written {name} as in the OpenAPI document. */
  rest: { method: 'GET' | 'POST'; path: string };
  /** Tool name; null with `restOnly` saying why there is none. */
  tool: string | null;
  restOnly?: string;
  /** The idqs command that does the same, when there is one. */
  cli?: string;
}

const get = (path: string, tool: string) => ({ rest: { method: 'GET' as const, path }, tool });
const post = (path: string, tool: string) => ({ rest: { method: 'POST' as const, path }, tool });

export const SURFACES: Record<CapabilityId, Surfaces> = {
  get_idc_version: get('/v3/version', 'get_idc_version'),
  list_releases: {
    rest: { method: 'GET', path: '/v3/releases' },
    tool: null,
    restOnly: 'an agent reads the releases served from get_idc_version (its releases member) and names one with the release argument every tool then takes',
  },
  get_stats: get('/v3/stats', 'get_stats'),
  list_collections: get('/v3/collections', 'list_collections'),
  get_collection: get('/v3/collections/{collection_id}', 'get_collection'),
  list_analysis_results: get('/v3/analysis_results', 'list_analysis_results'),
  list_attributes: get('/v3/attributes', 'list_attributes'),
  get_attribute_values: get('/v3/attributes/{attribute}/values', 'get_attribute_values'),
  list_tables: get('/v3/tables', 'list_tables'),
  get_table_schema: get('/v3/tables/{table}', 'get_table_schema'),
  list_clinical_tables: get('/v3/clinical/tables', 'list_clinical_tables'),
  get_clinical_table_schema: get('/v3/clinical/tables/{table}', 'get_clinical_table_schema'),
  get_clinical_table: get('/v3/clinical/tables/{table}/rows', 'get_clinical_table'),
  get_cohort_counts: post('/v3/cohort/counts', 'get_cohort_counts'),
  build_cohort: post('/v3/cohort/manifest', 'build_cohort'),
  get_cohort_urls: post('/v3/cohort/manifest.txt', 'get_cohort_urls'),
  get_cohort_facets: post('/v3/cohort/facets', 'get_cohort_facets'),
  get_cohort_table: {
    rest: { method: 'POST', path: '/v3/cohort/table' },
    tool: null,
    restOnly: 'serves the explorer\'s paged, sorted tables; an agent lists series with build_cohort or run_sql',
  },
  lookup_series: {
    rest: { method: 'POST', path: '/v3/series/lookup' },
    tool: null,
    restOnly: 'serves the downloader, which places the files of a manifest of URLs; an agent finds series with run_sql',
  },
  resolve_series: { ...post('/v3/series/resolve', 'resolve_series'), cli: 'idqs resolve' },
  get_cohort_changes: post('/v3/cohort/changes', 'get_cohort_changes'),
  run_sql: { ...post('/v3/sql', 'run_sql'), cli: 'idqs sql' },
  get_viewer_url: get('/v3/viewer-url', 'get_viewer_url'),
  get_citations: post('/v3/citations', 'get_citations'),
  get_licenses: post('/v3/licenses', 'get_licenses'),
};

/** The route of a capability as a message names it: "GET /v3/tables/index" (arguments not in the path go in the query). */
export function restRoute(id: CapabilityId, args: Record<string, string> = {}): string {
  const { method, path } = SURFACES[id].rest;
  const rest = { ...args };
  const filled = path.replace(/\{([A-Za-z_]+)\}/g, (whole, name: string) => {
    const v = rest[name];
    if (v === undefined) return whole;
    delete rest[name];
    return encodeURIComponent(v);
  });
  const query = new URLSearchParams(rest).toString();
  return `${method} ${filled}${query ? `?${query}` : ''}`;
}

/** The tool call of a capability as a message names it: 'get_table_schema {"table":"index"}' (its route when it has no tool). */
export function toolCall(id: CapabilityId, args?: Record<string, string>): string {
  const tool = SURFACES[id].tool;
  if (tool === null) return restRoute(id, args);
  return args && Object.keys(args).length > 0 ? `${tool} ${JSON.stringify(args)}` : tool;
}
