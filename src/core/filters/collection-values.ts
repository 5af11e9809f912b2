// Values of the collection-level attributes (registry: `collection`), read
// once per opened database from collections_index: which values each
// collection has, and which collections have each value. Filters compile to
// collection_id IN (...), values and facets count through collection_id, so
// the list-splitting rule below is the only place the lists are parsed.

import { memo, type AppContext } from '../context.ts';
import { invalidQuery, msg, see } from '../errors.ts';
import type { AttributeDef } from '../registry/attributes.ts';
import { qi } from '../registry/tables.ts';

export interface CollectionValues {
  /** Values of each collection, in the order listed (empty: none). */
  byCollection: Map<string, string[]>;
  /** Collections having each value, sorted. */
  collectionsOf: Map<string, string[]>;
}

/** A piece that qualifies the term before it ("Renal Cell Carcinoma, Not Otherwise Specified") rather than naming another one. */
const QUALIFIER = /^(not otherwise specified|nos)$/i;

/** The values of one cell: the cell itself, or for a list column its comma-separated items, trimmed, without empties or repeats. */
export function splitValues(raw: unknown, list: boolean): string[] {
  if (raw === null || raw === undefined) return [];
  const text = String(raw).trim();
  if (text === '') return [];
  if (!list) return [text];
  const out: string[] = [];
  for (const piece of text.split(',').map((p) => p.trim())) {
    if (piece === '') continue;
    if (QUALIFIER.test(piece) && out.length > 0) out[out.length - 1] = `${out[out.length - 1]}, ${piece}`;
    else out.push(piece);
  }
  return [...new Set(out)];
}

/** Whether this release's collections_index has the attribute's column. */
export function hasCollectionColumn(ctx: AppContext, def: AttributeDef): boolean {
  const cols = ctx.catalog.columns.get('collections_index') ?? [];
  return def.collection !== undefined && cols.some((c) => c.name === def.collection!.column);
}

export function collectionValues(ctx: AppContext, def: AttributeDef): Promise<CollectionValues> {
  const level = def.collection;
  if (!level) throw new Error(`registry error: ${def.name} is not a collection-level attribute`);
  if (!hasCollectionColumn(ctx, def)) {
    throw invalidQuery(
      msg`The served release has no collections_index.${level.column} column, so '${def.name}' cannot be used with it. ${see('get_table_schema', { table: 'collections_index' })} lists what it has.`,
    );
  }
  return memo(ctx, `collection-values:${def.name}`, async () => {
    const rows = await ctx.engine.rows(`SELECT collection_id, ${qi(level.column)}::VARCHAR AS v FROM collections_index WHERE collection_id IS NOT NULL`);
    const byCollection = new Map<string, string[]>();
    const collectionsOf = new Map<string, string[]>();
    for (const r of rows) {
      const id = String(r.collection_id);
      const values = splitValues(r.v, level.list);
      byCollection.set(id, values);
      for (const v of values) collectionsOf.set(v, [...(collectionsOf.get(v) ?? []), id]);
    }
    for (const ids of collectionsOf.values()) ids.sort();
    return { byCollection, collectionsOf };
  });
}
