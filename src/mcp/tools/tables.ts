// Tables reachable by SQL, their schemas, and the per-collection clinical
// tables (list, schema, rows).

import { Type } from '@sinclair/typebox';
import { clinicalRows, clinicalTableSchema, listClinicalTables } from '../../core/services/clinical.ts';
import { listTables, tableSchema } from '../../core/services/tables.ts';
import { applyLimit } from '../../contract/limits.ts';
import type { ToolLimits } from '../limits.ts';
import { defineTool, type ToolDef } from './types.ts';

export function tableTools(limits: ToolLimits): ToolDef[] {
  const { clinicalRows: rows } = limits;
  return [
    defineTool({
      capability: 'list_tables',
      title: 'List tables for SQL',
      description:
        'Tables available to run_sql, with descriptions and column counts. index has one row per series (the main table); specialized tables are named ' +
        '<modality>_index (e.g. seg_index: what a segmentation segments; ct_index, mr_index: acquisition details) and join to index on SeriesInstanceUID. ' +
        'Call this, then get_table_schema, before writing SQL. Clinical tables are listed by list_clinical_tables.',
      input: {},
      run: (_a, { ctx }) => listTables(ctx),
    }),
    defineTool({
      capability: 'get_table_schema',
      title: 'Table schema',
      description:
        'Columns of one table with types and descriptions. Call before run_sql so that column names are right. ' +
        "Types ending in [] are lists: match elements with list_contains(column, 'value'), not = or LIKE.",
      input: {
        table: Type.String({ description: 'Table name as listed by list_tables, e.g. "index".' }),
      },
      run: (a, { ctx }) => tableSchema(ctx, a.table),
    }),
    defineTool({
      capability: 'list_clinical_tables',
      title: 'List clinical tables',
      description:
        'Per-collection clinical (non-imaging) tables with their collection, column and row counts. Call before any clinical question: clinical data is not ' +
        'harmonized across collections. Query a table in run_sql as clinical.<table_name>; join to imaging with dicom_patient_id = index.PatientID.',
      input: {
        collection_id: Type.Optional(Type.String({ description: 'Only the tables of this collection (case-sensitive); omit to list every table.' })),
      },
      run: (a, { ctx }) => listClinicalTables(ctx, a.collection_id),
    }),
    defineTool({
      capability: 'get_clinical_table_schema',
      title: 'Clinical table schema',
      description: 'Columns of a clinical table with engine types, human-readable labels and the meaning of coded values. Read it before querying the table.',
      input: {
        table: Type.String({ description: 'Clinical table name (table_name from list_clinical_tables; clinical.<table> is accepted too).' }),
      },
      run: (a, { ctx }) => clinicalTableSchema(ctx, a.table),
    }),
    defineTool({
      capability: 'get_clinical_table',
      title: 'Read clinical table rows',
      description:
        'The first rows of a clinical table, ordered by dicom_patient_id; truncated=true means more rows exist. ' +
        `Keep max_rows small (default ${rows.default}, at most ${rows.cap}); to filter, aggregate or join, use run_sql on clinical.<table>.`,
      input: {
        table: Type.String({ description: 'Clinical table name (table_name from list_clinical_tables).' }),
        max_rows: Type.Optional(Type.Integer({ minimum: 1, description: `Most rows to return, default ${rows.default}; values above ${rows.cap} are lowered to ${rows.cap}.` })),
      },
      run: (a, { ctx }) => clinicalRows(ctx, a.table, applyLimit('max_rows', a.max_rows, rows).value),
    }),
  ];
}
