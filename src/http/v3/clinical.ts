// Per-collection clinical tables: list, schema with labels and coded values,
// and capped rows.

import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { clinicalRows, clinicalTableSchema, listClinicalTables } from '../../core/services/clinical.ts';
import { applyLimit, restLimits } from '../../contract/limits.ts';
import { errors } from './schemas.ts';

const ClinicalTableList = Type.Object({
  tables: Type.Array(
    Type.Object({
      table_name: Type.String({ description: 'Short name of the table; the {table} of the other clinical routes.' }),
      sql_path: Type.String({ description: 'Name to use in SQL: clinical.<table_name>.' }),
      collection_id: Type.Union([Type.String(), Type.Null()], {
        description: 'Collection the table belongs to (join to index.collection_id); null when the dictionary clinical_index does not describe the table.',
      }),
      column_count: Type.Integer({ description: 'Number of columns of the table as served.' }),
      description: Type.String(),
      row_count: Type.Integer({ description: 'Number of rows of the table.' }),
    }),
  ),
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'Present when the collection filter matched nothing, saying why.' })),
});

const ClinicalSchema = Type.Object({
  name: Type.String({ description: 'Name to use in SQL: clinical.<table>.' }),
  description: Type.String(),
  columns: Type.Array(
    Type.Object({
      name: Type.String(),
      type: Type.String({ description: 'Type of the column in the SQL engine (VARCHAR, BIGINT, DOUBLE, ...).' }),
      description: Type.String({ description: 'The column label from clinical_index, or "" when undocumented (the public service\'s name for label).' }),
      label: Type.String({ description: 'Human-readable label from clinical_index, or "" when undocumented.' }),
      values: Type.Array(
        Type.Object({
          code: Type.Union([Type.String(), Type.Null()], { description: 'Value as stored in the column.' }),
          description: Type.Union([Type.String(), Type.Null()], { description: 'Meaning of the code.' }),
        }),
        { description: 'Meaning of coded values; empty when the column is not coded.' },
      ),
    }),
  ),
});

const RowsResult = Type.Object({
  columns: Type.Array(Type.String(), { description: 'Column names in table order.' }),
  types: Type.Array(Type.String(), { description: 'Engine type of each column, in the order of columns.' }),
  rows: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'One object per row keyed by column name.' }),
  row_count: Type.Integer({ description: 'Number of rows returned.' }),
  truncated: Type.Boolean({ description: 'True when the table has more rows than max_rows: raise max_rows or filter with POST /v3/sql.' }),
  max_rows: Type.Integer({ description: 'The row cap that was applied.' }),
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'Present when max_rows above its cap was lowered.' })),
});

export async function clinicalRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  const limits = restLimits(ctx.config);
  const { default: clinicalMaxRows, cap: clinicalMaxRowsCap } = limits.clinicalRows;
  const present = ctx.catalog.clinicalTables;
  const exampleTable = present.includes('nlst_canc') ? 'nlst_canc' : present[0];
  let exampleCollection = 'nlst';
  if (exampleTable) {
    const listed = await listClinicalTables(ctx);
    exampleCollection = listed.tables.find((t) => t.table_name === exampleTable && t.collection_id !== null)?.collection_id ?? exampleCollection;
  }
  const tableExamples = exampleTable ? { examples: [exampleTable] } : {};

  const ListQuery = Type.Object(
    {
      collection_id: Type.Optional(
        Type.String({ description: 'Only the tables of this collection (case-sensitive); empty or absent lists every table.', examples: [exampleCollection] }),
      ),
    },
    { additionalProperties: false },
  );
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/clinical/tables',
    {
      config: { cacheable: true },
      schema: {
        tags: ['clinical'],
        summary: 'List clinical tables',
        description:
          'Per-collection clinical (non-imaging) tables present in this build, ordered by collection_id then table_name, with the name to use in SQL, ' +
          'the number of columns and rows. Clinical data is not harmonized across collections: read a table’s columns with GET /v3/clinical/tables/{table}. ' +
          'An unknown collection_id gives an empty list with a warning; a build without clinical tables answers 404.',
        querystring: ListQuery,
        response: { 200: ClinicalTableList, ...errors(404, 422) },
      },
    },
    async (req) => listClinicalTables(ctx, req.query.collection_id),
  );

  const TableParams = Type.Object({
    table: Type.String({ description: 'Clinical table name as listed by GET /v3/clinical/tables (table_name; clinical.<table> is accepted too).', ...tableExamples }),
  });
  app.get<{ Params: Static<typeof TableParams> }>(
    '/clinical/tables/:table',
    {
      config: { cacheable: true },
      schema: {
        tags: ['clinical'],
        summary: 'Clinical table schema',
        description:
          'Columns of a clinical table with their engine types, human-readable labels and the meaning of coded values (from clinical_index). ' +
          'Join clinical rows to imaging with dicom_patient_id = index.PatientID. An unknown table is a 404 that suggests close names.',
        params: TableParams,
        response: { 200: ClinicalSchema, ...errors(404) },
      },
    },
    async (req) => clinicalTableSchema(ctx, req.params.table),
  );

  const RowsQuery = Type.Object(
    {
      max_rows: Type.Optional(
        Type.Integer({
          minimum: 1,
          default: clinicalMaxRows,
          description: `Maximum number of rows to return, 1 to ${clinicalMaxRowsCap} (default ${clinicalMaxRows}); above ${clinicalMaxRowsCap} is lowered to it, with a warning.`,
          examples: [Math.min(100, clinicalMaxRowsCap)],
        }),
      ),
    },
    { additionalProperties: false },
  );
  app.get<{ Params: Static<typeof TableParams>; Querystring: Static<typeof RowsQuery> }>(
    '/clinical/tables/:table/rows',
    {
      config: { cacheable: true },
      schema: {
        tags: ['clinical'],
        summary: 'Read clinical table rows',
        description:
          'Rows of a clinical table ordered by dicom_patient_id (then every column), at most max_rows of them; truncated says whether more exist. ' +
          'To select or aggregate rows, or join them to imaging, use POST /v3/sql on clinical.<table>.',
        params: TableParams,
        querystring: RowsQuery,
        response: { 200: RowsResult, ...errors(404, 422) },
      },
    },
    async (req) => {
      const maxRows = applyLimit('max_rows', req.query.max_rows, limits.clinicalRows);
      const body = await clinicalRows(ctx, req.params.table, maxRows.value);
      return maxRows.warning ? { ...body, warnings: [maxRows.warning] } : body;
    },
  );
}
