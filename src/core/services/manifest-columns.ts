// Manifests as tables: CSV, TSV or JSON rows of chosen columns of the series
// (any column of index, and `url`, the series' URL in the chosen store), one
// row per series in manifest order. Each row is written by the engine as one
// line (as the URL lines are), so a table manifest streams the same way; the
// JSON form is an array whose separators the service adds between lines.

import type { AppContext } from '../context.ts';
import type { Param } from '../engine/engine.ts';
import { didYouMean, field, invalidQuery, msg } from '../errors.ts';
import { qi } from '../registry/tables.ts';
import { suggest } from '../suggest.ts';

export const TABLE_FORMATS = ['csv', 'tsv', 'json'] as const;
export type TableFormat = (typeof TABLE_FORMATS)[number];

export const isTableFormat = (f: string): f is TableFormat => (TABLE_FORMATS as readonly string[]).includes(f);

/** The series' URL in the chosen store: not a column of index, computed like a URL manifest's line. */
export const URL_COLUMN = 'url';

/** What a table manifest holds when the request names no columns: where each series is, what it is, how big. */
export const DEFAULT_MANIFEST_COLUMNS = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality', 'instanceCount', 'series_size_MB', URL_COLUMN];

/** The columns of a past release's rows (as_of): those its relation carries (see as-of.ts). */
export const AS_OF_COLUMNS = [
  'collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality', 'SeriesDescription', 'instanceCount', 'series_size_MB',
  'aws_bucket', 'crdc_series_uuid', 'series_cloud1_url', 'license_short_name', 'source_DOI', 'analysis_result_id', URL_COLUMN,
];

export const CONTENT_TYPES: Record<TableFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  tsv: 'text/tab-separated-values; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/**
 * The columns a table manifest lists: the request's (a list, or one string of
 * comma-separated names), checked against what the rows have, or the
 * default. Names match case-sensitively, as SQL over index does.
 */
export function manifestColumns(ctx: AppContext, raw: unknown, format: string, asOf: boolean): string[] {
  if (!isTableFormat(format)) {
    if (raw !== undefined && raw !== null) {
      throw invalidQuery(msg`${field('columns')} applies to the table formats (${TABLE_FORMATS.join(', ')}); format ${format} has one fixed line per series.`);
    }
    return [];
  }
  if (raw === undefined || raw === null) return asOf ? DEFAULT_MANIFEST_COLUMNS.filter((c) => AS_OF_COLUMNS.includes(c)) : DEFAULT_MANIFEST_COLUMNS;
  // A list's items may hold several names too (a form or a query string sends "a,b" as one item).
  const items: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (items.some((n) => typeof n !== 'string')) {
    throw invalidQuery(msg`${field('columns')} must be a list of column names, or one string of names separated by commas.`);
  }
  const list = (items as string[]).flatMap((n) => n.split(',')).map((n) => n.trim());
  if (list.length === 0 || list.some((n) => n === '')) throw invalidQuery(msg`${field('columns')} names an empty column: give at least one name, none blank.`);
  const available = asOf ? AS_OF_COLUMNS : [...(ctx.catalog.columns.get('index') ?? []).map((c) => c.name), URL_COLUMN];
  const seen = new Set<string>();
  for (const n of list) {
    if (seen.has(n)) throw invalidQuery(msg`${field('columns')} lists ${JSON.stringify(n)} twice.`);
    seen.add(n);
    if (!available.includes(n)) {
      const where = asOf
        ? `a past release's manifest (as_of) has ${AS_OF_COLUMNS.join(', ')}`
        : `the columns are those of the index table (its schema lists them) and ${URL_COLUMN}`;
      throw invalidQuery(msg`${field('columns')}: no column ${JSON.stringify(n)}; ${where}.${didYouMean(suggest(n, available))}`);
    }
  }
  return list;
}

/**
 * The SQL of one row's line, over the columns `columns` (url being `url`'s
 * expression, its parameters bound once), and the header line (none for JSON).
 */
export function tableLine(format: TableFormat, columns: string[], url: { sql: string; params: Param[] }): { sql: string; params: Param[]; header: string | null } {
  const value = (c: string) => (c === URL_COLUMN ? `(${url.sql})` : qi(c));
  const params = columns.includes(URL_COLUMN) ? url.params : [];
  if (format === 'json') {
    return { sql: `json_object(${columns.map((c) => `'${c}', ${value(c)}`).join(', ')})::VARCHAR`, params, header: null };
  }
  // CSV: every value quoted (quotes doubled), an absent value an empty field. TSV has no quoting: tabs and line breaks inside a value become spaces.
  const cell =
    format === 'csv'
      ? (c: string) => `coalesce('"' || replace(CAST(${value(c)} AS VARCHAR), '"', '""') || '"', '')`
      : (c: string) => `coalesce(regexp_replace(CAST(${value(c)} AS VARCHAR), '[\\t\\r\\n]', ' ', 'g'), '')`;
  const sep = format === 'csv' ? `','` : 'chr(9)';
  return { sql: columns.map(cell).join(` || ${sep} || `), params, header: columns.join(format === 'csv' ? ',' : '\t') };
}

/** The body of a JSON manifest: its lines (blocks of whole lines) as the elements of one array. */
export async function* jsonArray(blocks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield Buffer.from('[');
  let first = true;
  for await (const b of blocks) {
    const text = b.toString('utf8');
    // Each block ends with a line break: the elements of the block, separated, the separator before the next block's first.
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    yield Buffer.from(`${first ? '\n' : ',\n'}${body.replaceAll('\n', ',\n')}`);
    first = false;
  }
  yield Buffer.from(first ? ']\n' : '\n]\n');
}
