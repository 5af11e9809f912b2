// The secret /v2 page tokens are signed with. IDQS_TOKEN_SECRET when set (a
// fleet's replicas share it); otherwise a random one made on first start and
// kept, readable by its owner only, in the cache folder, so tokens survive a
// restart and every worker of one host agrees, yet nobody can compute the key
// from the public release.

import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TOKEN_SECRET_FILE = 'token-secret';
/** Shorter than this is not a secret we wrote. */
const MIN_CHARS = 32;

function readSecret(file: string): string {
  // Whoever else could read it could forge tokens: keep it to its owner.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const s = readFileSync(file, 'utf8').trim();
  if (s.length < MIN_CHARS) throw new Error(`${file} does not hold a token secret (${s.length} characters); delete it to have a new one made`);
  return s;
}

/** The configured secret, or the one kept in `cacheDir` (made there on first use). */
export function tokenSecret(configured: string, cacheDir: string): string {
  if (configured) return configured;
  const file = join(cacheDir, TOKEN_SECRET_FILE);
  try {
    return readSecret(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside, then linked into place: a link never replaces a file, so
    // processes starting at once all end up with whichever secret came first.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
    return readSecret(file);
  } catch (e) {
    throw new Error(`cannot keep the secret of /v2 page tokens in ${cacheDir} (${(e as Error).message}); make the folder writable (IDQS_CACHE_DIR) or set IDQS_TOKEN_SECRET`, { cause: e });
  }
}
