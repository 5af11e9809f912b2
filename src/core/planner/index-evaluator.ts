// The in-memory cohort index as an evaluator: it answers a question when the
// index of the release is ready (it is built in the background after start)
// and holds every attribute the filter names, else null, and the planner asks
// the next evaluator. The clauses it can evaluate are the index's own
// (../services/cohort-index/evaluate.ts); nothing here chooses another engine.

import type { AppContext } from '../context.ts';
import type { CompiledFilter } from '../filters/v3.ts';
import { indexTotals } from '../services/cohort-index/answers.ts';
import { readyCohortIndex, type CohortIndex } from '../services/cohort-index/build.ts';
import { selectRows, type Selection } from '../services/cohort-index/evaluate.ts';
import { distinctPrefixes, groupBy } from '../services/cohort-index/group.ts';
import { pagePositions, rowsAt, sizeOf } from '../services/cohort-index/page.ts';
import { groupedPage, loadEngineRanks, sortedSeries } from '../services/cohort-index/table-page.ts';
import type { LinesAt } from '../services/line-stream.ts';
import { indexCount, v2CountStats } from '../services/v2/index-count.ts';
import { countsFromRow } from '../services/version.ts';
import type { PartialEvaluator, TablePageAsk } from './questions.ts';

/** A filter's selection, kept while its compiled filter lives: the questions of one request (a page and its total) select once. */
const selections = new WeakMap<CompiledFilter['filters_applied'], { ix: CohortIndex; sel: Selection | 'all' | null }>();

/** The ready index and the filter's selection on it, or null when either cannot be had. */
function selection(ctx: AppContext, c: Pick<CompiledFilter, 'filters_applied'>): { ix: CohortIndex; sel: Selection | 'all' } | null {
  const ix = readyCohortIndex(ctx);
  if (!ix) return null;
  let kept = selections.get(c.filters_applied);
  if (kept?.ix !== ix) {
    kept = { ix, sel: selectRows(ix, c.filters_applied) };
    selections.set(c.filters_applied, kept);
  }
  return kept.sel ? { ix, sel: kept.sel } : null;
}

/** A grouped page the index is making, by its question: the table's total comes with it (asked apart, at once). */
const groupedPages = new WeakMap<TablePageAsk, ReturnType<typeof groupedPage>>();

const inRowidOrder = new WeakMap<CohortIndex, boolean>();

/**
 * Whether the index's positions are in manifest order with increasing engine row ids: then a span
 * of row ids holds a run of manifest lines, in order, and a scan without ORDER BY returns them in
 * order (the engine keeps insertion order).
 */
function rowidsInManifestOrder(ix: CohortIndex): boolean {
  if (ix.manifestOrder !== null) return false;
  let ordered = inRowidOrder.get(ix);
  if (ordered === undefined) {
    ordered = true;
    for (let p = 1; p < ix.rows && ordered; p++) if (ix.rowidOf[p]! <= ix.rowidOf[p - 1]!) ordered = false;
    inRowidOrder.set(ix, ordered);
  }
  return ordered;
}

export const indexEvaluator: PartialEvaluator = {
  name: 'cohort-index',
  async counts(ctx, c) {
    const ix = readyCohortIndex(ctx);
    const totals = ix && indexTotals(ix, c.filters_applied);
    return totals ? countsFromRow({ ...totals }) : null;
  },
  async licenses(ctx, c) {
    const s = selection(ctx, c);
    const groups = s && groupBy(s.ix, s.sel, 'license_short_name');
    if (!groups) return null;
    // Most series first; ties by name (byte order, as the engine sorts), the missing value last.
    groups.sort((a, b) => b.rows - a.rows || (a.value === null ? 1 : b.value === null ? -1 : Buffer.compare(Buffer.from(a.value), Buffer.from(b.value))));
    return groups.map((g) => ({ license: g.value, series: g.rows, sizeMb: g.sizeMb }));
  },
  async seriesRows(ctx, c, offset, size, select) {
    const s = selection(ctx, c);
    // The page's rows by their ids, from the selection the index made.
    return s && rowsAt(ctx, s.ix, pagePositions(s.ix, s.sel, offset, size), select);
  },
  async tableRows(ctx, c, t) {
    const s = selection(ctx, c);
    if (!s || !Number.isSafeInteger(t.offset)) return null;
    if (t.level !== 'series') {
      const page = groupedPage(ctx, s.ix, s.sel, t.level, t.select, t.sort, t.desc, t.offset, t.size);
      groupedPages.set(t, page);
      return (await page)?.rows ?? null;
    }
    await loadEngineRanks(ctx, s.ix, t.sort);
    const positions = t.sort === null ? pagePositions(s.ix, s.sel, t.offset, t.size) : sortedSeries(s.ix, s.sel, t.sort, t.desc, t.offset, t.size);
    return positions && rowsAt(ctx, s.ix, positions, t.select);
  },
  async tableTotal(ctx, c, t) {
    const s = selection(ctx, c);
    if (!s) return null;
    if (t.level === 'series') return sizeOf(s.ix, s.sel);
    const page = groupedPages.get(t);
    const total = page && (await page)?.total;
    return total ?? distinctPrefixes(s.ix, s.sel, t.keys.length as 1 | 2 | 3);
  },
  async manifestLines(ctx, m) {
    if (!m.indexable) return null;
    const ix = readyCohortIndex(ctx);
    if (!ix || !rowidsInManifestOrder(ix)) return null;
    const s = selection(ctx, { filters_applied: m.filters });
    if (!s) return null;
    const { sel } = s;
    // The index knows the cohort's rows, in manifest order: each run reads the span of row ids its lines lie in, no sort.
    const at = (i: number) => ix.rowidOf[sel === 'all' ? i : sel.rows[i]!]!;
    const n = sizeOf(ix, sel);
    const params = [...m.line.params, ...m.params];
    const linesAt: LinesAt = (take, offset) => {
      const end = Math.min(n, offset + take);
      // Row ids are integers of our own, written inline; the filter keeps the span's rows of other cohorts out.
      // (Past the end the span is empty; the filter stays, its parameters are bound either way.)
      const span = offset < end ? `rowid BETWEEN ${at(offset)} AND ${at(end - 1)}` : 'FALSE';
      return { sql: `SELECT ${m.line.sql} AS line FROM (SELECT ${m.columns} FROM "index" WHERE ${span} AND (${m.where}))`, params };
    };
    return { linesAt, total: () => Promise.resolve(n) };
  },
  async v2Count(ctx, v) {
    const n = v.countOf ? await indexCount(ctx, v.countOf) : null;
    if (n !== null) v2CountStats(ctx).index++;
    return n;
  },
};
