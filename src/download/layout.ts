// What to download and where it lands: manifest files (s3:// URLs or s5cmd
// `cp` lines) and the folder layout template, whose values become folder
// names by the service's own rule (src/core/rules/folder-name.ts).

import { folderName } from '../core/rules/folder-name.ts';
import { SeenSet, type Seen } from './seen-set.ts';

export interface SeriesTarget {
  /** The URL as written (for messages). */
  url: string;
  bucket: string;
  /** Key prefix to list (e.g. <crdc_series_uuid>/), or an exact key. */
  prefix: string;
  /** Values of the layout variables, when known (from the service). */
  vars?: Partial<Record<LayoutVar, string>>;
  license?: string | null;
  sizeMB?: number | null;
}

/** One s3://bucket/prefix URL; a trailing * lists the prefix, otherwise the exact key. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/\s]+)\/(\S*)$/.exec(url);
  if (!m) throw new Error(`${JSON.stringify(url)} is not an s3://bucket/key URL`);
  let prefix = m[2]!;
  if (prefix.endsWith('*')) prefix = prefix.slice(0, -1);
  if (prefix.includes('*')) throw new Error(`${JSON.stringify(url)}: only a trailing * is supported`);
  if (prefix === '') throw new Error(`${JSON.stringify(url)} names a whole bucket; a manifest lists series (s3://bucket/<crdc_series_uuid>/*)`);
  return { bucket: m[1]!, prefix };
}

function unquote(word: string): string {
  if (word.length >= 2 && ((word[0] === "'" && word.endsWith("'")) || (word[0] === '"' && word.endsWith('"')))) return word.slice(1, -1);
  return word;
}

/**
 * A manifest: one s3:// URL per line (manifest.txt), or s5cmd lines
 * `cp [flags] 's3://…' 'dir/'` (their destination is not used: files follow
 * --layout under --out). Blank lines and # comments are skipped; anything
 * else is an error naming the line. Duplicate URLs are listed once (`seen`
 * carries them across the chunks of a streamed manifest; `firstLine` numbers
 * a chunk's lines as in the whole file).
 */
export function parseManifest(text: string | string[], file = 'manifest', firstLine = 1, seen: Seen = new SeenSet()): SeriesTarget[] {
  const out: SeriesTarget[] = [];
  const lines = typeof text === 'string' ? text.split(/\r?\n/) : text;
  for (let i = 0; i < lines.length; i++) {
    const at = `${file}:${i + firstLine}`;
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    let url: string;
    if (/^s3:\/\//.test(line)) {
      url = line;
    } else if (/^cp\s/.test(line)) {
      const words = line.match(/'[^']*'|"[^"]*"|\S+/g) ?? [];
      const src = words.slice(1).map(unquote).find((w) => w.startsWith('s3://'));
      if (!src) throw new Error(`${at}: a cp line without an s3:// source: ${line}`);
      url = src;
    } else {
      throw new Error(`${at}: expected an s3:// URL, an s5cmd "cp" line or a # comment, got: ${line.slice(0, 120)}`);
    }
    let parsed;
    try {
      parsed = parseS3Url(url);
    } catch (e) {
      throw new Error(`${at}: ${(e as Error).message}`, { cause: e });
    }
    const key = `${parsed.bucket}/${parsed.prefix}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ url, ...parsed });
  }
  return out;
}

export const LAYOUT_VARS = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality', 'crdc_series_uuid', 'bucket'] as const;
export type LayoutVar = (typeof LAYOUT_VARS)[number];
export const DEFAULT_LAYOUT = '%collection_id/%PatientID/%StudyInstanceUID/%Modality_%SeriesInstanceUID';
/** Variables known from the URL alone (no service needed). */
const URL_VARS = new Set<LayoutVar>(['crdc_series_uuid', 'bucket']);

export interface Layout {
  template: string;
  /** Variables the template uses. */
  vars: LayoutVar[];
  /** True when the template needs series metadata from the service. */
  needsService: boolean;
}

/**
 * Parse a layout template: folders under --out, with %name or %{name}
 * variables (the longest variable name matches: %Modality_%SeriesInstanceUID
 * is Modality, "_", SeriesInstanceUID). "flat" puts every file directly in --out.
 */
export function parseLayout(template: string): Layout {
  const t = template.trim() === 'flat' ? '' : template.trim().replace(/^\/+|\/+$/g, '');
  const vars: LayoutVar[] = [];
  const names = [...LAYOUT_VARS].sort((a, b) => b.length - a.length);
  for (let i = 0; i < t.length; i++) {
    if (t[i] !== '%') continue;
    const rest = t.slice(i + 1);
    const braced = /^\{([A-Za-z_]+)\}/.exec(rest);
    const name = braced ? braced[1] : names.find((n) => rest.startsWith(n));
    if (!name || !(LAYOUT_VARS as readonly string[]).includes(name)) {
      throw new Error(`layout ${JSON.stringify(template)}: unknown variable at "%${rest.slice(0, 20)}"; variables: ${LAYOUT_VARS.map((v) => `%${v}`).join(', ')} (or "flat")`);
    }
    vars.push(name as LayoutVar);
  }
  if (t.split('/').some((p) => p === '..' || p === '.')) throw new Error(`layout ${JSON.stringify(template)}: "." and ".." folders are not allowed`);
  return { template: t, vars, needsService: vars.some((v) => !URL_VARS.has(v)) };
}

/** The relative folder of a series under the layout ("" for flat). */
export function renderLayout(layout: Layout, vars: Partial<Record<LayoutVar, string>>): string {
  if (layout.template === '') return '';
  const names = [...LAYOUT_VARS].sort((a, b) => b.length - a.length);
  return layout.template.replace(/%\{([A-Za-z_]+)\}|%([A-Za-z_]+)/g, (whole, braced: string | undefined, bare: string | undefined) => {
    if (braced) return folderName(vars[braced as LayoutVar]);
    const name = names.find((n) => bare!.startsWith(n))!;
    return folderName(vars[name]) + bare!.slice(name.length);
  });
}
