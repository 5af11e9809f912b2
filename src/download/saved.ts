// A saved manifest read through the service's resolve route: each line
// becomes the series version to download — the version it named when the
// user asks for the manifest as saved (--as-saved: earlier versions stay in
// the stores), else the release's current one — and every line that names
// nothing to download (unknown, invalid, removed without --as-saved, a study)
// is reported with its number, never dropped silently.

import type { ResolveWire } from '../contract/resolve-schemas.ts';
import { parseSavedLine, splitLines } from '../core/rules/saved-lines.ts';
import type { SeriesTarget } from './layout.ts';
import { SeenSet, type Seen } from './seen-set.ts';
import type { Reporter } from './report.ts';
import type { StoreKey, StoreMeta } from './service.ts';

type Line = ResolveWire['lines'][number];

export interface SavedPlan {
  targets: SeriesTarget[];
  /** Lines that name nothing downloaded, with why. */
  unresolved: { line: number; why: string }[];
  /** Folders of current versions among the targets (their licenses are the service's). */
  currentUuids: string[];
  sizeMB: number;
  /** URL lines unknown to the release, fetched as written (their size is not known before listing). */
  unknownAsWritten: number;
}

function varsOfLine(l: Line): NonNullable<SeriesTarget['vars']> {
  return { collection_id: l.collection_id, PatientID: l.PatientID, StudyInstanceUID: l.StudyInstanceUID, SeriesInstanceUID: l.SeriesInstanceUID, Modality: l.Modality ?? '' };
}

/**
 * Lines of a manifest that cannot be read (not an identifier or URL): the
 * whole manifest is refused, naming each. Fed line by line (a manifest is
 * streamed); `count` is every such line, `shown` the first `keep` of them.
 */
export class InvalidLines {
  count = 0;
  readonly shown: string[] = [];
  private first = true;
  constructor(
    private readonly file: string,
    private readonly keep = 20,
  ) {}

  add(raw: string, lineNo: number): void {
    const p = parseSavedLine(raw, this.first);
    if (p.type === 'invalid') {
      this.count++;
      if (this.shown.length < this.keep) this.shown.push(`${this.file}:${lineNo}: ${p.reason}: ${raw.trim().slice(0, 120)}`);
    }
    if (p.type !== 'blank' && p.type !== 'comment') this.first = false;
  }
}

/**
 * The series version each line names, under the chosen store's bucket names.
 * `text` is what was resolved (a whole manifest or one chunk of it: line
 * numbers are the answer's); `seen` carries the series already planned by
 * earlier chunks, so a series named twice anywhere is downloaded once.
 */
