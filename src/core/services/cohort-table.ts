// Tables of a cohort for browsing (POST /v3/cohort/table): one page of its
// collections, patients, studies or series, sorted on the engine by any
// column, with the total number of rows. Studies and series carry the link
// of the viewer /v3/viewer-url would choose for them.

import type { AppContext } from '../context.ts';
import type { Param, Row } from '../engine/engine.ts';
import { didYouMean, field, invalidQuery, invalidRequest, msg } from '../errors.ts';
import { compileFilter, type FilterObject } from '../filters/v3.ts';
import { suggest } from '../suggest.ts';
import type { FiltersApplied } from './cohort.ts';
import { readyCohortIndex, type CohortIndex } from './cohort-index/build.ts';
import { selectRows, type Selection } from './cohort-index/evaluate.ts';
import { groupedPage, loadEngineRanks, sortedSeries } from './cohort-index/table-page.ts';
import { distinctPrefixes } from './cohort-index/group.ts';
import { pagePositions, rowsAt, sizeOf } from './cohort-index/page.ts';
import { MANIFEST_ORDER } from '../rules/manifest-order.ts';
import { round, toNumber } from './numbers.ts';
import { defaultViewer, viewerLink } from './viewer.ts';

export const TABLE_LEVELS = ['collections', 'patients', 'studies', 'series'] as const;
export type TableLevel = (typeof TABLE_LEVELS)[number];

interface Column {
  name: string;
  /** SQL over `index` (an aggregate for grouped levels). */
  sql: string;
  /** Lists cannot be sorted on. */
  list?: boolean;
}

interface Level {
  /** GROUP BY keys; none for series (one row per series). */
  keys: string[];
  columns: Column[];
  /** Default order, and the unique tail that makes paging stable. */
  order: string;
  unique: string;
}

const counts: Column[] = [
  { name: 'series', sql: 'count(*)' },
  { name: 'size_MB', sql: 'round(coalesce(sum(series_size_MB), 0), 3)' },
  { name: 'modalities', sql: 'list(DISTINCT Modality ORDER BY Modality) FILTER (WHERE Modality IS NOT NULL)', list: true },
];

const LEVELS: Record<TableLevel, Level> = {
  collections: {
    keys: ['collection_id'],
    columns: [
      { name: 'collection_id', sql: 'collection_id' },
      { name: 'patients', sql: 'count(DISTINCT PatientID)' },
      { name: 'studies', sql: 'count(DISTINCT StudyInstanceUID)' },
      ...counts,
      { name: 'licenses', sql: 'list(DISTINCT license_short_name ORDER BY license_short_name) FILTER (WHERE license_short_name IS NOT NULL)', list: true },
    ],
    order: 'collection_id',
    unique: 'collection_id',
  },
  patients: {
    keys: ['collection_id', 'PatientID'],
    columns: [
      { name: 'collection_id', sql: 'collection_id' },
      { name: 'PatientID', sql: 'PatientID' },
      { name: 'PatientSex', sql: 'min(PatientSex)' },
      { name: 'studies', sql: 'count(DISTINCT StudyInstanceUID)' },
      ...counts,
    ],
    order: 'collection_id, PatientID',
    unique: 'collection_id, PatientID',
  },
  studies: {
    keys: ['collection_id', 'PatientID', 'StudyInstanceUID'],
    columns: [
      { name: 'collection_id', sql: 'collection_id' },
      { name: 'PatientID', sql: 'PatientID' },
      { name: 'StudyInstanceUID', sql: 'StudyInstanceUID' },
      { name: 'StudyDate', sql: 'min(StudyDate)' },
      { name: 'StudyDescription', sql: 'min(StudyDescription)' },
      ...counts,
    ],
    order: 'collection_id, PatientID, StudyInstanceUID',
    unique: 'collection_id, PatientID, StudyInstanceUID',
  },
  series: {
    keys: [],
    columns: [
      'collection_id',
      'PatientID',
      'StudyInstanceUID',
      'SeriesInstanceUID',
      'Modality',
      'BodyPartExamined',
      'SeriesDescription',
      'SeriesNumber',
      'SeriesDate',
      'instanceCount',
      'series_size_MB',
      'license_short_name',
    ].map((name) => ({ name, sql: `"${name}"` })),
    order: MANIFEST_ORDER,
    unique: MANIFEST_ORDER,
  },
};

export interface TableRequest {
  filters?: FilterObject | null;
  level?: string | null;
  sort?: string | null;
  order?: string | null;
  page?: number | null;
  page_size?: number | null;
}

export interface CohortTable {
  level: TableLevel;
  columns: string[];
  rows: Row[];
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
  sort: string | null;
  order: 'asc' | 'desc';
  filters_applied: FiltersApplied;
  warnings: string[];
}

export const DEFAULT_TABLE_PAGE = 25;

function parseLevel(raw: string | null | undefined): TableLevel {
  if (raw === undefined || raw === null) return 'series';
  if ((TABLE_LEVELS as readonly string[]).includes(raw)) return raw as TableLevel;
  throw invalidQuery(msg`${field('level')} must be one of ${TABLE_LEVELS.join(', ')}; got ${JSON.stringify(raw)}.${didYouMean(suggest(raw, TABLE_LEVELS))}`);
}

