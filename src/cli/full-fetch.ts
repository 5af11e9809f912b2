// `data fetch --tables full` (or dicom_all, segmentations, …): the names of
// the full metadata split from the release's own tables, and its fetch into
// the release folder once the release is there. Light at import: the fetch
// module is loaded inside.

import type { Config } from '../config.ts';
import { FULL_TABLE_NAMES } from '../core/registry/full-metadata.ts';
import type { FetchEvent } from '../core/release/fetch.ts';
import type { FullFetchResult } from '../core/release/full-fetch.ts';

/** --tables split into the full-metadata tables and the rest (undefined when nothing else was named: the release's default). */
export function splitFullTables(tables: string | undefined): { full: string[]; rest: string | undefined } {
  if (tables === undefined) return { full: [], rest: undefined };
  const names = tables.split(',').map((t) => t.trim()).filter(Boolean);
  const isFull = (n: string) => n === 'full' || FULL_TABLE_NAMES.includes(n);
  const rest = names.filter((n) => !isFull(n));
  return { full: names.filter(isFull), rest: rest.length ? rest.join(',') : undefined };
}

/** version: the release fetched, when known (a pinned one); else the number the folder's index carries. */
export async function fetchFullInto(cfg: Config, folder: string, version: string | null, names: string[], onEvent: (e: FetchEvent) => void): Promise<FullFetchResult> {
  const { fetchFull, parseFullTables } = await import('../core/release/full-fetch.ts');
  const { releaseNumberOfFolder } = await import('../core/release/clinical-fetch.ts');
  const { ReleaseError } = await import('../core/release/fetch.ts');
  const n = version ? Number(version.split('.')[0]) : await releaseNumberOfFolder(folder);
  if (!n) throw new ReleaseError(`the release number of ${folder} is unknown (its idc_index.parquet carries no idc_index_data_version): fetch a pinned release (--release 25.0.5) to get its full metadata`);
  const free = cfg.freeSpaceBytes;
  return fetchFull({
    folder,
    releaseNumber: n,
    tables: parseFullTables(names),
    store: { endpoint: cfg.metadataEndpoint, bucket: cfg.metadataBucket },
    freeBytes: free === null ? undefined : async () => free,
    concurrency: 4,
    emit: onEvent,
  });
}
