// `idqs data fetch`: download a real release into the cache (or --out), check every published sha256, then build
// its database; the options come from the one builder every command uses (release-fetch.ts).

import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { fetchReporter } from '../fetch-progress.ts';
import { fetchFullInto, splitFullTables } from '../full-fetch.ts';
import { fetchAndBuildProgress, releaseFetchOptions, releaseOptions, writeIndexFile, type ReleaseFlags } from '../release-fetch.ts';

const SOURCES_HELP = `
Sources (base URLs replaced by --mirror, or IDQS_RELEASE_GCS_URL, IDQS_RELEASE_GITHUB_URL, IDQS_PYPI_INDEX / PIP_INDEX_URL):
  gcs     <base>/<release>/release_artifacts/<file> (latest: current/), every table with .sha256, _schema.json, .sql
  github  <base>/<release>/<file>, the release assets of idc-index-data
  pypi    the idc-index-data wheel of that version on a simple index: the five core tables (with
          --tables clinical, the clinical tables from the metadata bucket, into the same folder)
Clinical tables (--tables all, or clinical): s3://idc-open-metadata/bigquery_export/idc_v<N>_clinical/<table>/*.parquet,
  read anonymously (IDQS_METADATA_S3_ENDPOINT, IDQS_METADATA_BUCKET for a mirror); a table that cannot be fetched is named.

Full metadata (--tables full, or dicom_all, segmentations, measurement_groups, quantitative_measurements,
  qualitative_measurements): s3://idc-open-metadata/bigquery_export/idc_v<N>/<table>/*.parquet into
  <folder>/bigquery_export/idc_v<N>/<table>/ (dicom_all is ~37 GB for v25); the space still needed is
  checked against the free space first (IDQS_FREE_SPACE_BYTES replaces the probe); a table is kept only whole.
  The build copies them into the release's database: caller SQL (idqs sql, POST /v3/sql) then queries dicom_all and the others by name.

Downloads run in parallel, resume after an interruption (rerun the command) and are retried; a file
that does not match its published sha256 is refused and kept aside as <file>.rejected. A release
already in the cache is reused without the network. Examples:
  idqs data fetch --release latest
  idqs data fetch --release 25.0.5 --source pypi
  idqs data fetch --release 24.2.2 --tables core,seg_index --out ./idc-v24
  idqs data fetch --release 25.0.5 --source pypi --tables segmentations,quantitative_measurements`;

type FetchFlags = ReleaseFlags & { tables?: string; out?: string; build: boolean };

export function registerDataFetch(data: Command): void {
  const fetchCmd = data
    .command('fetch')
    .description('Download a real release of the public index files into the cache (or --out), check every published sha256, then build its database')
    .option('--tables <list>', 'all (every release file and the clinical tables), core (the five tables of the wheel), or names separated by commas (index = idc_index, clinical = the clinical tables, full = the full metadata, or its tables such as dicom_all; e.g. core,clinical); default: every release file (for pypi: core), without the clinical tables or the full metadata')
    .option('--out <dir>', 'folder to fetch into (default: <cache>/releases/<release>-<source>)')
    .option('--no-build', 'download and check only');
  releaseOptions(fetchCmd, false).addHelpText('after', SOURCES_HELP).action(fetchAction);
}

async function fetchAction(o: FetchFlags): Promise<void> {
  const cfg = loadConfig();
  const rel = await import('../../core/release/fetch.ts');
  // The full-metadata tables come from the bucket after the release; the others are the release's.
  const { full, rest } = splitFullTables(o.tables);
  // The release of --release, else latest (IDQS_RELEASE names what a server serves, possibly several).
  const opts = await releaseFetchOptions(cfg, { ...o, tables: rest, release: o.release ?? 'latest' });
  if (!o.build) {
    const reporter = fetchReporter();
    try {
      const r = await rel.fetchRelease({ ...opts, onEvent: reporter.onEvent });
      const fullResult = full.length ? await fetchFullInto(cfg, r.folder, r.version, full, reporter.onEvent) : undefined;
      reporter.stop();
      process.stdout.write(JSON.stringify({ ...r, full: fullResult }, null, 2) + '\n');
    } finally {
      reporter.stop();
    }
    return;
  }
  const progress = fetchAndBuildProgress();
  try {
    const r = await rel.ensureRelease({ ...opts, onEvent: progress.onEvent, onBuildProgress: progress.onBuildProgress });
    const fullResult = full.length ? await fetchFullInto(cfg, r.fetch.folder, r.fetch.version, full, progress.onEvent) : undefined;
    progress.stop();
    process.stdout.write(JSON.stringify({ db: r.db, fetch: r.fetch, build: r.build, full: fullResult }, null, 2) + '\n');
    for (const w of r.build.warnings) process.stderr.write(`warning: ${w}\n`);
    await writeIndexFile(cfg, r.db);
    process.stderr.write(`release ${r.build.release} (${r.build.index_version}) ready: serve it with "idqs serve --db ${r.db}"\n`);
  } finally {
    progress.stop();
  }
}
