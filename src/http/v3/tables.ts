// Tables reachable by SQL and their column schemas.

import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { listTables, tableSchema } from '../../core/services/tables.ts';
import { errors } from './schemas.ts';
import { immutableAnswer } from '../immutable-answer.ts';

const TableList = Type.Object({
  tables: Type.Array(
    Type.Object({
      name: Type.String({ description: 'Name to use in SQL (the main table is index).' }),
      description: Type.String(),
      column_count: Type.Integer({ description: 'Number of columns of the table as served.' }),
    }),
  ),
});

const TableSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  columns: Type.Array(
    Type.Object({
      name: Type.String(),
      type: Type.String({
        description:
          "BigQuery-style type (STRING, INTEGER, FLOAT, BOOLEAN); [] marks a list: match its elements with list_contains(column, 'value'), not = or LIKE. " +
          'A struct column shows its fields, e.g. STRUCT(data_contributor VARCHAR, ...) or STRUCT(...)[] for a list of structs: select them as column.field.',
      }),
      engine_type: Type.String({ description: 'Type of the column in the SQL engine (e.g. VARCHAR, BIGINT, VARCHAR[]).' }),
      description: Type.String(),
    }),
  ),
});

export async function tableRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;

  app.get(
    '/tables',
    {
      config: { cacheable: true },
      compress: false, // sent pre-compressed (immutable-answer.ts)
      schema: {
        tags: ['query'],
        summary: 'List queryable tables',
        description:
          'Tables available to POST /v3/sql, with a description and the number of columns. index has one row per series; ' +
          'specialized tables are named <modality>_index and join to index on SeriesInstanceUID. ' +
          'Per-collection clinical tables are not listed here: discover them with GET /v3/clinical/tables and query them as clinical.<table>.',
        response: { 200: TableList },
      },
    },
    immutableAnswer(ctx, listTables),
  );

  const TableParams = Type.Object({
    table: Type.String({ description: 'Table name as listed by GET /v3/tables (case-sensitive).', examples: ['index'] }),
  });
  app.get<{ Params: Static<typeof TableParams> }>(
    '/tables/:table',
    {
      config: { cacheable: true },
      schema: {
        tags: ['query'],
        summary: 'Table schema',
        description:
          'Columns of one table with their types and descriptions. Types ending in [] are lists (e.g. seg_index.SegmentedPropertyType_CodeMeanings is STRING[]): ' +
          "use list_contains(column, 'value') in SQL. An unknown table is a 404 that lists the available tables.",
        params: TableParams,
        response: { 200: TableSchema, ...errors(404) },
      },
    },
    async (req) => tableSchema(ctx, req.params.table),
  );
}