export function planSaved(r: ResolveWire, text: string | string[], source: StoreKey, asSaved: boolean, seen: Seen = new SeenSet()): SavedPlan {
  const raw = typeof text === 'string' ? splitLines(text) : text;
  const map = (r.stores as Record<StoreKey, StoreMeta>)[source].bucket_map;
  const plan: SavedPlan = { targets: [], unresolved: [], currentUuids: [], sizeMB: 0, unknownAsWritten: 0 };
  const add = (l: Line, uuid: string, awsBucket: string | null, sizeMB: number | null, license: string | null, current: boolean) => {
    if (seen.has(uuid)) return;
    seen.add(uuid);
    const bucket = map[awsBucket ?? ''] ?? awsBucket;
    if (!bucket) {
      plan.unresolved.push({ line: l.line, why: `the release records no bucket for ${uuid}` });
      return;
    }
    plan.targets.push({
      url: `s3://${bucket}/${uuid}/*`,
      bucket,
      prefix: `${uuid}/`,
      vars: { ...varsOfLine(l), crdc_series_uuid: uuid, bucket },
      license,
      sizeMB,
    });
    if (current) plan.currentUuids.push(uuid);
    plan.sizeMB += sizeMB ?? 0;
  };
  for (const l of r.lines) {
    const cur = l.current;
    const named = l.named ?? (l.versions && l.versions.length > 0 ? l.versions[l.versions.length - 1] : undefined);
    const written = parseSavedLine(raw[l.line - 1] ?? '', false);
    const url = written.type === 'uuid' ? written.url : null;
    // A URL of one object (s3://bucket/<uuid>/<key>), or a folder the release does not know: fetched as written.
    const asWritten = url !== null && (l.class === 'unknown' || (l.class === 'current' && !/\/\*?$/.test(url.slice(url.indexOf(l.id!) + l.id!.length))));
    if (asWritten && written.type === 'uuid' && written.bucket !== null) {
      const key = url.slice(url.indexOf(l.id!)).replace(/\*$/, '');
      if (seen.has(`${written.bucket}/${key}`)) continue;
      seen.add(`${written.bucket}/${key}`);
      plan.targets.push({ url: url.replace(/^gs:/, 's3:'), bucket: written.bucket, prefix: key, vars: l.class === 'current' ? { ...varsOfLine(l), crdc_series_uuid: l.id!, bucket: written.bucket } : { crdc_series_uuid: l.id!, bucket: written.bucket } });
      if (l.class === 'unknown') plan.unknownAsWritten++;
      continue;
    }
    if (l.kind === 'StudyInstanceUID') {
      plan.unresolved.push({ line: l.line, why: `a study (${l.id}, ${l.series_current ?? 0} series now): list its series, e.g. idqs download --filters '{"terms":{"StudyInstanceUID":["${l.id}"]}}'` });
    } else if (l.class === 'current' && cur) add(l, cur.crdc_series_uuid, cur.aws_bucket, cur.series_size_MB, cur.license_short_name, true);
    else if (l.class === 'revised' && cur) {
      if (asSaved && l.named) add(l, l.named.crdc_series_uuid, l.named.aws_bucket, l.named.series_size_MB, cur.license_short_name, false);
      else add(l, cur.crdc_series_uuid, cur.aws_bucket, cur.series_size_MB, cur.license_short_name, true);
    } else if (l.class === 'removed' && named) {
      if (asSaved) add(l, named.crdc_series_uuid, named.aws_bucket, named.series_size_MB, null, false);
      else plan.unresolved.push({ line: l.line, why: `${l.id}: removed from the release after v${l.last_idc_version}; --as-saved downloads the version saved (${named.series_aws_url})` });
    } else if (l.class === 'header') continue;
    else plan.unresolved.push({ line: l.line, why: `${l.id ?? ''}${l.id ? ': ' : ''}${l.message ?? l.class}` });
  }
  return plan;
}

/** Say, as they come, the lines of one resolved chunk that name nothing downloaded (line numbers of the whole file). */
export function reportUnresolved(plan: SavedPlan, file: string, rep: Reporter): void {
  for (const u of plan.unresolved) rep.warn(`${file}:${u.line}: not downloaded: ${u.why}`);
}

/** Say what the whole manifest resolved to, once every chunk is read. */
export function reportSavedTotals(idcVersion: string, t: ResolveWire['totals'], unknownAsWritten: number, unresolved: LineTally, file: string, asSaved: boolean, rep: Reporter): void {
  rep.info(
    `${file} against ${idcVersion}: ${t.current} current, ${t.revised} revised (${asSaved ? 'downloading the versions saved' : 'downloading the current versions; --as-saved for the versions saved'}), ` +
      `${t.removed} removed, ${t.unknown} unknown, ${t.invalid} invalid`,
  );
  if (unknownAsWritten > 0) rep.warn(`${unknownAsWritten} line(s) of ${file} name folders unknown to ${idcVersion}: fetched as written, into <crdc_series_uuid>/ folders`);
  if (unresolved.count > 0) rep.warn(`${unresolved.count} line(s) of ${file} name nothing downloaded (listed above): ${unresolved.recap()}`);
}

/** Line numbers for the final recap, in bounded memory: how many, and the first 50. */
export class LineTally {
  count = 0;
  readonly first: number[] = [];
  add(line: number): void {
    this.count++;
    if (this.first.length < 50) this.first.push(line);
  }
  recap(): string {
    return `line${this.count > 1 ? 's' : ''} ${this.first.join(', ')}${this.count > this.first.length ? ` and ${this.count - this.first.length} more` : ''}`;
  }
}
