// Where releases of the index files are published and how their URLs are
// made: the public bucket (gcs), the release assets of the repository
// (github) and the wheel on a Python package index (pypi). Base URLs come from
// data/release-defaults.json and can be replaced (a mirror, an air-gapped
// copy): --mirror, or IDQS_RELEASE_GCS_URL / IDQS_RELEASE_GITHUB_URL /
// IDQS_PYPI_INDEX (PIP_INDEX_URL too, as pip reads it).

import { RELEASE_DEFAULTS } from '../data/manifest.ts';
import { getText, type GetOptions } from './http-file.ts';

export const RELEASE_SOURCES = ['gcs', 'github', 'pypi'] as const;
export type ReleaseSource = (typeof RELEASE_SOURCES)[number];

export const CORE_FILES = RELEASE_DEFAULTS.files.core;
export const ALL_FILES = [...RELEASE_DEFAULTS.files.core, ...RELEASE_DEFAULTS.files.optional];

/** Names accepted for a source, including the cloud vocabulary (cloud2 = gcs). */
export function parseSource(v: string): ReleaseSource {
  const s = v.trim().toLowerCase();
  if (s === 'cloud2') return 'gcs';
  if ((RELEASE_SOURCES as readonly string[]).includes(s)) return s as ReleaseSource;
  throw new Error(`unknown release source ${JSON.stringify(v)}: use gcs (the public bucket, default), github (release assets) or pypi (the wheel: core tables only)`);
}

/** The base URL of a source: --mirror, else its environment variable, else the public one. */
export function sourceBase(source: ReleaseSource, mirror: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const pick =
    mirror ||
    (source === 'gcs' ? env.IDQS_RELEASE_GCS_URL : source === 'github' ? env.IDQS_RELEASE_GITHUB_URL : env.IDQS_PYPI_INDEX || env.PIP_INDEX_URL) ||
    (source === 'gcs' ? RELEASE_DEFAULTS.sources.gcs.base : source === 'github' ? RELEASE_DEFAULTS.sources.github.base : RELEASE_DEFAULTS.sources.pypi.index);
  return pick.replace(/\/+$/, '');
}

/** A release asked for: a version such as 25.0.5, or latest. */
export function parseRelease(v: string): string {
  const s = v.trim().replace(/^v(?=\d)/, '');
  if (s.toLowerCase() === 'latest' || s.toLowerCase() === 'current') return 'latest';
  if (!/^\d+(\.\d+){0,2}$/.test(s)) throw new Error(`release ${JSON.stringify(v)} is not a version such as 25.0.5 (or latest)`);
  return s;
}

/** URL of one file of a release in the bucket or repository layout (not pypi: that is one wheel). */
export function fileUrl(source: 'gcs' | 'github', base: string, release: string, file: string, mirrored: boolean): string {
  if (source === 'gcs') return `${base}/${release === 'latest' ? RELEASE_DEFAULTS.sources.gcs.latest_tag : release}/release_artifacts/${file}`;
  if (release === 'latest') return mirrored ? `${base}/latest/${file}` : `${RELEASE_DEFAULTS.sources.github.latest}/${file}`;
  return `${base}/${release}/${file}`;
}

/** Versions that look like releases (digits and dots), newest first. */
export function sortVersions(versions: Iterable<string>): string[] {
  const key = (v: string) => v.split('.').map(Number);
  return [...new Set(versions)]
    .filter((v) => /^\d+(\.\d+)*$/.test(v))
    .sort((a, b) => {
      const x = key(a);
      const y = key(b);
      for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
      return 0;
    });
}

/**
 * Release tags a source publishes, newest first, for messages; null when they
 * cannot be listed (a mirror of plain files, no network).
 */
export async function listTags(source: 'gcs' | 'github', base: string, mirrored: boolean, opts: GetOptions = {}): Promise<string[] | null> {
  try {
    if (source === 'gcs') {
      // The bucket answers an S3-style listing; its top-level "folders" are the tags.
      const r = await getText(`${base}?delimiter=/`, { ...opts, retries: 1 });
      if (!r) return null;
      return sortVersions([...r.text.matchAll(/<Prefix>([^<]+)\/<\/Prefix>/g)].map((m) => m[1]!));
    }
    if (mirrored) return null;
    const r = await getText(RELEASE_DEFAULTS.sources.github.tags, { ...opts, retries: 1, headers: { accept: 'application/vnd.github+json' } });
    if (!r) return null;
    return sortVersions((JSON.parse(r.text) as { tag_name?: string }[]).map((t) => String(t.tag_name ?? '')));
  } catch {
    return null;
  }
}
