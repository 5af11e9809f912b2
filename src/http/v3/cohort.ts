// Cohort routes: counts, a manifest page with download commands, the full
// plain-text manifest (streamed), the license breakdown, and the look-up of
// series by their folder.

import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FilterObject } from '../../core/filters/v3.ts';
import { cohortCounts, cohortManifest } from '../../core/services/cohort.ts';
import { startCohortIndex } from '../../core/services/cohort-index/build.ts';
import { cohortLicenses } from '../../core/services/licenses.ts';
import { MANIFEST_ORDER, manifestText } from '../../core/services/manifest.ts';
import { CONTENT_TYPES, DEFAULT_MANIFEST_COLUMNS, isTableFormat, URL_COLUMN } from '../../core/services/manifest-columns.ts';
import { lookupSeries } from '../../core/services/series.ts';
import { asOfCounts } from '../../core/services/as-of.ts';
import { AS_OF_DESCRIPTION, AsOfNames, CountsBody } from '../../contract/release-schemas.ts';
import { FilterSchema, FiltersApplied, Warnings, unwrapFilters } from '../../contract/filter-schema.ts';
import { LicenseItem, ManifestRow, SeriesLookupBody, SeriesLookupResponse, Stores } from '../../contract/cohort-schemas.ts';
import { downloadCommands } from '../../contract/download-commands.ts';
import { applyLimit, restLimits } from '../../contract/limits.ts';
import { publicBase } from '../../contract/public-base.ts';
import { errors } from './schemas.ts';
import { headerJson, holdExport, sendBlocks } from '../streams.ts';
import { namedRelease } from '../../core/releases.ts';

const EXAMPLE_FILTER = { terms: { collection_id: ['nlst'], Modality: ['CT'] } };

const countFields = {
  patients: Type.Integer({ description: 'Distinct patients.' }),
  studies: Type.Integer({ description: 'Distinct studies.' }),
  series: Type.Integer({ description: 'Series (rows of index).' }),
  instances: Type.Integer({ description: 'Sum of instanceCount.' }),
  size_TB: Type.Number({ description: 'Size in decimal terabytes (MB / 1e6), six decimals.' }),
  size_MB: Type.Number({ description: 'Size in decimal megabytes.' }),
};

export const Counts = Type.Object(countFields);
const CountsResponse = Type.Object({
  ...countFields,
  filters_applied: FiltersApplied,
  warnings: Warnings,
  sql: Type.Optional(
    Type.String({
      description:
        'The cohort as one read-only SELECT over index with its values written in: run it, or build on it, with POST /v3/sql, e.g. WITH cohort AS (<sql>) SELECT Modality, count(*) FROM cohort GROUP BY 1. Absent with as_of (an earlier release\'s cohort is not a SELECT over index).',
    }),
  ),
  as_of: Type.Optional(Type.String({ description: 'With as_of: the release counted.' })),
  computed_on: Type.Optional(Type.String({ description: 'With as_of: the release whose data answered.' })),
});

const Download = Type.Object({
  total_series: Type.Integer(),
  idc_commands: Type.Array(Type.String(), {
    description:
      'Commands of the idc CLI (pip install idc-index), as the public service returns them: `idc download <collection_id> --download-dir ./idc-data` per collection ' +
      'when the filter is collection_id alone, then saving the manifest as idc_manifest.txt and `idc download idc_manifest.txt --download-dir ./idc-data`. ' +
      'idqs download accepts the same forms.',
  }),
  size_TB: Type.Number(),
  size_MB: Type.Number(),
  manifest_preview: Type.Array(Type.String(), { description: 'The first 5 cloud1 URLs of the cohort, in manifest order.' }),
  manifest_truncated: Type.Boolean({ description: 'True when the cohort has more series than the manifest cap, so manifest.txt cannot list them all.' }),
  commands: Type.Object({
    idqs: Type.Array(Type.String(), {
      description:
        'idqs downloader commands (each names this API with --api), alternatives: the per-collection lines (present when the filter is collection_id alone), or the --filters line, or the --manifest line after save_manifest.',
    }),
    save_manifest: Type.String({ description: 'curl command saving the cloud1 URL manifest (POST /v3/cohort/manifest.txt) as idqs_manifest.txt.' }),
    s5cmd_cloud1: Type.Array(Type.String(), { description: 'Two steps, in order: save the s5cmd manifest for cloud1, then run it with s5cmd.' }),
    s5cmd_cloud2: Type.Array(Type.String(), { description: 'Two steps, in order: save the s5cmd manifest for cloud2, then run it against its S3-compatible endpoint.' }),
  }),
  stores: Stores,
  note: Type.String(),
});

