// Resolve what a user saved (a manifest, a list of UIDs) against the served
// release: every line is current, revised, removed, unknown, a header or not
// an identifier at all, with line numbers and totals, so nothing is dropped
// silently. Prior versions come from prior_versions_index (series versions no
// longer in the release, with the releases that had them and their URLs: the
// objects stay in the stores). Each line's form is read here; one query looks
// every identifier up and writes each line's JSON object or TSV row
// (resolve-sql.ts), so no object per line is built for the route. The types
// below describe that JSON, which the MCP tool and the CLI read parsed.

import type { DuckDBBlobVector } from '@duckdb/node-api';
import type { AppContext } from '../context.ts';
import { field, invalidQuery, msg, setting, tooLarge } from '../errors.ts';
import { storesInfo, type DownloadInfo } from './manifest.ts';
import { LEGACY_BUCKETS } from '../rules/stores.ts';
import { parseSavedLine, splitLines } from '../rules/saved-lines.ts';
import { resolveSql, type ResolveFormat } from './resolve-sql.ts';
import { resolveJsonBlocks } from './resolve-output.ts';
import { breathe } from '../turns.ts';

export type ResolveClass = 'current' | 'revised' | 'removed' | 'unknown' | 'header' | 'invalid';
export type IdKind = 'crdc_series_uuid' | 'SeriesInstanceUID' | 'StudyInstanceUID' | 'DICOM UID';

/** One version of a series that the served release no longer has. */
export interface PriorVersion {
  crdc_series_uuid: string;
  min_idc_version: number;
  max_idc_version: number;
  series_aws_url: string | null;
  aws_bucket: string | null;
  series_size_MB: number | null;
}

/** The version of a series the served release has. */
export interface CurrentVersion {
  crdc_series_uuid: string;
  /** Release of this revision (series_revised_idc_version). */
  since_idc_version: number | null;
  series_aws_url: string | null;
  aws_bucket: string | null;
  series_size_MB: number | null;
  license_short_name: string | null;
}

export interface ResolvedLine {
  line: number;
  class: ResolveClass;
  kind?: IdKind;
  /** The identifier read from the line (a UUID in lower case). */
  id?: string;
  /** Bucket of a URL line. */
  bucket?: string;
  collection_id?: string;
  PatientID?: string;
  StudyInstanceUID?: string;
  SeriesInstanceUID?: string;
  Modality?: string | null;
  /** Of a crdc_series_uuid line: the version it names, when the release no longer has it. */
  named?: PriorVersion;
  current?: CurrentVersion;
  /** Versions of the series the release no longer has, oldest first (revised and removed series). */
  versions?: PriorVersion[];
  /** Last release that had a removed series (or study). */
  last_idc_version?: number;
  /** Of a study line: its series in the release, and its series the release no longer has. */
  series_current?: number;
  series_removed?: number;
  /** Why a line is invalid or unknown, or a remark (a bucket no store has). */
  message?: string;
}

export interface ResolveTotals {
  lines: number;
  blank: number;
  comments: number;
  header: number;
  current: number;
  revised: number;
  removed: number;
  unknown: number;
  invalid: number;
}

export interface ResolveResult {
  /** The release the lines were resolved against (v<number>). */
  idc_version: string;
  totals: ResolveTotals;
  /** Every line that is not blank or a comment, in order. */
  lines: ResolvedLine[];
  /** Where the objects of every version are (current and prior versions share the buckets). */
  stores: DownloadInfo['stores'];
}

/** Where the lines come from: a text (a manifest file), the lines of a text already split (as a route reads them), or identifiers one per entry. */
export type ResolveInput = { text: string } | { textLines: string[] } | { ids: string[] };

/** The refusal of more lines than one request resolves; `atLeast` when the reader stopped counting there. */
export function tooManyLines(count: number, max: number, member: 'text' | 'ids', atLeast = false) {
  return tooLarge(msg`${atLeast ? 'at least ' : ''}${count} lines were sent; one request resolves at most ${max} lines (${setting('IDQS_RESOLVE_MAX_LINES')}): split the ${field(member)} into parts.`);
}


/** The answer of a resolve as text: the totals, and the lines' JSON objects or TSV rows in blocks, in line order. */
export interface ResolveText {
  idc_version: string;
  totals: ResolveTotals;
  stores: DownloadInfo['stores'];
  format: ResolveFormat;
  /** Blocks of lines (JSON objects joined by commas, or TSV rows joined by newlines, in UTF-8), in order. */
  blocks: () => Generator<Buffer>;
}

