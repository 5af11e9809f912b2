// How a value (collection id, patient id, UID, object name) becomes one folder
// or file name on disk: the same rule for the s5cmd lines of manifest.txt
// (in SQL) and for the downloader's layout (in JavaScript). Pure: no engine,
// so the downloader can load it.

/** What is replaced by "_": leading dots, and any character but letters, digits, ".", "_" and "-". */
export const UNSAFE_IN_NAME = '^\\.+|[^A-Za-z0-9._-]';

/** The name of an empty or missing value. */
export const EMPTY_NAME = '_';

// 'u': a character outside the BMP is one character, as for DuckDB's regular expressions.
const unsafe = new RegExp(UNSAFE_IN_NAME, 'gu');

/** A value made safe as one folder or file name (no separators, no leading dots, nothing empty). */
export function folderName(v: string | null | undefined): string {
  if (v === null || v === undefined || v === '') return EMPTY_NAME;
  return v.replace(unsafe, '_');
}

/** The same rule as a SQL expression over a column (DuckDB's regexp_replace reads the same pattern). */
export function folderNameSql(column: string): string {
  return `regexp_replace(COALESCE(NULLIF(${column}, ''), '${EMPTY_NAME}'), '${UNSAFE_IN_NAME}', '_', 'g')`;
}
