// The command lines of a download payload: the idqs downloader with its
// flags, curl calling this API's manifest route, and s5cmd running what curl
// saved. They name routes and flags, so they are written here, from the
// capability catalog, and handed to the core's manifest service.

import type { CommandWriter, DownloadCommands } from '../core/services/manifest.ts';
import { DOWNLOAD_DIR, s5cmdFileName, s5cmdRunCommand, shellQuote } from '../core/rules/shell.ts';
import type { StoreKey } from '../core/rules/stores.ts';
import { SURFACES } from './capabilities.ts';

/** Saves POST manifest.txt of `body` into the file `out`. */
function curlManifest(apiBase: string, body: unknown, out: string): string {
  return (
    `curl -fsS -X POST ${shellQuote(`${apiBase}${SURFACES.get_cohort_urls.rest.path}`)} -H 'content-type: application/json' ` +
    `-d ${shellQuote(JSON.stringify(body))} -o ${shellQuote(out)}`
  );
}

/** The commands of a payload, for an API reached at `apiBase` and stores at their endpoints. */
export function downloadCommands(apiBase: string, stores: Record<StoreKey, { endpoint: string }>): CommandWriter {
  return (applied): DownloadCommands => {
    // Every idqs line names this API: the downloader resolves the cohort (or the folders of a manifest's series) through it.
    const tail = `--api ${shellQuote(apiBase)} --out ./${DOWNLOAD_DIR}`;
    const idqs: string[] = [];
    const termKeys = Object.keys(applied.terms);
    if (termKeys.length === 1 && termKeys[0] === 'collection_id' && Object.keys(applied.ranges).length === 0) {
      for (const id of applied.terms.collection_id ?? []) idqs.push(`idqs download --collection ${shellQuote(id)} ${tail}`);
    }
    idqs.push(`idqs download --filters ${shellQuote(JSON.stringify(applied))} ${tail}`);
    idqs.push(`idqs download --manifest idqs_manifest.txt ${tail}`);
    const s5 = (store: StoreKey) => [
      curlManifest(apiBase, { filters: applied, source: store, format: 's5cmd' }, s5cmdFileName(store)),
      s5cmdRunCommand(stores[store].endpoint, s5cmdFileName(store)),
    ];
    return {
      idqs,
      save_manifest: curlManifest(apiBase, { filters: applied }, 'idqs_manifest.txt'),
      s5cmd_cloud1: s5('cloud1'),
      s5cmd_cloud2: s5('cloud2'),
    };
  };
}
