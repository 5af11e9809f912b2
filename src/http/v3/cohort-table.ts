// POST /v3/cohort/table: one sorted page of a cohort's collections, patients,
// studies or series, for browsing (the explorer's tables), over the core
// service src/core/services/cohort-table.ts.

import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_TABLE_PAGE, TABLE_LEVELS, cohortTable, type TableRequest } from '../../core/services/cohort-table.ts';
import { FilterSchema, FiltersApplied, Warnings } from '../../contract/filter-schema.ts';
import { applyLimit } from '../../contract/limits.ts';
import { errors } from './schemas.ts';

const TableBody = Type.Object(
  {
    filters: Type.Optional(FilterSchema),
    level: Type.Optional(Type.String({ default: 'series', description: `One row per: ${TABLE_LEVELS.join(', ')} (default series).` })),
    sort: Type.Optional(Type.String({ description: 'Column to sort on (any column of the level but the lists); default: the level’s identifiers in manifest order.' })),
    order: Type.Optional(Type.String({ default: 'asc', description: 'asc (default) or desc; missing values sort last either way.' })),
    page: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Page to return, 0-based.' })),
    page_size: Type.Optional(Type.Integer({ description: 'Rows per page, default 25; clamped to 1..IDQS_MAX_PAGE_SIZE (a warning says so).' })),
  },
  { additionalProperties: false, examples: [{ filters: { terms: { collection_id: ['nlst'] } }, level: 'studies', sort: 'series', order: 'desc', page: 0, page_size: 10 }] },
);

const TableResponse = Type.Object({
  level: Type.String(),
  columns: Type.Array(Type.String(), { description: 'Column names, in order.' }),
  rows: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
    description:
      'collections: collection_id, patients, studies, series, size_MB, modalities, licenses; patients: collection_id, PatientID, PatientSex, studies, series, size_MB, modalities; ' +
      'studies: collection_id, PatientID, StudyInstanceUID, StudyDate, StudyDescription, series, size_MB, modalities, viewer_url, volview_url; ' +
      'series: the identifiers, Modality, BodyPartExamined, SeriesDescription, SeriesNumber, SeriesDate, instanceCount, series_size_MB, license_short_name, viewer_url, volview_url ' +
      '(the links /v3/viewer-url gives: viewer_url Slim for studies with slide microscopy, else OHIF v3; volview_url the VolView link, null for SM, XC or a study in several buckets).',
  }),
  total: Type.Integer({ description: 'Rows of the level in the cohort.' }),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total_pages: Type.Integer(),
  sort: Type.Union([Type.String(), Type.Null()]),
  order: Type.String(),
  filters_applied: FiltersApplied,
  warnings: Warnings,
});

export async function cohortTableRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  app.post(
    '/cohort/table',
    {
      schema: {
        tags: ['cohort'],
        summary: 'Cohort table page',
        description:
          'One page of the cohort as a table of collections, patients, studies or series, sorted by any column (missing values last), with the total number of rows. ' +
          'Studies and series carry a viewer_url. An empty filter lists the whole release. For downloads use /v3/cohort/manifest and manifest.txt.',
        body: TableBody,
        response: { 200: TableResponse, ...errors(400, 422) },
      },
    },
    async (req) => {
      const b = (req.body ?? {}) as TableRequest;
      const size = applyLimit('page_size', b.page_size, { default: DEFAULT_TABLE_PAGE, cap: ctx.config.maxPageSize, min: 1 });
      const t = await cohortTable(ctx, { ...b, page_size: size.value });
      if (size.warning) t.warnings.push(size.warning);
      return t;
    },
  );
}
