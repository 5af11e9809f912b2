// SQL text the tests' own queries are written with, one home for every test:
// a value as a SQL literal (numbers as they are, strings quoted with quotes
// doubled) and a list of them. Independent of the product's own quoting
// (src/core/data/sql.ts), so a test's SQL never shares a bug with the code it checks.

export const lit = (v: number | string): string => (typeof v === 'number' ? String(v) : `'${v.replaceAll("'", "''")}'`);

/** Values as the inside of IN (...); NULL when there are none (IN (NULL) matches nothing). */
export const litList = (values: (number | string)[]): string => values.map(lit).join(', ') || 'NULL';
