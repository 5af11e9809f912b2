// The command lines of a download payload: the idqs downloader with its
// flags, curl calling this API's manifest route, and s5cmd running what curl
// saved. They name routes and flags, so they are written here, from the
// capability catalog, and handed to the core's manifest service.

import type { CommandWriter, WrittenCommands } from '../core/services/manifest.ts';
import { DOWNLOAD_DIR, s5cmdFileName, s5cmdRunCommand, shellQuote } from '../core/rules/shell.ts';
import type { StoreKey } from '../core/rules/stores.ts';
import { SURFACES } from './capabilities.ts';

/** Saves POST manifest.txt of `body` into the file `out`. */
function curlManifestOf(apiBase: string, body: unknown, out: string): string {
  return (
    `curl -fsS -X POST ${shellQuote(`${apiBase}${SURFACES.get_cohort_urls.rest.path}`)} -H 'content-type: application/json' ` +
    `-d ${shellQuote(JSON.stringify(body))} -o ${shellQuote(out)}`
  );
}

/** Folder the `idc` commands of the public service's payload write into. */
export const IDC_DOWNLOAD_DIR = './idc-data';

/** Whether the filter is collection_id alone: then each collection gets a command of its own. */
function collectionsOnly(applied: Parameters<CommandWriter>[0]): string[] | null {
  const termKeys = Object.keys(applied.terms);
  const ids = applied.terms.collection_id ?? [];
  // collection_id is categorical: null (no collection) would name no collection of its own.
  if (termKeys.length === 1 && termKeys[0] === 'collection_id' && Object.keys(applied.ranges).length === 0 && !applied.all_terms && !ids.includes(null)) return ids as string[];
  return null;
}

/**
 * The commands of a payload, for an API reached at `apiBase` and stores at their endpoints;
 * `release` when that API serves several: every command then names the release it was made on.
 */
export function downloadCommands(apiBase: string, stores: Record<StoreKey, { endpoint: string }>, release?: string): CommandWriter {
  const curlManifest = (base: string, body: Record<string, unknown>, out: string) => curlManifestOf(base, release ? { ...body, release } : body, out);
  return (applied, asOf): WrittenCommands => {
    // Every idqs line names this API: the downloader resolves the cohort (or the folders of a manifest's series) through it.
    const tail = `--api ${shellQuote(apiBase)}${release ? ` --release ${shellQuote(release)}` : ''} --out ./${DOWNLOAD_DIR}`;
    if (asOf !== undefined) return asOfCommands(apiBase, stores, applied, asOf, tail, curlManifest);
    const collections = collectionsOnly(applied) ?? [];
    const idqs = collections.map((id) => `idqs download --collection ${shellQuote(id)} ${tail}`);
    idqs.push(`idqs download --filters ${shellQuote(JSON.stringify(applied))} ${tail}`);
    idqs.push(`idqs download --manifest idqs_manifest.txt ${tail}`);
    const s5 = (store: StoreKey) => [
      curlManifest(apiBase, { filters: applied, source: store, format: 's5cmd' }, s5cmdFileName(store)),
      s5cmdRunCommand(stores[store].endpoint, s5cmdFileName(store)),
    ];
    // The public service's `idc` (idc-index) list: per collection, then save the manifest and download it.
    const idc = collections.map((id) => `idc download ${shellQuote(id)} --download-dir ${IDC_DOWNLOAD_DIR}`);
    idc.push(
      `# Or save the full manifest, then download it:\n${curlManifest(apiBase, { filters: applied }, 'idc_manifest.txt')}\nidc download idc_manifest.txt --download-dir ${IDC_DOWNLOAD_DIR}`,
    );
    return {
      commands: {
        idqs,
        save_manifest: curlManifest(apiBase, { filters: applied }, 'idqs_manifest.txt'),
        s5cmd_cloud1: s5('cloud1'),
        s5cmd_cloud2: s5('cloud2'),
      },
      idc_commands: idc,
    };
  };
}

/**
 * The commands of a cohort as a past release served it: its manifest (which
 * lists the versions that release served) saved, then downloaded as saved.
 * The filter and collection lines, and idc (which resolves a manifest against
 * its own current index), would fetch today's versions instead: left out.
 */
function asOfCommands(
  apiBase: string,
  stores: Record<StoreKey, { endpoint: string }>,
  applied: Parameters<CommandWriter>[0],
  asOf: string,
  tail: string,
  curlManifest: (base: string, body: Record<string, unknown>, out: string) => string,
): WrittenCommands {
  const s5 = (store: StoreKey) => [
    curlManifest(apiBase, { filters: applied, as_of: asOf, source: store, format: 's5cmd' }, s5cmdFileName(store)),
    s5cmdRunCommand(stores[store].endpoint, s5cmdFileName(store)),
  ];
  const save = curlManifest(apiBase, { filters: applied, as_of: asOf }, 'idqs_manifest.txt');
  return {
    commands: { idqs: [`idqs download --manifest idqs_manifest.txt --as-saved ${tail}`], save_manifest: save, s5cmd_cloud1: s5('cloud1'), s5cmd_cloud2: s5('cloud2') },
    idc_commands: [`# idc download fetches the current versions of the series; for the versions ${asOf} served, use the idqs or s5cmd commands.`],
  };
}
