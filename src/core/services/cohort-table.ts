// Tables of a cohort for browsing (POST /v3/cohort/table): one page of its
// collections, patients, studies or series, sorted on the engine by any
// column, with the total number of rows. Studies and series carry the link
// of the viewer /v3/viewer-url would choose for them.

import type { AppContext } from '../context.ts';
import type { Row } from '../engine/engine.ts';
import { didYouMean, field, invalidQuery, invalidRequest, msg } from '../errors.ts';
import { compileFilter, type FilterObject } from '../filters/v3.ts';
import { suggest } from '../suggest.ts';
import type { FiltersApplied } from './cohort.ts';
import { answer } from '../planner/plan.ts';
import type { TablePageAsk } from '../planner/questions.ts';
import { MANIFEST_ORDER } from '../rules/manifest-order.ts';
import { round } from './numbers.ts';
import { defaultViewer, viewerLink } from './viewer.ts';
import { volviewFor, type VolviewSeries } from './volview.ts';

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

  const ask = tableAsk(level, sort, order, page * pageSize, pageSize);
  const [rows, n] = await Promise.all([answer('tableRows', ctx, compiled, ask), answer('tableTotal', ctx, compiled, ask)]);
  if (level === 'series') {
    for (const r of rows) if (typeof r.series_size_MB === 'number') r.series_size_MB = round(r.series_size_MB, 3);
  }
  if (level === 'studies' || level === 'series') await addViewerLinks(ctx, rows);
  return {
    level,
    columns: [...def.columns.map((c) => c.name), ...(level === 'studies' || level === 'series' ? ['viewer_url', 'volview_url'] : [])],
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

/** The question a page of the table asks the planner (the level's columns, its sort and its page). */
export function tableAsk(level: TableLevel, sort: string | null, order: 'asc' | 'desc', offset: number, size: number): TablePageAsk {
  const def = LEVELS[level];
  return {
    level,
    keys: def.keys,
    select: def.columns.map((c) => `${c.sql} AS "${c.name}"`).join(', '),
    sort,
    desc: order === 'desc',
    orderBy: `${sort ? `"${sort}" ${order.toUpperCase()} NULLS LAST, ` : ''}${def.unique}`,
    offset,
    size,
  };
}

/** The viewer link of each row (its study's modalities decide the viewer, as in /v3/viewer-url) and its VolView link, or null where VolView cannot open it. */
async function addViewerLinks(ctx: AppContext, rows: Row[]): Promise<void> {
  const studies = [...new Set(rows.map((r) => String(r.StudyInstanceUID)))];
  const ofStudy = new Map<string, (VolviewSeries & { id: string })[]>();
  if (studies.length > 0) {
    const found = await ctx.engine.rows(
      `SELECT StudyInstanceUID AS s, SeriesInstanceUID AS id, aws_bucket AS b, crdc_series_uuid AS u, Modality AS m FROM "index"
       WHERE StudyInstanceUID IN (${studies.map(() => '?').join(', ')}) ORDER BY SeriesInstanceUID`,
      studies,
    );
    for (const f of found) {
      const list = ofStudy.get(String(f.s)) ?? [];
      list.push({ id: String(f.id), bucket: String(f.b), uuid: String(f.u), modality: typeof f.m === 'string' ? f.m : null });
      ofStudy.set(String(f.s), list);
    }
  }
  for (const r of rows) {
    const study = String(r.StudyInstanceUID);
    const series = typeof r.SeriesInstanceUID === 'string' ? r.SeriesInstanceUID : null;
    const all = ofStudy.get(study) ?? [];
    const modalities = [...new Set(all.flatMap((x) => (x.modality === null ? [] : [x.modality])))];
    r.viewer_url = viewerLink(ctx.config.viewerBaseUrl, defaultViewer(modalities), study, series);
    r.volview_url = volviewFor(ctx.config.volviewUrl, series === null ? all : all.filter((x) => x.id === series));
  }
}
