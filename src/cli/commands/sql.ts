// `idqs sql`: one read-only statement run locally through the same service and guard as POST /v3/sql, over the
// data the serving policy chooses, printed as a table, JSON or CSV.

import { Option, type Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { applyLimit, restLimits } from '../../contract/limits.ts';
import { sweepStaleWorkerTempDirs } from '../../core/engine/worker-temp.ts';
import { integer } from '../args.ts';
import { reportSwept } from '../serve-workers.ts';
import { resolveDb } from '../serving-policy.ts';

type SqlFlags = { db?: string; demo?: boolean; maxRows?: number; format: string };

export function registerSql(program: Command): void {
  program
    .command('sql')
    .description('Run one read-only SELECT/WITH statement locally through the same service and guard as POST /v3/sql')
    .argument('<query>', 'the SQL statement')
    .option('--db <path>', 'database file (default: the data idqs serve would serve)')
    .option('--demo', 'the generated demo dataset, offline (env IDQS_DEMO=1)')
    .option('--max-rows <n>', 'most rows to print (default IDQS_SQL_MAX_ROWS, 5000; values above IDQS_SQL_MAX_ROWS_CAP, 10000, are lowered to it)', integer('max-rows'))
    .addOption(new Option('--format <f>', 'output format').choices(['json', 'table', 'csv']).default('table'))
    .action(sqlAction);
}

/** A CSV field: quoted when it holds a quote, a comma or a newline; objects as JSON. */
function csvField(v: unknown): string {
  const s = v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

async function sqlAction(query: string, o: SqlFlags): Promise<void> {
  const cfg = loadConfig();
  const limits = restLimits(cfg);
  // The row cap follows the API's rule: the same default and ceiling; 0 is refused by the service.
  const maxRows = applyLimit('--max-rows', o.maxRows, limits.sqlRows);
  if (maxRows.warning) process.stderr.write(`warning: ${maxRows.warning}\n`);
  const dbFile = await resolveDb(cfg, o.db, { demo: o.demo });
  reportSwept(sweepStaleWorkerTempDirs());
  const ctx = await (await import('../../core/context.ts')).createContext(cfg, dbFile);
  // IDQS_DB is silent in resolveDb (the other defaults say which data they chose): say it here (stdout stays the result).
  if (!o.db && cfg.db) process.stderr.write(`answering from IDQS_DB (${dbFile}): data release ${ctx.dataset.release}${ctx.dataset.synthetic ? ', synthetic' : ''}; --db FILE picks another database\n`);
  try {
    const r = await (await import('../../core/services/sql.ts')).runSql(ctx, query, maxRows.value);
    if (o.format === 'json') process.stdout.write(JSON.stringify(r, null, 2) + '\n');
    else if (o.format === 'csv') {
      process.stdout.write([r.columns.map(csvField).join(','), ...r.rows.map((row) => r.columns.map((c) => csvField(row[c])).join(','))].join('\n') + '\n');
    } else {
      console.table(r.rows);
    }
    if (r.truncated) process.stderr.write(`truncated at ${r.max_rows} rows; raise --max-rows (cap ${limits.sqlRows.cap}) or aggregate\n`);
  } finally {
    ctx.engine.close();
  }
}
