// Tables a release has but this build lacks (a release fetched as the wheel
// carries the five core tables only): the message naming the table and the
// command that fetches it. The command is spelled here and nowhere else.

import type { AppContext } from '../context.ts';
import { unavailable, type IdqsError } from '../errors.ts';
import { TABLE_BY_NAME } from '../registry/tables.ts';
import { FULL_TABLE_BY_NAME } from '../registry/full-metadata.ts';

/** The command that adds `tables` to the release this server was built from. */
export function fetchTablesCommand(ctx: AppContext, tables: string[]): string {
  const v = ctx.dataset.index_version;
  const release = v && v !== 'unknown' && !ctx.dataset.synthetic ? v : 'latest';
  const from = ctx.dataset.provenance?.source;
  // The clinical tables and the full metadata come from the metadata bucket into the release's own folder, whatever its source; other tables from the release files.
  const bucket = (t: string) => t === 'clinical' || FULL_TABLE_BY_NAME.has(t);
  const source = from === 'github' || (from === 'pypi' && tables.every(bucket)) ? from : 'gcs';
  return `idqs data fetch --release ${release} --source ${source} --tables ${tables.join(',')}`;
}

function why(ctx: AppContext): string {
  if (ctx.dataset.provenance?.source === 'pypi') return 'the release was fetched as the wheel, which carries the core tables only';
  return 'the folder it was built from has no such file';
}

export function missingTableMessage(ctx: AppContext, table: string): string {
  if (FULL_TABLE_BY_NAME.has(table)) {
    return (
      `Table '${table}' is part of the release's full metadata, which this build does not have (it is fetched apart: ${table === 'dicom_all' ? 'one row per instance, tens of GB' : 'from the metadata bucket'}). ` +
      `Fetch it with: ${fetchTablesCommand(ctx, [table])} (the build then loads it), then restart the server on that release. ` +
      `Tables available now: ${ctx.catalog.tables.join(', ')}.`
    );
  }
  return (
    `Table '${table}' is part of the release but not of this build (${why(ctx)}). ` +
    `Fetch it with: ${fetchTablesCommand(ctx, [table])}, then restart the server on that release. ` +
    `Tables available now: ${ctx.catalog.tables.join(', ')}.`
  );
}

/** 503: the table exists in the release, this build just does not have it. */
export function tableNotInBuild(ctx: AppContext, table: string): IdqsError {
  return unavailable(missingTableMessage(ctx, table));
}

/** IDC's BigQuery names: `bigquery-public-data.idc_current.dicom_all`, idc_v25.segmentations, in backticks or not. */
const BIGQUERY = /`?\b(?:bigquery-public-data\.)?(idc_(?:current|v\d+)(?:_clinical)?)\.([A-Za-z0-9_]+)`?/;

/**
 * For SQL written for IDC's BigQuery datasets (the documentation's and the agent skills' examples): the
 * engine only says "syntax error at or near `". Say what the names are here, and where the table lives.
 */
export function bigQueryHint(ctx: AppContext, sql: string): string | null {
  const m = BIGQUERY.exec(sql);
  if (!m) return null;
  const [, dataset, table] = m as unknown as [string, string, string];
  const here = ctx.catalog.tables.includes(table)
    ? `this server has ${table}: name it alone`
    : TABLE_BY_NAME.has(table) || FULL_TABLE_BY_NAME.has(table)
      ? missingTableMessage(ctx, table) : `this server has no table ${table} (BigQuery's ${table} is not among the release's index tables)`;
  return (
    `This statement is written for IDC's BigQuery dataset ${dataset}: here tables are named without project and dataset, and quoted with double quotes, not backticks; ${here}. ` +
    `The series-level table is index (one row per series, about 50 columns of dicom_all's); tables available now: ${ctx.catalog.tables.join(', ')}.`
  );
}

/** For an engine error about a table that does not exist: what to do when it is a table of the release. */
export function missingTableHint(ctx: AppContext, engineMessage: string): string | null {
  const m = /Table with name "?([A-Za-z0-9_.]+)"? does not exist/.exec(engineMessage);
  if (!m) return null;
  const name = m[1]!;
  if (name.startsWith('clinical.')) {
    return ctx.catalog.clinicalTables.length === 0 ? `This build has no clinical tables (${why(ctx)}).` : null;
  }
  if (ctx.catalog.tables.includes(name)) return null;
  if (TABLE_BY_NAME.has(name) || FULL_TABLE_BY_NAME.has(name)) return missingTableMessage(ctx, name);
  // A bare name as idc-index's clinical tables are used (nlst_canc): here they live in the clinical schema.
  if (ctx.catalog.clinicalTables.some((t) => t === name || t.endsWith(`.${name}`))) return `The clinical table ${name} is named clinical.${name} here.`;
  if (ctx.catalog.clinicalTables.length === 0 && /^[a-z0-9_]+$/.test(name)) {
    return `If ${name} is a clinical table of a collection: this build has no clinical tables (${why(ctx)}); fetch them with: ${fetchTablesCommand(ctx, ['clinical'])}, then name it clinical.${name}.`;
  }
  return null;
}
