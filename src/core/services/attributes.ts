// Filterable attributes of the cohort filter, and the distinct values (with
// series counts) of any column of the series-level table `index`.

import { memo, type AppContext } from '../context.ts';
import { didYouMean, field, invalidQuery, invalidRequest, msg, see } from '../errors.ts';
import type { JsonValue } from '../engine/json.ts';
import { ATTRIBUTES, ATTRIBUTE_BY_NAME, attributeColumn, type AttributeKind } from '../registry/attributes.ts';
import { qi } from '../registry/tables.ts';
import { suggest } from '../suggest.ts';
import { toNumber } from './numbers.ts';

export interface AttributeInfo {
  name: string;
  table: 'index';
  /** BigQuery-style type of the column: STRING, INTEGER or FLOAT. */
  data_type: string;
  kind: AttributeKind;
  categorical: boolean;
  description: string;
  /** Present on date range attributes: bounds are strings in this format. */
  value_format?: 'YYYY-MM-DD';
}

export interface AttributeValue {
  value: JsonValue;
  count: number;
}

export interface AttributeValues {
  attribute: string;
  values: AttributeValue[];
  truncated: boolean;
  note: string;
}

/** The filterable attributes, in registry order. */
export function listAttributes(): AttributeInfo[] {
  return ATTRIBUTES.map((a) => {
    const col = attributeColumn(a.name);
    const info: AttributeInfo = {
      name: a.name,
      table: 'index',
      data_type: col.type,
      kind: a.kind,
      categorical: a.categorical,
      description: a.note ? `${col.description} ${a.note}` : col.description,
    };
    if (a.date) info.value_format = 'YYYY-MM-DD';
    return info;
  });
}

/** The caveat of an attribute (the note of a filterable attribute), or "". */
export function attributeNote(name: string): string {
  return ATTRIBUTE_BY_NAME.get(name)?.note ?? '';
}

function indexColumns(ctx: AppContext): string[] {
  return (ctx.catalog.columns.get('index') ?? []).map((c) => c.name);
}

/**
 * Distinct non-NULL values of a column of `index` with their series counts,
 * most frequent first (ties by value), at most `limit` of them. The top
 * `valuesLimitCap + 1` values of a column are computed once and sliced.
 */
export async function attributeValues(ctx: AppContext, attribute: string, limit: number): Promise<AttributeValues> {
  const columns = indexColumns(ctx);
  if (!columns.includes(attribute)) {
    throw invalidQuery(
      msg`Unknown attribute '${attribute}': it is not a column of table index (names are case-sensitive).${didYouMean(suggest(attribute, columns))} ${see(
        'list_attributes',
      )} lists the filterable attributes; ${see('get_table_schema', { table: 'index' })} lists every column.`,
    );
  }
  const cap = ctx.config.valuesLimitCap;
  if (!Number.isInteger(limit) || limit < 1 || limit > cap) {
    throw invalidRequest(msg`${field('limit')} must be an integer from 1 to ${cap}; got ${JSON.stringify(limit)}.`);
  }
  const top = await memo(ctx, `attribute-values:${attribute}`, async () => {
    const col = qi(attribute);
    const rows = await ctx.engine.rows(
      `SELECT ${col} AS value, count(*) AS n FROM "index" WHERE ${col} IS NOT NULL GROUP BY 1 ORDER BY n DESC, value ASC LIMIT ?`,
      [cap + 1],
    );
    return rows.map((r): AttributeValue => ({ value: r.value ?? null, count: toNumber(r.n) }));
  });
  return { attribute, values: top.slice(0, limit), truncated: top.length > limit, note: attributeNote(attribute) };
}
