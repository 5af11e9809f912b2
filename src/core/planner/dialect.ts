// What differs between the SQL the questions are written in (DuckDB's, see
// ./question-sql.ts) and Trino's, translated in one place: values are written
// in as literals typed by the column they are compared with (Trino compares a
// date column with DATE '…', never with a string), a page is OFFSET before
// LIMIT, list(...) is array_agg(...), a column the database derived at build
// is derived the same way from the files' columns. SQL with anything else of DuckDB's own
// (casts written `::`, its other list and string functions) is not translated:
// `toTrino` says null and the question goes to DuckDB.

import type { Param } from '../engine/engine.ts';
import type { PageDialect, SqlText } from './question-sql.ts';

export const TRINO_PAGE: PageDialect = { page: (size, offset) => ({ sql: 'OFFSET ? LIMIT ?', params: [offset, size] }) };

/** DuckDB spellings Trino lacks; SQL holding one is left to DuckDB. */
const UNTRANSLATED = /::|\b(?:list_\w+|string_agg|ilike|regexp_matches|strftime|epoch_ms|struct_pack|unnest|qualify)\b|\bLIMIT\s+\?\s+OFFSET\b/i;

/** Column types of the Trino table, by lower-case name. */
export type ColumnTypes = ReadonlyMap<string, string>;

/** A value as a Trino literal, typed by the column it is compared with. */
export function trinoLiteral(v: Param, columnType: string | undefined): string | null {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return null;
    // A fraction as a double, so it compares as DuckDB compares it (a plain 1.5 would be a decimal).
    return Number.isInteger(v) ? String(v) : `DOUBLE '${v}'`;
  }
  const quoted = `'${v.replaceAll("'", "''")}'`;
  const t = columnType ?? 'varchar';
  if (t === 'date') return /^\d{4}-\d{2}-\d{2}$/.test(v) ? `DATE ${quoted}` : null;
  if (t.startsWith('timestamp')) return `TIMESTAMP ${quoted}`;
  if (t.startsWith('varchar') || t.startsWith('char')) return quoted;
  // A string compared with a number column: DuckDB would cast it; leave that to DuckDB.
  return null;
}

/** The column a placeholder at the end of `before` is compared with (`"Col" >= ?`, `Col IN (?, ?`), if any. */
function columnBefore(before: string): string | undefined {
  const m = /"?([A-Za-z_][A-Za-z0-9_]*)"?\s*(?:>=|<=|<>|!=|=|<|>|\s(?:NOT\s+)?IN\s*\((?:\s*[^()]*?,)?)\s*$/i.exec(before);
  return m?.[1]?.toLowerCase();
}

/**
 * A question's DuckDB SQL and values as one Trino statement (values written in), or null when the SQL
 * holds what the dialect does not translate or a value no literal fits.
 */
export function toTrino(q: SqlText, types: ColumnTypes, derived: ReadonlyMap<string, string> = new Map()): string | null {
  if (UNTRANSLATED.test(q.sql)) return null;
  let out = '';
  let i = 0;
  let n = 0;
  const s = q.sql;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === "'" || ch === '"') {
      // Quoted text and names are copied as they are (a doubled quote stays inside), but for a derived column's name.
      let j = i + 1;
      while (j < s.length && !(s[j] === ch && s[j + 1] !== ch)) j += s[j] === ch ? 2 : 1;
      const d = ch === '"' ? derived.get(s.slice(i + 1, j).toLowerCase()) : undefined;
      out += d !== undefined && !/\bAS\s*$/i.test(out) ? `(${d})` : s.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i))?.[0];
    if (word !== undefined && (i === 0 || !/[A-Za-z0-9_.]/.test(s[i - 1]!))) {
      // A column the served database derived and Trino's table lacks: its expression (an alias keeps its name).
      const d = derived.get(word.toLowerCase());
      out += d !== undefined && !/\bAS\s*$/i.test(out) ? `(${d})` : word;
      i += word.length;
      continue;
    }
    if (ch === '?') {
      if (n >= q.params.length) return null;
      const column = columnBefore(s.slice(0, i));
      const lit = trinoLiteral(q.params[n++]!, column === undefined ? undefined : types.get(column));
      if (lit === null) return null;
      out += lit;
      i++;
      continue;
    }
    out += ch;
    i++;
  }
  if (n !== q.params.length) return null;
  return out.replace(/\blist\s*\(/gi, 'array_agg(');
}
