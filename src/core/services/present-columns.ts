// Which of the columns a query wants a table of the served release has: a
// trimmed real release (an older wheel, a local build) lacks some, and a query
// naming them would fail. A leaf, so any service can ask without importing the
// services that list collections.

import type { AppContext } from '../context.ts';

/** Columns of a live table among `wanted`, so a trimmed real release does not break the query. */
export function presentColumns(ctx: AppContext, table: string, wanted: readonly string[]): Set<string> {
  const live = new Set((ctx.catalog.columns.get(table) ?? []).map((c) => c.name));
  return new Set(wanted.filter((c) => live.has(c)));
}
