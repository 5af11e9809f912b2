// `idqs data calibrate`: extract the release profile the generator draws
// from (data/synth/release-profile.json) from a real release, recording the
// release's version and the checksums of the files it read.

import { DuckDBInstance } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ReleaseProfile } from '../profile.ts';
import { extractProfile } from './profile-queries.ts';
import { openRelease } from './release-folder.ts';
import { RELEASE_VIEWS, attachRelease } from './release-views.ts';

/** Version of the idc-index-data package a release folder came from, if it says. */
function indexVersion(dir: string, source: string): string {
  const py = join(dir, '_version.py');
  if (existsSync(py)) {
    const m = /version\s*=\s*['"]([^'"]+)['"]/.exec(readFileSync(py, 'utf8'));
    if (m) return m[1]!;
  }
  const m = /idc_index_data-([0-9][^-]*)-/.exec(basename(source));
  return m ? m[1]! : 'unknown';
}

/** JSON with objects indented and arrays of scalars (or of arrays of scalars) on one line. */
export function compactJson(v: unknown, indent = ''): string {
  const flat = (x: unknown): boolean => x === null || typeof x !== 'object' || (Array.isArray(x) && x.every((y) => y === null || typeof y !== 'object'));
  if (Array.isArray(v)) {
    if (v.every(flat)) return JSON.stringify(v);
    const inner = indent + '  ';
    return `[\n${v.map((x) => inner + compactJson(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (v && typeof v === 'object') {
    const entries = Object.entries(v);
    if (entries.length === 0) return '{}';
    const inner = indent + '  ';
    return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${compactJson(x, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(v);
}

export async function calibrate(opts: { real: string; out: string; onProgress?: (msg: string) => void }): Promise<ReleaseProfile> {
  const log = opts.onProgress ?? (() => {});
  const release = await openRelease(opts.real);
  const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '3GB' });
  const conn = await db.connect();
  try {
    const missing = await attachRelease(conn, release.dir);
    if (missing.length) throw new Error(`${opts.real} lacks ${missing.map((m) => `${RELEASE_VIEWS[m]}.parquet`).join(', ')}: calibration needs all five core tables`);
    const files: Record<string, string> = {};
    for (const stem of Object.values(RELEASE_VIEWS)) {
      files[`${stem}.parquet`] = createHash('sha256').update(readFileSync(join(release.dir, `${stem}.parquet`))).digest('hex');
    }
    const version = indexVersion(release.dir, release.source);
    log(`extracting the profile of idc-index-data ${version}`);
    const profile = await extractProfile(
      conn,
      {
        source: `idc-index-data ${version} (${basename(release.source)})`,
        files,
        extracted_by: 'idqs data calibrate (src/datagen/calibrate/profile-queries.ts, series-stats.ts, pid-template.ts)',
        note:
          'Identity of collections and analysis results (ids, names, cancer types, locations, species, programs, DOIs, licenses, subjects) is copied ' +
          'from the public index tables; every other figure is a distribution computed from them. Descriptions are written by IDQS.',
      },
      version,
    );
    const tmp = `${opts.out}.tmp-${process.pid}`;
    await writeFile(tmp, compactJson(profile) + '\n');
    await rename(tmp, opts.out);
    return profile;
  } finally {
    conn.closeSync();
    db.closeSync();
    await release.close();
  }
}
