// Routes over the releases of the data: resolving what a user saved (a
// manifest, a list of UIDs) against the served release.

import { constants as zlibConstants } from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { resolveText } from '../../core/services/resolve.ts';
import { resolveJsonBlocks, resolveTsvBlocks } from '../../core/services/resolve-output.ts';
import { changesTsv, cohortChanges } from '../../core/services/changes.ts';
import { ChangesBody, ChangesResponse } from '../../contract/release-schemas.ts';
import { applyLimit } from '../../contract/limits.ts';
import { ResolveBody, ResolveResponse } from '../../contract/resolve-schemas.ts';
import { errors } from './schemas.ts';
import { headerJson, holdExport, sendBlocks } from '../streams.ts';
import { resolveBodyParser, textLinesOf } from '../resolve-body.ts';

/** Bytes a line of a saved manifest may take on average (an s5cmd cp line with a deep destination) before the body is refused. */
const BYTES_PER_LINE = 512;

export async function releaseRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  const maxLines = ctx.config.resolveMaxLines;
  const first = await ctx.engine.one(`SELECT crdc_series_uuid FROM "index" ORDER BY crdc_series_uuid LIMIT 1`);
  // The body is read as it arrives, its text cut into lines and refused past the line limit there and then
  // (resolve-body.ts): parsing tens of MB in one piece would hold every other request. JSON only.
  await app.register(async (scope) => {
    scope.removeContentTypeParser(['application/json', 'text/plain']);
    scope.addContentTypeParser('application/json', resolveBodyParser({ maxLines, maxBytes: Math.max(ctx.config.bodyLimit, maxLines * BYTES_PER_LINE), otherBytes: ctx.config.bodyLimit }));
    resolveRoute(scope);
  });

  function resolveRoute(scope: FastifyInstance): void {
  scope.post<{ Body: Static<typeof ResolveBody> }>(
    '/series/resolve',
    {
      // The answer of a long manifest is tens of MB of repetitive JSON: the fastest levels still shrink it
      // about tenfold, at a fraction of the default levels' time. gzip is made on every core (sendBlocks'
      // gzipOnCores); br and deflate here, in output chunks of 64 KB rather than 16 KB: a quarter of the round
      // trips between the compressing thread and the event loop (about 10% less time).
      compress: {
        encodings: ['br', 'gzip', 'deflate'],
        zlibOptions: { level: 1, chunkSize: 1 << 16 },
        brotliOptions: { chunkSize: 1 << 16, params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } },
      },
      schema: {
        tags: ['cohort'],
        summary: 'Resolve a saved manifest or UID list',
        description:
          'What every line of a manifest or list saved from any release is in the served one: current, revised (another version of the series is current; ' +
          'the earlier one and its URL are given: its objects stay in the stores), removed (the last release that had it, and its URLs), unknown, ' +
          'a header, or invalid (not an identifier or URL, with the reason). Lines may be s5cmd cp lines (of the portal, the idc CLI or idqs), ' +
          `s3:// or gs:// URLs of either store, SeriesInstanceUIDs, StudyInstanceUIDs or crdc_series_uuids; # comments and blank lines are counted. At most ${maxLines} lines (413 beyond). ` +
          '"format": "tsv" answers the same lines as a tab-separated table (a # line with the release and the totals, the column names, a row per line): ' +
          'a fraction of the JSON, for long manifests.',
        body: { ...ResolveBody, examples: [{ text: `# saved manifest\ncp s3://idc-open-data/${String(first?.crdc_series_uuid ?? '00000000-0000-4000-8000-000000000000')}/* .\nnot-a-uid` }] },
        response: { 200: ResolveResponse, ...errors(400, 413, 422) },
      },
    },
    // Written out block by block: the schema documents the answer, but the serializer it would compile is many
    // times slower than JSON.stringify on the 100,000 lines a saved manifest can hold, and one string of it tens of MB.
    async (req, reply) => {
      const { format, ...body } = req.body;
      const textLines = textLinesOf(req.body);
      const r = await resolveText(ctx, textLines ? { textLines } : body, format === 'tsv' ? 'tsv' : 'json');
      if (format === 'tsv') {
        reply.type('text/tab-separated-values; charset=utf-8').header('Content-Disposition', `attachment; filename="idqs-resolve-${r.idc_version}.tsv"`);
        return sendBlocks(req, reply, resolveTsvBlocks(r), { gzipOnCores: true });
      }
      reply.type('application/json; charset=utf-8');
      return sendBlocks(req, reply, resolveJsonBlocks(r), { gzipOnCores: true });
    },
  );
  }

  app.post<{ Body: Static<typeof ChangesBody> }>(
    '/cohort/changes',
    {
      schema: {
        tags: ['cohort'],
        summary: 'What changed between two releases',
        description:
          'Series of a cohort added, revised (another version) and removed between two releases (from, and to: by default the served one), with counts and sizes, ' +
          'computed from the served release and its prior_versions_index. Filters take terms on collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID and Modality ' +
          '(what earlier releases record). format "tsv" returns every change as a tab-separated download, streamed (X-Total-Count: the changed series; ' +
          'streamed exports share a budget: 503 busy with Retry-After when full).',
        body: { ...ChangesBody, examples: [{ filters: { terms: { collection_id: ['nlst'] } }, from: 'v24', limit: 5 }] },
        response: { 200: ChangesResponse, ...errors(400, 413, 422, 503, 504) },
      },
    },
    async (req, reply) => {
      const { filters, from, to, format, by } = req.body;
      if (format === 'tsv') {
        await holdExport(req, reply);
        const tsv = await changesTsv(ctx, { filters, from, to });
        reply
          .type('text/tab-separated-values; charset=utf-8')
          .header('X-Total-Count', String(tsv.total))
          .header('X-Filter-Warnings', headerJson(tsv.warnings))
          .header('Content-Disposition', `attachment; filename="idqs-changes-${String(from)}-${String(to ?? ctx.dataset.release)}.tsv"`);
        return sendBlocks(req, reply, tsv.body);
      }
      const limit = applyLimit('limit', req.body.limit, { default: 100, cap: ctx.config.maxPageSize });
      const r = await cohortChanges(ctx, { filters, from, to, limit: limit.value, ...(by === undefined ? {} : { by }) });
      return { ...r, warnings: [...r.warnings, ...(limit.warning ? [limit.warning] : [])] };
    },
  );
}
