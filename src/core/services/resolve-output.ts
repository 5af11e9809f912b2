// The answer of a resolve, written out in blocks rather than one string: the
// JSON document (exactly what JSON.stringify gives, for 100,000 lines tens of
// MB that then never exist at once, and that a compressor can take block by
// block while the next is written), or a TSV table of one row per line,
// about half the size (a version's bucket instead of its URL, which is
// s3://<bucket>/<crdc_series_uuid>/*) and far cheaper for a client to read.

import type { PriorVersion, ResolvedLine, ResolveResult } from './resolve.ts';

/** Lines per block: big enough that a block costs little per line, small enough to start sending early. */
const BLOCK_LINES = 2000;

/** The JSON document of a resolve, in blocks whose concatenation is JSON.stringify(r). */
export function* resolveJsonBlocks(r: ResolveResult): Generator<Buffer> {
  // Keys in the order of ResolveResult (idc_version, totals, lines, stores), as JSON.stringify writes them.
  const { idc_version, totals, lines, stores, ...rest } = r;
  if (Object.keys(rest).length > 0) throw new Error(`resolveJsonBlocks does not write ${Object.keys(rest).join(', ')}`);
  yield Buffer.from(`{"idc_version":${JSON.stringify(idc_version)},"totals":${JSON.stringify(totals)},"lines":[`);
  for (let i = 0; i < lines.length; i += BLOCK_LINES) {
    // One native call per block, its text encoded once: the array's bytes with the opening bracket turned into
    // the comma that follows the previous block (none before the first) and the closing one left out.
    const part = Buffer.from(JSON.stringify(lines.slice(i, i + BLOCK_LINES)));
    if (i > 0) part[0] = 0x2c;
    yield part.subarray(i > 0 ? 0 : 1, part.length - 1);
  }
  yield Buffer.from(`],"stores":${JSON.stringify(stores)}}`);
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

/** A cell: empty for absent or null; tabs and line breaks (a header line's own text) become spaces. */
function cell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'number' ? String(v) : v.replace(/[\t\r\n]/g, ' ');
}

/** Every earlier version in one cell: `<crdc_series_uuid> v<min>-v<max> <aws_bucket>` (bucket empty when not recorded), separated by `;`. */
export function versionsCell(versions: PriorVersion[] | undefined): string {
  if (!versions) return '';
  return versions.map((v) => `${v.crdc_series_uuid} v${v.min_idc_version}-v${v.max_idc_version} ${v.aws_bucket ?? ''}`.trimEnd()).join(';');
}

/** The TSV row of a line, in the order of RESOLVE_TSV_COLUMNS. */
export function resolveTsvRow(l: ResolvedLine): string {
  const c = l.current;
  const n = l.named;
  return [
    l.line,
    l.class,
    l.kind,
    l.id,
    l.bucket,
    l.collection_id,
    l.PatientID,
    l.StudyInstanceUID,
    l.SeriesInstanceUID,
    l.Modality,
    c?.crdc_series_uuid,
    c?.since_idc_version,
    c?.aws_bucket,
    c?.series_size_MB,
    c?.license_short_name,
    n?.crdc_series_uuid,
    n?.min_idc_version,
    n?.max_idc_version,
    n?.aws_bucket,
    versionsCell(l.versions),
    l.last_idc_version,
    l.series_current,
    l.series_removed,
    l.message,
  ]
    .map(cell)
    .join('\t');
}

/** The first line of the TSV form: the release and the totals, as a # comment a reader of the table skips. */
export function resolveTsvHead(r: ResolveResult): string {
  return `# resolved against ${r.idc_version}; totals ${JSON.stringify(r.totals)}`;
}

/** The TSV form in blocks: the comment line of totals, the column names, then a row per line. */
export function* resolveTsvBlocks(r: ResolveResult): Generator<Buffer> {
  yield Buffer.from(`${resolveTsvHead(r)}\n${RESOLVE_TSV_COLUMNS.join('\t')}\n`);
  for (let i = 0; i < r.lines.length; i += BLOCK_LINES) {
    yield Buffer.from(r.lines.slice(i, i + BLOCK_LINES).map(resolveTsvRow).join('\n') + '\n');
  }
}
