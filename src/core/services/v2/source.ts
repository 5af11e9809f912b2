// Where /v2 reads its rows. A generated database has the /v2 tables
// (v2.dicom_series, v2.dicom_instances, v2.series_totals and the TCGA tables);
// a real release has none of them, but its index is one row per series with
// most of dicom_pivot's per-series fields, and collections_index holds the
// per-collection ones (cancer type, species, tumour location, program). There
// /v2 answers at series level and above from those two tables; instance fields
// and filters, and TCGA ones without their tables, are named in a 400.

import type { AppContext } from '../../context.ts';
import { invalidQuery, msg } from '../../errors.ts';
import { qi } from '../../registry/tables.ts';
import type { V2Attribute, V2Field, V2Source } from '../../registry/v2-api.ts';
import { PER_INSTANCE_COLUMNS } from '../../registry/v2.ts';
import { presentColumns } from '../present-columns.ts';

export interface V2Rows {
  /** 'tables': the /v2 tables; 'index': the release's index (series level only). */
  kind: 'tables' | 'index';
  /** A relation of one row per series with the dicom_pivot per-series columns present (used as `s`). */
  series: string;
  /** A join clause giving `st` (SeriesInstanceUID, instance_count, total_bytes). */
  totalsJoin: string;
  /** Per-instance rows exist (v2.dicom_instances). */
  instances: boolean;
  /** Which TCGA sources have their table. */
  tcga: Set<V2Source>;
  /** dicom_pivot columns the series relation has (null: all of them). */
  seriesColumns: Set<string> | null;
}

/** dicom_pivot per-series columns read from the index, by their name there. */
export const FROM_INDEX: Record<string, string> = {
  analysis_results_id: 'analysis_result_id',
  aws_bucket: 'aws_bucket',
  BodyPartExamined: 'BodyPartExamined',
  collection_id: 'collection_id',
  crdc_series_uuid: 'crdc_series_uuid',
  crdc_study_uuid: 'crdc_study_uuid',
  gcs_bucket: 'gcs_bucket',
  license_short_name: 'license_short_name',
  Manufacturer: 'Manufacturer',
  ManufacturerModelName: 'ManufacturerModelName',
  Modality: 'Modality',
  PatientID: 'PatientID',
  SeriesDescription: 'SeriesDescription',
  SeriesInstanceUID: 'SeriesInstanceUID',
  SeriesNumber: 'SeriesNumber',
  SOPClassUID: 'SOPClassUID',
  source_DOI: 'source_DOI',
  StudyDate: 'StudyDate',
  StudyDescription: 'StudyDescription',
  StudyInstanceUID: 'StudyInstanceUID',
};

/** dicom_pivot per-collection columns read from collections_index. */
export const FROM_COLLECTIONS: Record<string, string> = {
  CancerType: 'cancer_types',
  tcia_species: 'species',
  tcia_tumorLocation: 'tumor_locations',
  Program: 'program_id',
};

const hasAll = (ctx: AppContext, tables: string[]) => tables.every((t) => ctx.catalog.v2Tables.includes(t));

/** The rows /v2 reads on this database, or null when it has neither the /v2 tables nor an index. */
export function v2Rows(ctx: AppContext): V2Rows | null {
  // Cheap (names only): computed per call, so it follows the catalog.
  const tcga = new Set<V2Source>((['tcga_clinical_rel9', 'tcga_biospecimen_rel9'] as const).filter((t) => ctx.catalog.v2Tables.includes(t)));
  if (hasAll(ctx, ['dicom_series', 'series_totals'])) {
    return {
      kind: 'tables',
      series: 'v2.dicom_series',
      totalsJoin: 'JOIN v2.series_totals st ON st."SeriesInstanceUID" = s."SeriesInstanceUID"',
      instances: ctx.catalog.v2Tables.includes('dicom_instances'),
      tcga,
      seriesColumns: null,
    };
  }
  if (!ctx.catalog.tables.includes('index')) return null;
  const idx = presentColumns(ctx, 'index', Object.values(FROM_INDEX));
  const cols = presentColumns(ctx, 'collections_index', Object.values(FROM_COLLECTIONS));
  const select: string[] = [];
  const columns = new Set<string>();
  for (const [name, col] of Object.entries(FROM_INDEX)) {
    if (!idx.has(col)) continue;
    select.push(`x.${qi(col)} AS ${qi(name)}`);
    columns.add(name);
  }
  for (const [name, col] of Object.entries(FROM_COLLECTIONS)) {
    if (!cols.has(col)) continue;
    select.push(`c.${qi(col)} AS ${qi(name)}`);
    columns.add(name);
  }
  const join = cols.size > 0 ? ' LEFT JOIN collections_index c ON c.collection_id = x.collection_id' : '';
  const size = presentColumns(ctx, 'index', ['instanceCount', 'series_size_MB']);
  // series_size_MB is decimal megabytes (bytes / 1e6): group_size is rounded to the byte.
  const totals = [
    `"SeriesInstanceUID"`,
    size.has('instanceCount') ? `instanceCount::BIGINT AS instance_count` : `NULL::BIGINT AS instance_count`,
    size.has('series_size_MB') ? `round(series_size_MB * 1e6)::BIGINT AS total_bytes` : `NULL::BIGINT AS total_bytes`,
  ];
  return {
    kind: 'index',
    series: `(SELECT ${select.join(', ')} FROM "index" x${join})`,
    totalsJoin: `JOIN (SELECT ${totals.join(', ')} FROM "index") st ON st."SeriesInstanceUID" = s."SeriesInstanceUID"`,
    instances: false,
    tcga,
    seriesColumns: columns,
  };
}

/** The rows, or the reason /v2 cannot answer at all here. */
export function requireV2Rows(ctx: AppContext): V2Rows {
  const rows = v2Rows(ctx);
  if (!rows) throw invalidQuery('This database has neither the /v2 tables nor an index of series, so no /v2 manifest can be built from it.');
  return rows;
}

/** Why a field or filter of `source` reading `column` cannot be answered here; null when it can. */
export function whyNot(rows: V2Rows, source: V2Source, column: string, perInstance: boolean): string | null {
  if (source !== 'dicom_pivot') {
    return rows.tcga.has(source) ? null : `the TCGA table ${source} is not part of this release (it comes with generated /v2 data only)`;
  }
  if (perInstance && !rows.instances) {
    return `it varies per instance, and this release has no per-instance table: its index has one row per series, so /v2 answers at series, study, patient, collection and version level here`;
  }
  if (rows.seriesColumns && !perInstance && !rows.seriesColumns.has(column)) {
    return `this release's index and collections_index have no column for it`;
  }
  return null;
}

/** Store buckets are stored under the public service's column names. */
const BUCKET_COLUMNS: Record<string, string> = { cloud1_bucket: 'aws_bucket', cloud2_bucket: 'gcs_bucket' };

/** Why a manifest field cannot be answered here; null when it can. */
export const fieldWhyNot = (rows: V2Rows, f: V2Field) => whyNot(rows, f.source, BUCKET_COLUMNS[f.name] ?? f.name, f.level === 'instance');

/** Why a filter attribute cannot be answered here; null when it can. */
export const filterWhyNot = (rows: V2Rows, a: V2Attribute) => whyNot(rows, a.source, a.name, PER_INSTANCE_COLUMNS.includes(a.name));

/** A 400 naming what cannot be answered and why. */
export function notAnswerable(kind: 'field' | 'filter', name: string, why: string) {
  return invalidQuery(msg`${name} is a valid ${kind}, but this server cannot answer it: ${why}.`);
}