const ManifestResponse = Type.Object({
  counts: Counts,
  page: Type.Integer({ description: 'Page returned (0-based).' }),
  page_size: Type.Integer({ description: 'Effective page size after clamping.' }),
  returned: Type.Integer({ description: 'Series in this page.' }),
  total_series: Type.Integer(),
  total_pages: Type.Integer(),
  has_more: Type.Boolean({ description: 'True when a later page has series.' }),
  series: Type.Array(ManifestRow, { description: 'Ordered by collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID.' }),
  download: Download,
  filters_applied: FiltersApplied,
  warnings: Warnings,
  ...AsOfNames,
});

const LicensesResponse = Type.Object({
  licenses: Type.Array(LicenseItem, { description: 'Ordered by series (descending), then name.' }),
  commercial_use_allowed_for_all: Type.Boolean({ description: 'True only when the cohort is not empty and every license allows commercial use.' }),
  filters_applied: FiltersApplied,
  warnings: Warnings,
  ...AsOfNames,
});

const MANIFEST_TEXT_HEADERS = {
  'X-Total-Count': { type: 'integer', description: 'Series matching the filter.' },
  'X-Returned-Count': { type: 'integer', description: 'Series lines in the body: min(X-Total-Count, X-Manifest-Limit).' },
  'X-Truncated': { type: 'string', enum: ['true', 'false'], description: 'true when the limit cut the manifest.' },
  'X-Manifest-Limit': { type: 'string', description: 'Effective limit after clamping to the manifest cap (an integer), or "none": the whole cohort.' },
  'X-Filter-Warnings': { type: 'string', description: 'JSON array of warnings (as in the JSON routes), present only when there are any.' },
  'X-As-Of': { type: 'string', description: 'With as_of: the release listed (v<number>); an s5cmd run file also names it in its first (comment) line.' },
  'X-Computed-On': { type: 'string', description: 'With as_of: the release whose data answered.' },
};

/** The command lines of a download payload, calling this API back where the caller reached it. */
const commandsFor = (req: FastifyRequest) => downloadCommands(publicBase(req.server.ctx.config, req), req.server.ctx.dataset.stores, namedRelease(req.server.ctx));

