// POST /v3/sql: one read-only SELECT/WITH statement of the caller's.

import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { runSqlJson } from '../../core/services/sql.ts';
import { sqlLogValue } from '../../core/sql-log.ts';
import { applyLimit, restLimits } from '../../contract/limits.ts';
import { errors } from './schemas.ts';

export const SQL_EXAMPLE = { sql: 'SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC', max_rows: 20 };

export async function sqlRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  const { sqlTimeoutMs } = ctx.config;
  const limits = restLimits(ctx.config);
  const { default: sqlMaxRows, cap: sqlMaxRowsCap } = limits.sqlRows;
  const seconds = Number((sqlTimeoutMs / 1000).toFixed(3));

  const SqlBody = Type.Object(
    {
      sql: Type.String({
        description:
          'Exactly one read-only statement beginning with SELECT or WITH (comments allowed; one trailing ";" allowed). ' +
          'Tables are referenced by their names from GET /v3/tables (the main table is index); clinical tables as clinical.<table>. ' +
          "Columns of type STRING[] hold lists: match elements with list_contains(column, 'value').",
        examples: [SQL_EXAMPLE.sql],
      }),
      max_rows: Type.Optional(
        Type.Integer({
          minimum: 1,
          description: `Maximum number of rows to return. Default ${sqlMaxRows}; values above the ceiling ${sqlMaxRowsCap} are lowered to it (the response reports the cap applied). Keep it small while exploring.`,
          examples: [SQL_EXAMPLE.max_rows],
        }),
      ),
      engine: Type.Optional(
        Type.Union([Type.Literal('duckdb'), Type.Literal('trino')], {
          description:
            'Which engine runs it: duckdb (the default, embedded) or trino (the cluster of IDQS_TRINO_URL; a 503 when none is configured, a 503 with Retry-After when it is down). ' +
            'Trino speaks its own SQL dialect; column names come back lower-cased; its answers are not cached.',
        }),
      ),
    },
    { additionalProperties: false, examples: [SQL_EXAMPLE] },
  );

  const SqlResult = Type.Object({
    columns: Type.Array(Type.String(), {
      description: 'Output column names in result order. A repeated name gets a suffix (a, a:1) so that no value is lost in rows.',
    }),
    types: Type.Array(Type.String(), { description: 'Engine type of each column, in the order of columns (e.g. VARCHAR, BIGINT, VARCHAR[]).' }),
    rows: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description:
        'One object per row keyed by column name. 64-bit integers are JSON numbers (strings only beyond 2^53), dates ISO strings, lists arrays, structs objects, blobs hex.',
    }),
    row_count: Type.Integer({ description: 'Number of rows returned.' }),
    truncated: Type.Boolean({
      description: 'True when rows were cut, by max_rows or by the byte budget of a result: raise max_rows, narrow or aggregate the query. False means the result is complete.',
    }),
    truncated_reason: Type.Union([Type.Literal('max_rows'), Type.Literal('max_bytes'), Type.Null()], {
      description: `What cut the rows: max_rows, or max_bytes (the result's rows reached ${ctx.config.sqlMaxBytes} bytes of JSON, IDQS_SQL_MAX_BYTES: select fewer or narrower columns); null when the result is complete.`,
    }),
    max_rows: Type.Integer({ description: 'The row cap that was applied.' }),
    engine: Type.Union([Type.Literal('duckdb'), Type.Literal('trino')], { description: 'The engine that ran the query.' }),
  });

  app.post<{ Body: Static<typeof SqlBody> }>(
    '/sql',
    {
      schema: {
        tags: ['query'],
        summary: 'Run read-only SQL',
        description:
          'Runs one read-only SELECT (or WITH ... SELECT) statement on the embedded analytical engine and returns at most max_rows rows ' +
          `(default ${sqlMaxRows}, ceiling ${sqlMaxRowsCap}); truncated says whether the result was cut. ` +
          `Statements that write, attach, load extensions, read files or URLs, export or change settings are refused (400 invalid_query), as is more than one statement. ` +
          "Engine errors are returned verbatim as 400 invalid_query, including its suggestions ('Did you mean ...'), so the query can be corrected. " +
          `Rows are also cut at ${ctx.config.sqlMaxBytes} bytes of JSON (truncated_reason says which cut applied). ` +
          `A query running longer than ${seconds}s is cancelled (504 query_timeout); when all SQL slots are busy the answer is 503 busy; ` +
          'a query that needs more memory than caller SQL may use is stopped (503 resource_exhausted). ' +
          'A release never changes while served, so answers are kept by statement and max_rows (IDQS_SQL_CACHE_MB); the X-Cache header says hit, miss (run and kept) or bypass (run, not kept: the statement uses random numbers, the clock or sampling). ' +
          'Learn the schema first with GET /v3/tables and GET /v3/tables/{table}; for bulk series lists use the cohort manifest endpoints.',
        body: SqlBody,
        response: { 200: SqlResult, ...errors(400, 422, 503, 504) },
      },
    },
    async (req, reply) => {
      req.sqlLog = sqlLogValue(ctx, req.body.sql);
      // Above the ceiling is lowered (the body reports the cap applied in max_rows).
      const { body, cache } = await runSqlJson(ctx, req.body.sql, applyLimit('max_rows', req.body.max_rows, limits.sqlRows).value, req.body.engine ?? 'duckdb');
      // The rows are JSON text written by the SQL worker: sent as they are, never parsed and written again.
      return reply.type('application/json; charset=utf-8').header('X-Cache', cache).send(body);
    },
  );
}
