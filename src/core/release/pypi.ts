// Find the idc-index-data wheel of a version on a Python package index: the
// simple API in its JSON form (PEP 691) when the index offers it, else the
// HTML form every index and mirror serves (PEP 503). Each file comes with the
// sha256 the index publishes, which the download is checked against.

import { getText, type GetOptions } from './http-file.ts';
import { sortVersions } from './sources.ts';

export interface IndexFile {
  filename: string;
  url: string;
  sha256: string | null;
  size: number | null;
  yanked: boolean;
}

export interface WheelChoice extends IndexFile {
  version: string;
  /** Versions with a wheel on the index, newest first. */
  available: string[];
}

/** `idc_index_data-25.0.5-py3-none-any.whl` → 25.0.5 (null for an sdist or another project). */
function versionOf(filename: string, project: string): string | null {
  const norm = project.replace(/[-_.]+/g, '_').toLowerCase();
  const m = /^([A-Za-z0-9_.]+?)-([^-]+)-[^-]+-[^-]+-[^-]+\.whl$/.exec(filename);
  if (!m || m[1]!.replace(/[-_.]+/g, '_').toLowerCase() !== norm) return null;
  return m[2]!;
}

function decodeHtml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}

/** Files listed by a PEP 503 page: one <a href="url#sha256=...">filename</a> per file. */
export function parseSimpleHtml(html: string, pageUrl: string): IndexFile[] {
  const out: IndexFile[] = [];
  for (const m of html.matchAll(/<a\s([^>]*)>([^<]*)<\/a>/gi)) {
    const attrs = m[1]!;
    const href = /href\s*=\s*("([^"]*)"|'([^']*)')/i.exec(attrs);
    if (!href) continue;
    const raw = decodeHtml(href[2] ?? href[3] ?? '');
    const url = new URL(raw, pageUrl);
    const hash = /^#sha256=([0-9a-f]{64})$/i.exec(url.hash);
    url.hash = '';
    out.push({
      filename: decodeHtml(m[2]!.trim()) || url.pathname.split('/').pop()!,
      url: url.href,
      sha256: hash ? hash[1]!.toLowerCase() : null,
      size: null,
      yanked: /data-yanked/i.test(attrs),
    });
  }
  return out;
}

/** Files listed by a PEP 691 JSON answer. */
export function parseSimpleJson(text: string, pageUrl: string): IndexFile[] {
  const j = JSON.parse(text) as { files?: { filename: string; url: string; hashes?: { sha256?: string }; size?: number; yanked?: unknown }[] };
  return (j.files ?? []).map((f) => ({
    filename: f.filename,
    url: new URL(f.url, pageUrl).href,
    sha256: f.hashes?.sha256?.toLowerCase() ?? null,
    size: typeof f.size === 'number' ? f.size : null,
    yanked: Boolean(f.yanked),
  }));
}

/** The wheel of `version` (or the newest, for latest) of `project` on the index at `indexUrl`. */
export async function findWheel(indexUrl: string, project: string, version: string, opts: GetOptions = {}): Promise<WheelChoice> {
  const page = `${indexUrl.replace(/\/+$/, '')}/${project}/`;
  let r;
  try {
    r = await getText(page, { ...opts, headers: { accept: 'application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1' } });
  } catch (e) {
    throw new Error(`cannot read the package index at ${page}: ${(e as Error).message}. Check the network, or point IDQS_PYPI_INDEX (or PIP_INDEX_URL) at a reachable mirror`, { cause: e });
  }
  if (!r) throw new Error(`the package index ${indexUrl} has no project ${project} (${page} answered 404)`);
  const files = r.contentType.includes('json') ? parseSimpleJson(r.text, page) : parseSimpleHtml(r.text, page);
  const wheels = new Map<string, IndexFile>();
  for (const f of files) {
    const v = versionOf(f.filename, project);
    if (v && !f.yanked && (!wheels.has(v) || f.filename.includes('py3-none-any'))) wheels.set(v, f);
  }
  const available = sortVersions(wheels.keys());
  const chosen = version === 'latest' ? available[0] : version;
  const file = chosen ? wheels.get(chosen) : undefined;
  if (!chosen || !file) {
    const list = available.length > 0 ? `available: ${available.slice(0, 12).join(', ')}${available.length > 12 ? ', …' : ''}` : 'the index lists no wheel of it';
    throw new Error(`${project} ${version} is not on the package index ${indexUrl} (${list})`);
  }
  return { ...file, version: chosen, available };
}