export async function cohortRoutes(app: FastifyInstance): Promise<void> {
  // The cohort index is read from its file (started now, while the routes compile) and awaited before
  // listening; without a file it is built in the background (counts by SQL until it is ready).
  const starting = startCohortIndex(app.ctx);
  app.addHook('onReady', () => starting);
  const ctx = app.ctx;
  const limits = restLimits(ctx.config);
  const { default: pageSize, cap: maxPageSize } = limits.pageSize;
  const manifestCap = limits.manifestLines.cap;
  /** IDQS_MANIFEST_CAP is set: manifests stop there (else the whole cohort). */
  const capped = ctx.config.manifestCap > 0;

  app.post(
    '/cohort/counts',
    {
      schema: {
        tags: ['cohort'],
        summary: 'Cohort counts',
        description:
          'Distinct patients, studies and series, instances and size for a filter. The body is the filter itself ({terms, ranges}); {"filters": {...}} is accepted too. ' +
          'An empty filter ({}) gives whole-dataset totals (with a warning). Call this before asking for a manifest.',
        body: CountsBody,
        response: { 200: CountsResponse, ...errors(400, 422) },
      },
    },
    async (req) => {
      const { as_of, ...filter } = req.body as Static<typeof CountsBody>;
      return as_of === undefined ? cohortCounts(ctx, unwrapFilters(filter)) : asOfCounts(ctx, unwrapFilters(filter), as_of);
    },
  );

  const ManifestBody = Type.Object(
    {
      // Optional in the schema so that a body sent unwrapped ({"terms": ...}) is told about the member it
      // lacks the wrapper for; a missing filter is refused by the service like an empty one.
      filters: Type.Optional(FilterSchema),
      page: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Page to return, 0-based.' })),
      page_size: Type.Optional(
        Type.Integer({ default: pageSize, description: `Series per page, default ${pageSize}; clamped to 1..${maxPageSize} (a warning says so).` }),
      ),
      include_rows: Type.Optional(Type.Boolean({ default: true, description: 'false: counts and download payload only, no series rows.' })),
      as_of: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: AS_OF_DESCRIPTION })),
    },
    { additionalProperties: false, examples: [{ filters: EXAMPLE_FILTER, page: 0, page_size: 50 }] },
  );
  app.post(
    '/cohort/manifest',
    {
      schema: {
        tags: ['cohort'],
        summary: 'Cohort manifest page and download commands',
        description:
          'Counts, one page of matching series (ordered by collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID) and a download payload: ' +
          'a preview of the object-store URLs and ready-to-run commands of the idqs downloader and of s5cmd for both stores. ' +
          'At least one filter is required (use /v3/cohort/counts for whole-dataset totals). Check size and licenses before downloading.',
        body: ManifestBody,
        response: { 200: ManifestResponse, ...errors(400, 422) },
      },
    },
    async (req) => {
      const b = req.body as { filters?: FilterObject; page?: number; page_size?: number; include_rows?: boolean; as_of?: string | number };
      const size = applyLimit('page_size', b.page_size, limits.pageSize);
      const page = await cohortManifest(ctx, { ...b, page_size: size.value }, commandsFor(req));
      if (size.warning) page.warnings.push(size.warning);
      return page;
    },
  );

  const ManifestTextBody = Type.Object(
    {
      filters: Type.Optional(FilterSchema),
      source: Type.Optional(
        Type.String({ default: 'cloud1', description: 'Store whose URLs to list: cloud1 (default) or cloud2; aws and gcs are accepted as their names.' }),
      ),
      limit: Type.Optional(
        Type.Integer(
          capped
            ? { minimum: 1, default: manifestCap, description: `Most series lines, default and cap ${manifestCap} (larger values are clamped). A cut list ends with a # line saying how many series were left out.` }
            : { minimum: 1, description: 'Most series lines; by default the whole cohort. A cut list ends with a # line saying how many series were left out.' },
        ),
      ),
      format: Type.Optional(
        Type.String({
          default: 'urls',
          description:
            'urls (one s3:// URL per line), s5cmd (a cp command per series into idqs-data/<collection_id>/<PatientID>/<StudyInstanceUID>/<SeriesInstanceUID>/, for s5cmd run), ' +
            'or a table of the series with the chosen columns: csv (a header row, then every value quoted), tsv (a header row; tabs and line breaks in values become spaces) or json (an array of objects).',
        }),
      ),
      columns: Type.Optional(
        Type.Union([Type.Array(Type.String(), { minItems: 1 }), Type.String()], {
          description: `With format csv, tsv or json: the columns, in order, as a list or one string of names separated by commas: any column of index (GET /v3/tables/index) and ${URL_COLUMN} (the series URL in the chosen source). Default: ${DEFAULT_MANIFEST_COLUMNS.join(', ')}.`,
        }),
      ),
      as_of: Type.Optional(
        Type.Union([Type.String(), Type.Integer()], { description: `${AS_OF_DESCRIPTION} Each line is the URL of the version that release served (a prior version's URL when the series was revised since).` }),
      ),
    },
    { additionalProperties: false, examples: [{ filters: EXAMPLE_FILTER, source: 'cloud1', limit: 1000 }] },
  );
  app.post(
    '/cohort/manifest.txt',
    {
      schema: {
        tags: ['cohort'],
        summary: 'Cohort manifest (plain text)',
        description:
          'The full manifest as text/plain, streamed: one s3:// series URL per line (s3://<bucket>/<crdc_series_uuid>/*), in manifest-page order. ' +
          'source=cloud2 lists the buckets of the second store, reached through its S3-compatible endpoint (URLs keep s3://). ' +
          'format=s5cmd emits a cp line per series, preceded by a # comment with the s5cmd command to run the file. ' +
          'format=csv, tsv or json gives a table of the series instead, with the columns named in columns (text/csv, text/tab-separated-values, application/json; no comment lines: the headers say whether it is complete). ' +
          'Headers X-Total-Count, X-Returned-Count, X-Truncated and X-Manifest-Limit say whether the list is complete; the body of format urls is URLs only, one per line, whatever the request; an s5cmd run file cut by limit (or by the server\'s IDQS_MANIFEST_CAP, unset by default) also ends with a comment line "# Truncated: ..." saying how many series were left out. An empty filter lists the whole release (X-Filter-Warnings says so). ' +
          'A manifest that fails half-way ends with a line starting "# ERROR:" and an aborted transfer, never a clean end. ' +
          'Streamed exports share a budget (503 busy with Retry-After when full); a client that stops reading is cut after the write deadline.',
        body: ManifestTextBody,
        response: {
          200: {
            description: 'The manifest, one line per series.',
            headers: MANIFEST_TEXT_HEADERS,
            content: Object.fromEntries(['text/plain', ...Object.values(CONTENT_TYPES).map((t) => t.split(';')[0]!)].map((t) => [t, { schema: Type.String() }])),
          },
          ...errors(400, 422, 503, 504),
        },
      },
    },
    async (req, reply) => {
      const b = req.body as { filters?: FilterObject; source?: string; limit?: number; format?: string; columns?: string | string[]; as_of?: string | number };
      const limit = applyLimit('limit', b.limit, limits.manifestLines);
      await holdExport(req, reply);
      const m = await manifestText(ctx, { ...b, limit: limit.value });
      if (limit.warning) m.warnings.push(limit.warning);
      reply.header('Content-Type', isTableFormat(m.format) ? CONTENT_TYPES[m.format] : 'text/plain; charset=utf-8');
      reply.header('X-Total-Count', String(m.total));
      reply.header('X-Returned-Count', String(m.returned));
      reply.header('X-Truncated', String(m.truncated));
      reply.header('X-Manifest-Limit', m.limit === Number.MAX_SAFE_INTEGER ? 'none' : String(m.limit));
      if (m.warnings.length > 0) reply.header('X-Filter-Warnings', headerJson(m.warnings));
      if (m.as_of !== undefined) reply.header('X-As-Of', m.as_of).header('X-Computed-On', m.computed_on);
      return sendBlocks(req, reply, m.body);
    },
  );

  app.post(
    '/licenses',
    {
      schema: {
        tags: ['tools'],
        summary: 'Cohort license breakdown',
        description:
          'Series and size per license for a filter, with the license’s long name and URL where known and whether commercial use is allowed. ' +
          'The body is the filter itself ({terms, ranges}); {"filters": {...}} is accepted too. Check this before downloading or publishing.',
        body: CountsBody,
        response: { 200: LicensesResponse, ...errors(400, 422) },
      },
    },
    async (req) => {
      const { as_of, ...filter } = req.body as Static<typeof CountsBody>;
      return cohortLicenses(ctx, unwrapFilters(filter), as_of);
    },
  );

  // An example that resolves against the served data: the first series of the manifest order.
  // Within the first collection first (its row groups only: a fraction of the cold read and sort on the start path); else all.
  const where = 'crdc_series_uuid IS NOT NULL';
  const first =
    (await ctx.engine.one(`SELECT crdc_series_uuid FROM "index" WHERE ${where} AND collection_id = (SELECT min(collection_id) FROM "index" WHERE ${where}) ORDER BY ${MANIFEST_ORDER} LIMIT 1`)) ??
    (await ctx.engine.one(`SELECT crdc_series_uuid FROM "index" WHERE ${where} ORDER BY ${MANIFEST_ORDER} LIMIT 1`));
  const lookupExample = first ? [String(first.crdc_series_uuid)] : [];
  app.post<{ Body: Static<typeof SeriesLookupBody> }>(
    '/series/lookup',
    {
      schema: {
        tags: ['cohort'],
        summary: 'Look up series by folder',
        description:
          'The series whose folder in the buckets (crdc_series_uuid, the <uuid> of the manifest URL s3://<bucket>/<uuid>/*) is given: their manifest rows, ' +
          'their size and license breakdown, and the stores. UUIDs no series has are listed in missing. The downloader reads manifests through it.',
        body: { ...SeriesLookupBody, examples: [{ crdc_series_uuid: lookupExample }] },
        response: { 200: SeriesLookupResponse, ...errors(400, 422) },
      },
    },
    async (req) => lookupSeries(ctx, req.body.crdc_series_uuid),
  );
}
