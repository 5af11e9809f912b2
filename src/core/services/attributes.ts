// Filterable attributes of the cohort filter, and the distinct values (with
// series counts) of any column of the series-level table `index`.

import { memo, type AppContext } from '../context.ts';
import { didYouMean, field, invalidQuery, invalidRequest, msg, see } from '../errors.ts';
import type { JsonValue } from '../engine/json.ts';
import { collectionValues } from '../filters/collection-values.ts';
import { ATTRIBUTES, ATTRIBUTE_BY_NAME, attributeColumn, type AttributeDef, type AttributeKind } from '../registry/attributes.ts';
import { qi } from '../registry/tables.ts';
import { suggest } from '../suggest.ts';
import { toNumber } from './numbers.ts';

export interface AttributeInfo {
  name: string;
  /** Where the attribute is held: index (per series) or collections_index (per collection, matched through collection_id). */
  table: 'index' | 'collections_index';
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
    if (a.collection) {
      const description = a.note ? `${a.collection.description}. ${a.note}` : `${a.collection.description}.`;
      return { name: a.name, table: 'collections_index', data_type: 'STRING', kind: a.kind, categorical: a.categorical, description };
    }
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
  const def = ATTRIBUTE_BY_NAME.get(attribute);
  if (def?.collection) {
    checkLimit(ctx, limit);
    const top = await collectionAttributeValues(ctx, def);
    return { attribute, values: top.slice(0, limit), truncated: top.length > limit, note: attributeNote(attribute) };
  }
  if (!columns.includes(attribute)) {
    throw invalidQuery(
      msg`Unknown attribute '${attribute}': it is not a column of table index (names are case-sensitive).${didYouMean(suggest(attribute, columns))} ${see(
        'list_attributes',
      )} lists the filterable attributes; ${see('get_table_schema', { table: 'index' })} lists every column.`,
    );
  }
  checkLimit(ctx, limit);
  const cap = ctx.config.valuesLimitCap;
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

function checkLimit(ctx: AppContext, limit: number): void {
  const cap = ctx.config.valuesLimitCap;
  if (!Number.isInteger(limit) || limit < 1 || limit > cap) {
    throw invalidRequest(msg`${field('limit')} must be an integer from 1 to ${cap}; got ${JSON.stringify(limit)}.`);
  }
}

/** Series per collection of index (a series belongs to one collection). */
export function seriesPerCollection(ctx: AppContext): Promise<Map<string, number>> {
  return memo(ctx, 'series-per-collection', async () => {
    const rows = await ctx.engine.rows(`SELECT collection_id, count(*) AS n FROM "index" WHERE collection_id IS NOT NULL GROUP BY 1`);
    return new Map(rows.map((r) => [String(r.collection_id), toNumber(r.n)]));
  });
}

/** Values of a collection-level attribute with the series of the collections listing each, most first (ties by value); values with no series are left out. */
async function collectionAttributeValues(ctx: AppContext, def: AttributeDef): Promise<AttributeValue[]> {
  const [{ collectionsOf }, series] = await Promise.all([collectionValues(ctx, def), seriesPerCollection(ctx)]);
  const out: AttributeValue[] = [];
  for (const [value, ids] of collectionsOf) {
    const count = ids.reduce((n, id) => n + (series.get(id) ?? 0), 0);
    if (count > 0) out.push({ value, count });
  }
  return out.sort((a, b) => b.count - a.count || (String(a.value) < String(b.value) ? -1 : 1));
}
