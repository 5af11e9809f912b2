// What a user saved, line by line: manifests of the portal, of the public
// Python client and of ours (s5cmd `cp` lines, s3:// or gs:// URL lists, for
// either store, with # comments and a header line), or bare identifiers
// (SeriesInstanceUID, StudyInstanceUID, crdc_series_uuid). Pure: no engine,
// so the service and the downloader read a line by the same rule.

import { isSeriesUuid } from './series-folder.ts';

export type SavedLine =
  | { type: 'blank' }
  | { type: 'comment' }
  /** A line of column names (a CSV or a manifest's first line), not an identifier. */
  | { type: 'header'; text: string }
  /** A series folder, from a URL (bucket set) or written bare. */
  | { type: 'uuid'; value: string; bucket: string | null; url: string | null }
  /** A DICOM UID: a SeriesInstanceUID or a StudyInstanceUID (the data says which). */
  | { type: 'uid'; value: string }
  | { type: 'invalid'; reason: string };

/** DICOM UIDs (PS3.5 9.1): digits and dots, components without leading zeros, at most 64 characters. */
const DICOM_UID = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))+$/;
export const isDicomUid = (v: string): boolean => v.length <= 64 && DICOM_UID.test(v);

/** Longest line read (characters): a cp line with a deep destination is a few hundred; longer is refused unread, so one line costs little. */
export const MAX_LINE_CHARS = 4096;

const URL_IN_LINE = /(?:s3|gs):\/\/[^\s'"]*/;
const HEADER = /^[A-Za-z_][A-Za-z0-9_]*(\s*[,;\t]\s*[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Read one line. `first` says whether no identifier, URL or header came before it (a header is only the first such line). */
export function parseSavedLine(raw: string, first: boolean): SavedLine {
  if (raw.length > MAX_LINE_CHARS) return { type: 'invalid', reason: `a line of more than ${MAX_LINE_CHARS} characters: no identifier, URL or cp line is that long` };
  const line = raw.trim();
  if (line === '') return { type: 'blank' };
  if (line.startsWith('#')) return { type: 'comment' };
  const url = URL_IN_LINE.exec(line)?.[0];
  if (url !== undefined) {
    const m = /^(s3|gs):\/\/([^/]+)\/([^/]*)(\/.*)?$/.exec(url);
    if (!m) return { type: 'invalid', reason: `${url} names no series folder: expected s3://<bucket>/<crdc_series_uuid>/* (or gs://)` };
    const folder = m[3]!;
    if (!isSeriesUuid(folder)) return { type: 'invalid', reason: `the folder ${JSON.stringify(folder)} of ${url} is not a crdc_series_uuid (s3://<bucket>/<crdc_series_uuid>/*)` };
    return { type: 'uuid', value: folder.toLowerCase(), bucket: m[2]!, url };
  }
  if (/^cp\s/.test(line)) return { type: 'invalid', reason: 'a cp line without an s3:// or gs:// source' };
  // One identifier per line; a trailing comma or quotes (a CSV column) are tolerated.
  const word = line.replace(/^["']|["',;]+$/g, '').replace(/^["']|["']$/g, '');
  if (isSeriesUuid(word)) return { type: 'uuid', value: word.toLowerCase(), bucket: null, url: null };
  if (isDicomUid(word)) return { type: 'uid', value: word };
  if (first && HEADER.test(line)) return { type: 'header', text: line };
  return {
    type: 'invalid',
    reason: 'not an identifier or URL: expected a SeriesInstanceUID or StudyInstanceUID (digits and dots), a crdc_series_uuid, an s3:// or gs:// URL of a series folder, or an s5cmd cp line',
  };
}

/** Every line of a text, numbered from 1 (a final newline adds no line). */
export function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
