// The cohort questions the planner answers, each described once: what is
// asked of a compiled filter (counts, a license breakdown, a page of series
// in manifest order, a page of a browsing table, the lines of a manifest, a
// /v2 manifest's row count). Every evaluator (./evaluators.ts) answers the
// same descriptions; services ask the planner (./plan.ts), never an
// evaluator, so which engine answers is decided in one place.

import type { AppContext } from '../context.ts';
import type { Param, Row } from '../engine/engine.ts';
import type { CompiledFilter } from '../filters/v3.ts';
import type { LinesAt } from '../services/line-stream.ts';
import type { Counts } from '../services/version.ts';
import type { IndexCountable } from '../services/v2/plan.ts';

/** Series and size of one license short name (null: series without one). */
export interface LicenseGroup {
  license: string | null;
  series: number;
  sizeMb: number;
}

/** A page of a browsing table (/v3/cohort/table): its SQL pieces, and the page asked. */
export interface TablePageAsk {
  level: 'collections' | 'patients' | 'studies' | 'series';
  /** GROUP BY keys (none for series). */
  keys: string[];
  /** The columns, as SQL over index. */
  select: string;
  sort: string | null;
  desc: boolean;
  /** ORDER BY of the SQL path (sort column first, then the unique tail). */
  orderBy: string;
  offset: number;
  size: number;
}

/** The rows a manifest lists and how each line is written. */
export interface ManifestLinesAsk {
  /** The rows: FROM and WHERE over the served index (indexable), or over a past release's versions. */
  from: string;
  where: string;
  params: Param[];
  /** Whether the rows are the served index's, filtered by `filters`: only then can the cohort index list them. */
  indexable: boolean;
  filters: CompiledFilter['filters_applied'];
  /** The line expression over LINE_COLUMNS, and its parameters (bound before the rows'). */
  line: { sql: string; params: Param[] };
  /** Columns a line is built from. */
  columns: string;
  /** ORDER BY of the manifest. */
  order: string;
}

export interface ManifestLines {
  linesAt: LinesAt;
  total: () => Promise<number>;
}

/** A /v2 manifest's count: the filters the index may evaluate, or the SQL that counts. */
export interface V2CountAsk {
  countOf: IndexCountable | null;
  countSql: string;
  countParams: Param[];
}

/**
 * Every question, answered in full: the evaluator of last resort (SQL on the
 * embedded engine) implements this. Each method takes the release's context.
 */
export interface CohortAnswers {
  counts(ctx: AppContext, c: CompiledFilter): Promise<Counts>;
  licenses(ctx: AppContext, c: CompiledFilter): Promise<LicenseGroup[]>;
  /** Series `[offset, offset + size)` in manifest order, with the columns of `select`. */
  seriesRows(ctx: AppContext, c: CompiledFilter, offset: number, size: number, select: string): Promise<Row[]>;
  /** The rows of a page of a browsing table, and (asked apart: an evaluator may know one and not the other) its number of rows. */
  tableRows(ctx: AppContext, c: CompiledFilter, t: TablePageAsk): Promise<Row[]>;
  tableTotal(ctx: AppContext, c: CompiledFilter, t: TablePageAsk): Promise<number>;
  manifestLines(ctx: AppContext, m: ManifestLinesAsk): Promise<ManifestLines>;
  v2Count(ctx: AppContext, v: V2CountAsk): Promise<number>;
}

export type Question = keyof CohortAnswers;

/**
 * An evaluator that answers some questions: each method answers, or says null
 * (this question, or this filter, is not one it can answer) and the planner
 * asks the next evaluator.
 */
export type PartialEvaluator = {
  readonly name: string;
} & {
  [Q in Question]: (...args: Parameters<CohortAnswers[Q]>) => Promise<Awaited<ReturnType<CohortAnswers[Q]>> | null>;
};

export type CompleteEvaluator = { readonly name: string } & CohortAnswers;
