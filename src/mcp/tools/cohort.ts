// Cohort tools: counts, a manifest page with download commands, and a bounded
// list of the cohort's object-store URLs (the lines of manifest.txt).

import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../core/context.ts';
import type { CompiledFilter, FilterObject } from '../../core/filters/v3.ts';
import { cohortCounts, cohortManifest } from '../../core/services/cohort.ts';
import { asOfCounts } from '../../core/services/as-of.ts';
import { AS_OF_DESCRIPTION } from '../../contract/release-schemas.ts';
import { manifestLines, type StoreKey } from '../../core/services/manifest.ts';
import { URL_COLUMN } from '../../core/services/manifest-columns.ts';
import { downloadCommands } from '../../contract/download-commands.ts';
import { applyLimit } from '../../contract/limits.ts';
import type { ToolLimits } from '../limits.ts';
import { defineTool, filterInput, filterOf, type ToolDef } from './types.ts';
import { namedRelease } from '../../core/releases.ts';

/** Result of get_cohort_urls: the lines and headers of POST /v3/cohort/manifest.txt as one object. */
export interface CohortUrls {
  source: StoreKey;
  /** Series matching the filter (X-Total-Count). */
  total: number;
  /** URLs returned (X-Returned-Count). */
  returned: number;
  /** True when the limit cut the list (X-Truncated). */
  truncated: boolean;
  /** Limit applied (X-Manifest-Limit). */
  limit: number;
  urls: string[];
  /** With columns: one object per series with those columns (the rows of manifest.txt's json format); urls is then empty. */
  rows?: Record<string, unknown>[];
  filters_applied: CompiledFilter['filters_applied'];
  warnings: string[];
  note: string;
  as_of?: string;
  computed_on?: string;
}

const asOfInput = { as_of: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: AS_OF_DESCRIPTION })) };

/** The lines of manifest.txt as one object: URLs read from the manifest's stream of lines (a bounded number of them). */
export async function cohortUrls(
  ctx: AppContext,
  req: { filters: FilterObject; source?: string; limit: number; warnings?: string[]; as_of?: string | number; columns?: string[] | string },
): Promise<CohortUrls> {
  const table = req.columns !== undefined;
  const m = await manifestLines(ctx, {
    filters: req.filters,
    source: req.source,
    limit: req.limit,
    ...(table ? { format: 'json', columns: req.columns } : {}),
    ...(req.as_of === undefined ? {} : { as_of: req.as_of }),
  });
  const urls: string[] = table ? [] : [...m.lines];
  const store = ctx.dataset.stores[m.store];
  return {
    source: m.store,
    total: m.total,
    returned: m.returned,
    truncated: m.truncated,
    limit: m.limit,
    urls,
    // Each line of the json format is one object, written by the engine.
    ...(table ? { rows: m.lines.map((l) => JSON.parse(l) as Record<string, unknown>) } : {}),
    filters_applied: m.filters_applied,
    warnings: [...m.warnings, ...(req.warnings ?? [])],
    note:
      `Public series folders in ${m.store} (${store.name}); no credentials are needed. Download one with ` +
      `s5cmd --no-sign-request --endpoint-url ${store.endpoint} cp '<url>' <folder>/. ` +
      (m.truncated ? `Only ${m.returned} of ${m.total} series are listed: narrow the filter, or use the commands of build_cohort for the full manifest.` : 'The list is complete.') +
      (m.as_of === undefined ? '' : ` These are the versions ${m.as_of} served (computed on ${m.computed_on}); a revised series' URL is its prior version's folder.`),
    ...(m.as_of === undefined ? {} : { as_of: m.as_of, computed_on: m.computed_on }),
  };
}

export function cohortTools(limits: ToolLimits): ToolDef[] {
  const { pageSize, urls } = limits;
  return [
    defineTool({
      capability: 'get_cohort_counts',
      title: 'Cohort counts',
      description:
        'Size a cohort before listing it: distinct patients, studies and series, instances and size (size_TB) for a filter. ' +
        'Check warnings: they flag values that exist only in another casing and ignored members. No filter gives whole-dataset totals.',
      input: { ...filterInput, ...asOfInput },
      run: (a, { ctx }) => (a.as_of === undefined ? cohortCounts(ctx, filterOf(a)) : asOfCounts(ctx, filterOf(a), a.as_of)),
    }),
    defineTool({
      capability: 'build_cohort',
      title: 'Cohort manifest page and download commands',
      description:
        'Counts, one page of matching series (collection, patient, study and series UIDs, modality, size, URL, license) and a download payload ' +
        '(URL preview and ready-to-run commands). Without a filter it pages the whole release (with a warning). Call get_cohort_counts first; ' +
        `keep page_size small (default ${pageSize.default}, at most ${pageSize.cap}) and page with page while has_more is true. ` +
        'Report the size and check get_licenses before suggesting a download; for the URLs alone use get_cohort_urls.',
      input: {
        ...filterInput,
        page: Type.Optional(Type.Integer({ minimum: 0, description: 'Page to return, 0-based (default 0).' })),
        page_size: Type.Optional(
          Type.Integer({ minimum: 1, description: `Series per page, default ${pageSize.default}; values above ${pageSize.cap} are lowered to ${pageSize.cap}.` }),
        ),
        include_rows: Type.Optional(Type.Boolean({ description: 'false: counts and download payload only, no series (default true).' })),
        ...asOfInput,
      },
      run: async (a, { ctx, apiBase }) => {
        const size = applyLimit('page_size', a.page_size, pageSize);
        const commands = downloadCommands(apiBase, ctx.dataset.stores, namedRelease(ctx));
        const r = await cohortManifest(
          ctx,
          { filters: filterOf(a), page: a.page, page_size: size.value, include_rows: a.include_rows, ...(a.as_of === undefined ? {} : { as_of: a.as_of }) },
          commands,
        );
        if (size.warning) r.warnings.push(`${size.warning} Use page to read further.`);
        return r;
      },
    }),
    defineTool({
      capability: 'get_cohort_urls',
      title: 'Cohort object-store URLs',
      description:
        'The public s3:// URLs of the series folders of a cohort (one per series, ending in /*), in manifest order, for cloud1 (default) or cloud2. ' +
        `Bounded: default ${urls.default}, at most ${urls.cap}; truncated=true means the cohort has more series (total says how many). ` +
        'No filter lists the whole release; size the cohort with get_cohort_counts first. ' +
        'With columns it returns rows instead (one object per series with those columns, e.g. SeriesInstanceUID, Modality, series_size_MB, url).',
      input: {
        ...filterInput,
        source: Type.Optional(Type.String({ description: 'Store: cloud1 (default) or cloud2; aws and gcs are accepted as their names.' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, description: `Most URLs to return, default ${urls.default}; values above ${urls.cap} are lowered to ${urls.cap}.` })),
        columns: Type.Optional(
          Type.Array(Type.String(), {
            minItems: 1,
            description: `Instead of URLs, rows: one object per series with these columns (any column of index, and ${URL_COLUMN}: the series URL in the chosen store), as manifest.txt's json format gives them.`,
          }),
        ),
        ...asOfInput,
      },
      run: (a, { ctx }) => {
        const l = applyLimit('limit', a.limit, urls);
        return cohortUrls(ctx, {
          filters: filterOf(a),
          source: a.source,
          limit: l.value,
          warnings: l.warning ? [l.warning] : [],
          ...(a.columns === undefined ? {} : { columns: a.columns }),
          ...(a.as_of === undefined ? {} : { as_of: a.as_of }),
        });
      },
    }),
  ];
}