/** A TSV cell of text from the user: tabs and line breaks become spaces (lone surrogates become U+FFFD, as when it is encoded). */
const userCell = (v: string) => v.replace(/[\t\r\n]/g, ' ').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** The totals of the lines that need no lookup, and the bound values of resolveSql (see there). */
async function readLines(ctx: AppContext, input: ResolveInput, format: ResolveFormat): Promise<{ totals: ResolveTotals; params: (string | null)[] }> {
  const raw = 'text' in input ? splitLines(input.text) : 'textLines' in input ? input.textLines : input.ids;
  const max = ctx.config.resolveMaxLines;
  if (raw.length > max) throw tooManyLines(raw.length, max, 'ids' in input ? 'ids' : 'text');
  if (!ctx.catalog.tables.includes('prior_versions_index')) {
    throw invalidQuery('The served release has no prior_versions_index table, so earlier versions of series cannot be resolved; serve a release that has it (idc-index-data 19.0.0 or later).');
  }
  const totals: ResolveTotals = { lines: raw.length, blank: 0, comments: 0, header: 0, current: 0, revised: 0, removed: 0, unknown: 0, invalid: 0 };
  // Identifier lines travel as comma-joined lists (identifiers hold no comma); buckets and the text of header and
  // invalid lines come from the user and travel as JSON, escaped here exactly as JSON.stringify escapes them.
  const lineNos: number[] = [];
  const kinds: string[] = [];
  const ids: string[] = [];
  const bucketOf: string[] = [];
  const buckets = new Map<string, number>();
  /** JSON of each distinct bucket ({i, j, t, k}), written as it is met (like `other` below). */
  const bucketRows: string[] = [];
  const known = knownBuckets(ctx);
  // A header or invalid line's answer is its line number and the text after it, which repeats from line to line
  // (a manifest of junk is one reason 100,000 times): each distinct text travels once, each line as its number and
  // the text's number. Writing every line's JSON here took 0.3 s for 100,000 lines, and the engine then took
  // 35 MB of it in one piece, holding every other request.
  const otherLines: number[] = [];
  const otherTexts: number[] = [];
  const tails: string[] = [];
  const tailOf = new Map<string, number>();
  const otherLine = (line: number, cls: 'header' | 'invalid', message: string) => {
    totals[cls]++;
    const key = `${cls}\n${message}`;
    let t = tailOf.get(key);
    if (t === undefined) {
      t = tails.length;
      tailOf.set(key, t);
      // What follows the line number: the rest of its JSON object, or of its TSV row.
      tails.push(format === 'json' ? JSON.stringify({ line: 0, class: cls, message }).slice('{"line":0'.length) : `\t${cls}${'\t'.repeat(22)}${userCell(message)}`);
    }
    otherLines.push(line);
    otherTexts.push(t);
  };
  let first = true;
  for (let i = 0; i < raw.length; i++) {
    // About 1 µs a line, up to 10 for long junk: every 256 lines, other requests get their turn once a slice is used up.
    if ((i & 255) === 255) await breathe();
    const p = parseSavedLine(raw[i]!, first);
    if (p.type === 'blank') totals.blank++;
    else if (p.type === 'comment') totals.comments++;
    else {
      first = false;
      if (p.type === 'header') otherLine(i + 1, 'header', `a header line (${p.text.slice(0, 80)}), not an identifier`);
      else if (p.type === 'invalid') otherLine(i + 1, 'invalid', p.reason);
      else {
        lineNos.push(i + 1);
        ids.push(p.value);
        if (p.type === 'uuid') {
          kinds.push('u');
          let b = '';
          if (p.bucket !== null) {
            let n = buckets.get(p.bucket);
            if (n === undefined) {
              n = bucketRows.length;
              buckets.set(p.bucket, n);
              bucketRows.push(JSON.stringify({ i: n, j: JSON.stringify(p.bucket).slice(1, -1), t: userCell(p.bucket), k: known.has(p.bucket) }));
            }
            b = String(n);
          }
          bucketOf.push(b);
        } else {
          kinds.push('d');
          bucketOf.push('');
        }
      }
    }
  }
  const list = (a: string[] | number[]) => (a.length > 0 ? a.join(',') : null);
  return { totals, params: [list(lineNos), list(kinds), list(ids), list(bucketOf), `[${bucketRows.join(',')}]`, list(otherLines), list(otherTexts), JSON.stringify(tails)] };
}

/**
 * Resolve every line and write the answer's text in the engine: the lines are read here (each line's form), then
 * one query looks every identifier up and writes each line's JSON object (or TSV row) in line order.
 */
export async function resolveText(ctx: AppContext, input: ResolveInput, format: ResolveFormat): Promise<ResolveText> {
  const { totals, params } = await readLines(ctx, input, format);
  const { chunks } = await ctx.engine.materialize(resolveSql(format), params);
  // Rows: blk, txt, then the counts of current, revised, removed and unknown lines of the block.
  for (const chunk of chunks) {
    for (const [col, cls] of [[2, 'current'], [3, 'revised'], [4, 'removed'], [5, 'unknown']] as const) {
      const v = chunk.getColumnVector(col);
      for (let r = 0; r < chunk.rowCount; r++) totals[cls] += Number(v.getItem(r));
    }
  }
  function* blocks(): Generator<Buffer> {
    for (const chunk of chunks) {
      const v = chunk.getColumnVector(1) as DuckDBBlobVector;
      for (let r = 0; r < chunk.rowCount; r++) {
        const b = v.getItemBytes(r)!;
        yield Buffer.from(b.buffer, b.byteOffset, b.byteLength);
      }
    }
  }
  return { idc_version: ctx.dataset.release, totals, stores: storesInfo(ctx), format, blocks };
}

/** The answer as objects (for the MCP tool and the command line): the JSON document the route sends, parsed. */
export async function resolveSaved(ctx: AppContext, input: ResolveInput): Promise<ResolveResult> {
  const r = await resolveText(ctx, input, 'json');
  return JSON.parse(Buffer.concat([...resolveJsonBlocks(r)]).toString('utf8')) as ResolveResult;
}

/** Buckets of either store, under their names in both (a URL of a portal manifest may name either). */
function knownBuckets(ctx: AppContext): Set<string> {
  const out = new Set<string>(LEGACY_BUCKETS.keys());
  for (const store of [ctx.dataset.stores.cloud1, ctx.dataset.stores.cloud2]) {
    for (const [from, to] of Object.entries(store.bucket_map)) {
      out.add(from);
      out.add(to);
    }
  }
  return out;
}
