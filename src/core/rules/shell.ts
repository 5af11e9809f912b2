// Command lines the service hands out: POSIX shell quoting and the s5cmd run
// line of a manifest. Pure: no engine.

/** Folder the downloader commands and s5cmd lines write into (relative to the working directory). */
export const DOWNLOAD_DIR = 'idqs-data';

/** Quote a word for POSIX shells only when it needs it. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

export function s5cmdFileName(store: string): string {
  return `idqs_manifest_${store}.s5cmd`;
}

/** The s5cmd command that runs a manifest file against a store's S3-compatible endpoint, anonymously. */
export function s5cmdRunCommand(endpoint: string, file: string): string {
  return `s5cmd --no-sign-request --endpoint-url ${shellQuote(endpoint)} run ${shellQuote(file)}`;
}
