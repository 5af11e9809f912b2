// The answer of a resolve, written out in blocks rather than one string: the
// JSON document (for 100,000 lines tens of MB that then never exist at once,
// and that a compressor can take block by block while the next is written),
// or a TSV table of one row per line, about half the size (a version's bucket
// instead of its URL, which is s3://<bucket>/<crdc_series_uuid>/*) and far
// cheaper for a client to read. The lines' text comes from the engine
// (resolve-sql.ts); here it is framed.

import type { ResolveText } from './resolve.ts';

/** The JSON document of a resolve, in blocks: {idc_version, totals, lines, stores}, keys in that order. */
export function* resolveJsonBlocks(r: ResolveText): Generator<Buffer> {
  if (r.format !== 'json') throw new Error(`resolveJsonBlocks was given the ${r.format} form`);
  const comma = Buffer.from(',');
  let first = true;
  yield Buffer.from(`{"idc_version":${JSON.stringify(r.idc_version)},"totals":${JSON.stringify(r.totals)},"lines":[`);
  for (const block of r.blocks()) {
    if (!first) yield comma;
    first = false;
    yield block;
  }
  yield Buffer.from(`],"stores":${JSON.stringify(r.stores)}}`);
}

/** Columns of the TSV form, one row per line of the answer (blank and comment lines are counted in the totals only). */
export const RESOLVE_TSV_COLUMNS = [
  'line',
  'class',
  'kind',
  'id',
  'bucket',
  'collection_id',
  'PatientID',
  'StudyInstanceUID',
  'SeriesInstanceUID',
  'Modality',
  'current_crdc_series_uuid',
  'current_since_idc_version',
  'current_aws_bucket',
  'current_series_size_MB',
  'license_short_name',
  'named_crdc_series_uuid',
  'named_min_idc_version',
  'named_max_idc_version',
  'named_aws_bucket',
  'versions',
  'last_idc_version',
  'series_current',
  'series_removed',
  'message',
] as const;

/** The first line of the TSV form: the release and the totals, as a # comment a reader of the table skips. */
export function resolveTsvHead(r: Pick<ResolveText, 'idc_version' | 'totals'>): string {
  return `# resolved against ${r.idc_version}; totals ${JSON.stringify(r.totals)}`;
}

/** The TSV form in blocks: the comment line of totals, the column names, then a row per line. */
export function* resolveTsvBlocks(r: ResolveText): Generator<Buffer> {
  if (r.format !== 'tsv') throw new Error(`resolveTsvBlocks was given the ${r.format} form`);
  yield Buffer.from(`${resolveTsvHead(r)}\n${RESOLVE_TSV_COLUMNS.join('\t')}\n`);
  const newline = Buffer.from('\n');
  for (const block of r.blocks()) {
    yield block;
    yield newline;
  }
}