export async function cohortTable(ctx: AppContext, req: TableRequest): Promise<CohortTable> {
  const level = parseLevel(req.level);
  const def = LEVELS[level];
  const sortable = def.columns.filter((c) => !c.list).map((c) => c.name);
  const sort = req.sort ?? null;
  if (sort !== null && !sortable.includes(sort)) {
    throw invalidQuery(msg`${field('sort')} must be a column of the ${level} table: ${sortable.join(', ')}; got ${JSON.stringify(sort)}.${didYouMean(suggest(sort, sortable))}`);
  }
  const order = req.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw invalidQuery(msg`${field('order')} must be asc or desc; got ${JSON.stringify(order)}.`);
  const compiled = await compileFilter(ctx, req.filters ?? {});
  const warnings = [...compiled.warnings];
  const pageSize = req.page_size ?? DEFAULT_TABLE_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > ctx.config.maxPageSize) {
    throw invalidRequest(msg`${field('page_size')} must be an integer from 1 to ${ctx.config.maxPageSize}; got ${JSON.stringify(req.page_size)}.`);
  }
  const page = Math.max(0, Math.floor(req.page ?? 0));

  const select = def.columns.map((c) => `${c.sql} AS "${c.name}"`).join(', ');
  const group = def.keys.length > 0 ? ` GROUP BY ${def.keys.join(', ')}` : '';
  const orderBy = `${sort ? `"${sort}" ${order.toUpperCase()} NULLS LAST, ` : ''}${def.unique}`;
  const params: Param[] = [...compiled.params];
  // From the cohort index when it can: the number of rows, and the page's order by row id (table-page.ts).
  const ix = readyCohortIndex(ctx);
  const sel = ix && selectRows(ix, compiled.filters_applied);
  const offset = page * pageSize;
  const fromIndex = ix && sel && Number.isSafeInteger(offset) ? await indexedPage(ctx, ix, sel, level, select, sort, order === 'desc', offset, pageSize) : null;
  const indexedTotal = fromIndex ? fromIndex.total : ix && sel ? (level === 'series' ? sizeOf(ix, sel) : distinctPrefixes(ix, sel, def.keys.length as 1 | 2 | 3)) : null;
  const [rows, total] = await Promise.all([
    fromIndex
      ? fromIndex.rows
      : ctx.engine.rows(`SELECT ${select} FROM "index" WHERE ${compiled.where}${group} ORDER BY ${orderBy} LIMIT ? OFFSET ?`, [...params, pageSize, offset]),
    indexedTotal !== null
      ? { n: indexedTotal }
      : ctx.engine.one(
          def.keys.length > 0
            ? `SELECT count(*) AS n FROM (SELECT 1 FROM "index" WHERE ${compiled.where}${group})`
            : `SELECT count(*) AS n FROM "index" WHERE ${compiled.where}`,
          params,
        ),
  ]);
  if (level === 'series') {
    for (const r of rows) if (typeof r.series_size_MB === 'number') r.series_size_MB = round(r.series_size_MB, 3);
  }
  if (level === 'studies' || level === 'series') await addViewerLinks(ctx, rows);
  const n = toNumber(total?.n);
  return {
    level,
    columns: [...def.columns.map((c) => c.name), ...(level === 'studies' || level === 'series' ? ['viewer_url'] : [])],
    rows,
    total: n,
    page,
    page_size: pageSize,
    total_pages: Math.ceil(n / pageSize),
    sort,
    order,
    filters_applied: compiled.filters_applied,
    warnings,
  };
}

/** A page of the table from the index: series by row id (sorted on a column it holds), or grouped rows (table-page.ts); null: ask SQL. */
async function indexedPage(
  ctx: AppContext,
  ix: CohortIndex,
  sel: Selection | 'all',
  level: TableLevel,
  select: string,
  sort: string | null,
  desc: boolean,
  offset: number,
  size: number,
): Promise<{ rows: Row[]; total: number } | null> {
  if (level !== 'series') return groupedPage(ctx, ix, sel, level, select, sort, desc, offset, size);
  await loadEngineRanks(ctx, ix, sort);
  const positions = sort === null ? pagePositions(ix, sel, offset, size) : sortedSeries(ix, sel, sort, desc, offset, size);
  return positions && { rows: await rowsAt(ctx, ix, positions, select), total: sizeOf(ix, sel) };
}

/** The viewer link of each row (its study's modalities decide the viewer, as in /v3/viewer-url). */
async function addViewerLinks(ctx: AppContext, rows: Row[]): Promise<void> {
  const studies = [...new Set(rows.map((r) => String(r.StudyInstanceUID)))];
  const modalities = new Map<string, string[]>();
  if (studies.length > 0) {
    const found = await ctx.engine.rows(
      `SELECT StudyInstanceUID AS s, list(DISTINCT Modality) FILTER (WHERE Modality IS NOT NULL) AS m FROM "index" WHERE StudyInstanceUID IN (${studies.map(() => '?').join(', ')}) GROUP BY 1`,
      studies,
    );
    for (const f of found) modalities.set(String(f.s), (f.m as string[] | null) ?? []);
  }
  for (const r of rows) {
    const study = String(r.StudyInstanceUID);
    const series = typeof r.SeriesInstanceUID === 'string' ? r.SeriesInstanceUID : null;
    r.viewer_url = viewerLink(ctx.config.viewerBaseUrl, defaultViewer(modalities.get(study) ?? []), study, series);
  }
}
