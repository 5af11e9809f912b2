// A manifest file read as a stream, in bounded memory whatever its length
// (nlst's is 600,000 lines): lines come off the disk a chunk at a time, each
// chunk is resolved by the service and planned, and only the chunk is held.
// The first pass checks every line, reports each unresolved one with its
// number as it goes, and adds up the totals the user is shown before anything
// is downloaded (series, index size, licenses); the download pass reads and
// resolves the file again, chunk by chunk, while the files of the previous
// chunk transfer. What both passes keep is one entry per distinct series (so a
// series named twice is downloaded once): 16 bytes each, outside the heap
// (seen-set.ts).

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { ResolveWire } from '../contract/resolve-schemas.ts';
import type { Layout, SeriesTarget } from './layout.ts';
import { parseManifest } from './layout.ts';
import type { Reporter } from './report.ts';
import { SeenSet } from './seen-set.ts';
import { InvalidLines, LineTally, planSaved, reportSavedTotals, reportUnresolved } from './saved.ts';
import { RESOLVE_CHUNK, ServiceUnreachable, type LicenseRow, type ServiceClient, type StoreKey, type StoreMeta } from './service.ts';

export class ManifestError extends Error {}

/** The lines of a file, `size` at a time, with the number of the chunk's first line. */
export async function* lineChunks(file: string, size = RESOLVE_CHUNK): AsyncGenerator<{ first: number; lines: string[] }> {
  let input;
  try {
    input = createReadStream(file, { encoding: 'utf8' });
    await new Promise<void>((ok, fail) => input!.once('open', () => ok()).once('error', fail));
  } catch (e) {
    throw new ManifestError(`cannot read the manifest ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const rl = createInterface({ input, crlfDelay: Infinity });
  let lines: string[] = [];
  let first = 1;
  try {
    for await (const line of rl) {
      lines.push(line);
      if (lines.length === size) {
        yield { first, lines };
        first += lines.length;
        lines = [];
      }
    }
    if (lines.length > 0) yield { first, lines };
  } finally {
    rl.close();
    input.destroy();
  }
}

/** A license breakdown summed over chunks (what each license allows is the service's verdict). */
function addLicenses(into: Map<string | null, LicenseRow>, rows: LicenseRow[]): void {
  for (const l of rows) {
    const sum = into.get(l.license_short_name);
    if (sum) {
      sum.series += l.series;
      sum.size_MB += l.size_MB;
      sum.size_TB += l.size_TB;
    } else into.set(l.license_short_name, { ...l });
  }
}

export interface ManifestTotals {
  /** Distinct series to download. */
  series: number;
  stores: Record<StoreKey, StoreMeta> | null;
  /** Bytes by the index; null when some series' sizes are unknown before listing. */
  indexBytes: number | null;
  licenses: LicenseRow[] | null;
  /** Lines that name nothing downloaded: each counts as a failure. */
  unresolved: number;
  /** Their numbers, for the final report (the first 50 and how many more). */
  unresolvedRecap: string | null;
}

export class ManifestStream {
  /** Whether the service answers (decided on the first chunk of the first pass). */
  private online = true;
  private idcVersion: string | null = null;
  /** The series planned so far in the current pass: one table for both passes (cleared between them). */
  private readonly seen = new SeenSet();

  constructor(
    private readonly file: string,
    private readonly source: StoreKey,
    private readonly asSaved: boolean,
    private readonly api: ServiceClient,
    private readonly layout: Layout,
    private readonly out: string,
    private readonly chunk = RESOLVE_CHUNK,
  ) {}

  /** Refuse a manifest holding lines that are neither identifiers nor URLs, naming them (read once, line by line). */
  async check(): Promise<void> {
    const bad = new InvalidLines(this.file);
    for await (const c of lineChunks(this.file, this.chunk)) c.lines.forEach((l, i) => bad.add(l, c.first + i));
    if (bad.count > 0) {
      throw new ManifestError(
        `${bad.count} line(s) are not identifiers or URLs; fix or remove them:\n  ${bad.shown.join('\n  ')}${bad.count > bad.shown.length ? `\n  … and ${bad.count - bad.shown.length} more` : ''}`,
      );
    }
  }

  /** One chunk's answer from the service; a release switched between passes stops the run. */
  private async resolve(lines: string[]): Promise<ResolveWire> {
    const r = await this.api.resolveLines(lines);
    if (this.idcVersion !== null && r.idc_version !== this.idcVersion) {
      throw new ManifestError(`the service at ${this.api.base} now serves ${r.idc_version}, not ${this.idcVersion} as when the manifest was first read; run the command again`);
    }
    this.idcVersion = r.idc_version;
    return r;
  }

  /** The first pass: check what every line is, say it, and add up what the download will be. */
  async totals(rep: Reporter): Promise<ManifestTotals> {
    await this.check();
    const seen = this.seen;
    seen.clear();
    const licenses = new Map<string | null, LicenseRow>();
    const unresolved = new LineTally();
    const sums = { lines: 0, blank: 0, comments: 0, header: 0, current: 0, revised: 0, removed: 0, unknown: 0, invalid: 0 } satisfies ResolveWire['totals'];
    let series = 0;
    let sizeMB = 0;
    let unknownAsWritten = 0;
    let stores: ManifestTotals['stores'] = null;
    let read = 0;
    for await (const c of lineChunks(this.file, this.chunk)) {
      if (this.online) {
        let r: ResolveWire;
        try {
          r = await this.resolve(c.lines);
        } catch (e) {
          // Only a service that never answered means "offline"; one that goes away mid-way stops the run.
          if (!(e instanceof ServiceUnreachable) || c.first > 1) throw e;
          if (this.asSaved) throw new ManifestError(`--as-saved needs the service, which knows each line's version: ${e.message}`);
          this.online = false;
          if (this.layout.needsService) rep.warn(`${e.message}; without it the layout cannot be filled: files go to ${join(this.out, '<crdc_series_uuid>')}/`);
          else rep.info(`note: ${e.message}; sizes and licenses are not known before listing`);
        }
        if (this.online) {
          stores ??= r!.stores as ManifestTotals['stores'];
          for (const k of Object.keys(sums) as (keyof typeof sums)[]) sums[k] += r!.totals[k];
          const plan = planSaved(r!, c.lines, this.source, this.asSaved, seen);
          // The answer numbers the chunk's lines from 1; the user reads the file's numbers.
          for (const u of plan.unresolved) u.line += c.first - 1;
          reportUnresolved(plan, this.file, rep);
          for (const u of plan.unresolved) unresolved.add(u.line);
          if (plan.currentUuids.length > 0) addLicenses(licenses, (await this.api.lookupSeries(plan.currentUuids)).licenses);
          series += plan.targets.length;
          sizeMB += plan.sizeMB;
          unknownAsWritten += plan.unknownAsWritten;
        }
      }
      if (!this.online) series += this.offlineTargets(c, seen).length;
      read += c.lines.length;
      if (read % 100_000 < c.lines.length) rep.info(`read ${read} lines of ${this.file}…`);
    }
    if (this.online && this.idcVersion !== null) reportSavedTotals(this.idcVersion, sums, unknownAsWritten, unresolved, this.file, this.asSaved, rep);
    return {
      series,
      stores,
      indexBytes: this.online && unknownAsWritten === 0 ? Math.round(sizeMB * 1e6) : null,
      licenses: this.online ? [...licenses.values()].sort((a, b) => b.series - a.series) : null,
      unresolved: unresolved.count,
      unresolvedRecap: unresolved.count > 0 ? unresolved.recap() : null,
    };
  }

  /** Without the service: URL lines as written, into <crdc_series_uuid>/ folders. */
  private offlineTargets(c: { first: number; lines: string[] }, seen: SeenSet): SeriesTarget[] {
    let targets: SeriesTarget[];
    try {
      targets = parseManifest(c.lines, this.file, c.first, seen);
    } catch (e) {
      throw new ManifestError((e as Error).message);
    }
    for (const t of targets) t.vars = { crdc_series_uuid: t.prefix.split('/')[0]!, bucket: t.bucket };
    return targets;
  }

  /** The download pass: the targets again, chunk by chunk, in the manifest's order (lines were reported by the first pass). */
  async *targets(): AsyncGenerator<SeriesTarget[]> {
    const seen = this.seen;
    seen.clear();
    for await (const c of lineChunks(this.file, this.chunk)) {
      if (!this.online) {
        yield this.offlineTargets(c, seen);
        continue;
      }
      const r = await this.resolve(c.lines);
      yield planSaved(r, c.lines, this.source, this.asSaved, seen).targets;
    }
  }
}
