// run_sql: the twin of POST /v3/sql, with a row cap suited to a model.

import { Type } from '@sinclair/typebox';
import { runSql } from '../../core/services/sql.ts';
import { applyLimit } from '../../contract/limits.ts';
import type { ToolLimits } from '../limits.ts';
import { defineTool, type ToolDef } from './types.ts';

export function sqlTools(limits: ToolLimits): ToolDef[] {
  const { sqlRows } = limits;
  return [
    defineTool({
      capability: 'run_sql',
      title: 'Run read-only SQL',
      description:
        'Runs one read-only SELECT (or WITH ... SELECT) statement and returns rows as objects. Ground names first: list_tables and get_table_schema ' +
        '(main table index, one row per series; clinical tables as clinical.<table>). Engine errors come back verbatim with their "Did you mean" suggestions: fix and retry. ' +
        `Keep max_rows small (default ${sqlRows.default}, at most ${sqlRows.cap}) and aggregate in SQL; truncated=true means rows were cut, ` +
        'false means the result is complete. For whole cohorts of series use the cohort tools.',
      input: {
        sql: Type.String({
          description: "One SELECT/WITH statement, e.g. SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC. List columns (STRING[]) need list_contains(column, 'value').",
        }),
        max_rows: Type.Optional(Type.Integer({ minimum: 1, description: `Most rows to return, default ${sqlRows.default}; values above ${sqlRows.cap} are lowered to ${sqlRows.cap}.` })),
        engine: Type.Optional(
          Type.Union([Type.Literal('duckdb'), Type.Literal('trino')], {
            description: 'duckdb (default, the embedded engine) or trino (the configured Trino cluster, its own SQL dialect; column names lower-cased).',
          }),
        ),
      },
      run: (a, { ctx }) => runSql(ctx, a.sql, applyLimit('max_rows', a.max_rows, sqlRows).value, a.engine ?? 'duckdb'),
    }),
  ];
}
