// Tables reachable by SQL in the main schema and their column schemas. Names
// and columns come from the live catalog of the opened database; descriptions
// and BigQuery-style types from the registry (extras get a type mapped from
// the engine's type and an empty description).

import type { AppContext } from '../context.ts';
import { didYouMean, msg, notFound, see, type Part } from '../errors.ts';
import { TABLE_BY_NAME, displayType } from '../registry/tables.ts';
import { FULL_TABLE_BY_NAME } from '../registry/full-metadata.ts';
import { suggest } from '../suggest.ts';
import { tableNotInBuild } from './missing-tables.ts';

export interface TableSummary {
  name: string;
  description: string;
  column_count: number;
}

export interface TableColumn {
  name: string;
  /** BigQuery-style type, with [] for lists (e.g. STRING[]). */
  type: string;
  /** Type of the column in the SQL engine (e.g. VARCHAR[]). */
  engine_type: string;
  description: string;
}

export interface TableSchema {
  name: string;
  description: string;
  columns: TableColumn[];
}

const SCALAR_TYPES: [RegExp, string][] = [
  [/^(VARCHAR|CHAR|BPCHAR|TEXT|STRING|UUID)\b/, 'STRING'],
  [/^(BIGINT|INTEGER|INT|SMALLINT|TINYINT|HUGEINT|UBIGINT|UINTEGER|USMALLINT|UTINYINT|UHUGEINT|INT\d+)\b/, 'INTEGER'],
  [/^(DOUBLE|FLOAT|REAL|DECIMAL|NUMERIC)\b/, 'FLOAT'],
  [/^(BOOLEAN|BOOL)\b/, 'BOOLEAN'],
  [/^(STRUCT|MAP|UNION)\b/, 'RECORD'],
  [/^TIMESTAMP\b/, 'TIMESTAMP'],
  [/^DATE\b/, 'DATE'],
  [/^TIME\b/, 'TIME'],
  [/^(BLOB|BYTEA)\b/, 'BYTES'],
];

/** BigQuery-style name of an engine type: VARCHAR→STRING, BIGINT→INTEGER, X[]→…[], STRUCT→RECORD. */
export function bqTypeFromEngine(engineType: string): string {
  const t = engineType.trim().toUpperCase();
  const list = /^(.*)\[\d*\]$/s.exec(t);
  if (list) return `${bqTypeFromEngine(list[1]!)}[]`;
  for (const [re, bq] of SCALAR_TYPES) if (re.test(t)) return bq;
  return t;
}

/** The tables of the main schema: registry order, then unexpected ones by name. */
export function listTables(ctx: AppContext): { tables: TableSummary[] } {
  return {
    tables: ctx.catalog.tables.map((name) => ({
      name,
      description: (TABLE_BY_NAME.get(name) ?? FULL_TABLE_BY_NAME.get(name))?.description ?? ctx.catalog.docs.get(`${name}.`) ?? '',
      column_count: ctx.catalog.columns.get(name)?.length ?? 0,
    })),
  };
}

function unknownTable(ctx: AppContext, name: string): never {
  const available = ctx.catalog.tables;
  const close = suggest(name, available);
  const short = name.startsWith('clinical.') ? name.slice('clinical.'.length) : name;
  const parts: Part[] = [`Unknown table '${name}': not found.`];
  if (ctx.catalog.clinicalTables.includes(short)) {
    parts.push(...msg` '${short}' is a per-collection clinical table: read its schema with ${see('get_clinical_table_schema', { table: short })} and query it in SQL as clinical.${short}.`);
  } else if (name.startsWith('clinical.')) {
    parts.push(...msg` Clinical tables are not served here: list them with ${see('list_clinical_tables')}.`);
  } else {
    parts.push(didYouMean(close));
  }
  parts.push(` Available tables: ${available.join(', ')}.`);
  throw notFound(parts);
}

/** Column schema of one table of the main schema; 404 naming the available tables otherwise. */
export function tableSchema(ctx: AppContext, name: string): TableSchema {
  if (!ctx.catalog.tables.includes(name)) {
    if (TABLE_BY_NAME.has(name) || FULL_TABLE_BY_NAME.has(name)) throw tableNotInBuild(ctx, name);
    unknownTable(ctx, name);
  }
  const def = TABLE_BY_NAME.get(name) ?? FULL_TABLE_BY_NAME.get(name);
  const registry = new Map((def?.columns ?? []).map((c) => [c.name, c]));
  const columns = (ctx.catalog.columns.get(name) ?? []).map((live): TableColumn => {
    const reg = registry.get(live.name);
    // A struct column shows its fields (as the public service does since its
    // v25 release): RECORD alone names nothing a query could select.
    const type = /\bSTRUCT\(/.test(live.type) ? live.type : reg ? displayType(reg) : bqTypeFromEngine(live.type);
    return { name: live.name, type, engine_type: live.type, description: reg?.description ?? ctx.catalog.docs.get(`${name}.${live.name}`) ?? '' };
  });
  return { name, description: def?.description ?? ctx.catalog.docs.get(`${name}.`) ?? '', columns };
}
