// First line of defence for caller SQL: cheap checks on the text that give a
// clear message before the engine is asked anything. The engine's parser and
// statement type are the second line, the hardened read-only database the third.

import { invalidQuery } from '../errors.ts';

/** Skip whitespace, `-- line` and (nested) `/* block *\/` comments from `i`. */
function skipTrivia(sql: string, i: number): number {
  for (;;) {
    while (i < sql.length && /\s/.test(sql[i]!)) i++;
    if (sql.startsWith('--', i)) {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl + 1;
      continue;
    }
    if (sql.startsWith('/*', i)) {
      let depth = 1;
      i += 2;
      while (i < sql.length && depth > 0) {
        if (sql.startsWith('/*', i)) {
          depth++;
          i += 2;
        } else if (sql.startsWith('*/', i)) {
          depth--;
          i += 2;
        } else i++;
      }
      continue;
    }
    return i;
  }
}

/** The first keyword of the statement, upper-cased, ignoring comments and opening parentheses. */
export function leadingKeyword(sql: string): string | null {
  let i = skipTrivia(sql, 0);
  while (sql[i] === '(') i = skipTrivia(sql, i + 1);
  const m = /^[A-Za-z_]+/.exec(sql.slice(i, i + 64));
  return m ? m[0].toUpperCase() : i >= sql.length ? null : sql.slice(i, i + 12);
}

export const READ_ONLY_MESSAGE = 'Only a single read-only SELECT (or WITH ... SELECT) statement is allowed.';

/** Text-level checks; throws invalid_query with a message that says what to fix. */
export function checkCallerSqlText(sql: unknown): string {
  if (typeof sql !== 'string') throw invalidQuery('sql must be a string holding one SELECT or WITH statement.');
  // The engine's parser stops at a NUL: what follows would be silently dropped.
  const nul = sql.indexOf('\u0000');
  if (nul >= 0) throw invalidQuery(`The SQL contains a NUL character (\\u0000) at position ${nul}; remove it (the engine would ignore everything after it).`);
  const kw = leadingKeyword(sql);
  if (kw === null) throw invalidQuery('Empty query: send one SELECT or WITH statement.');
  if (kw !== 'SELECT' && kw !== 'WITH') {
    throw invalidQuery(`${READ_ONLY_MESSAGE} The statement starts with ${JSON.stringify(kw)}; the data is read-only and statements that write, attach, load, export, call procedures or change settings are refused.`);
  }
  return sql;
}
