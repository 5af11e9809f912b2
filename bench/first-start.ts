// npm run bench:start — what a new user waits for: `idqs serve` with no
// dataset named (so `npm start`), from an empty cache to the first answer of
// /v3/version, then started again on the filled cache.
//   online:  the release sources as configured (the public ones unless
//            IDQS_RELEASE_GCS_URL / IDQS_RELEASE_GITHUB_URL / IDQS_PYPI_INDEX
//            say otherwise): the newest release is fetched and built.
//   offline: every source at a closed port: the generated dataset.
// Each run has its own empty cache folder under the system's temp folder.
// Options: -- --only online|offline, --workers N (default 1).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './server.ts';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const ONLY = arg('only', '');
const WORKERS = arg('workers', '1');
const root = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'idqs-bench-start-'));

/** `idqs serve` until /v3/version answers: seconds, and the line saying which data. */
async function start(cache: string, env: Record<string, string>): Promise<{ seconds: number; data: string }> {
  const port = await freePort();
  const base = { ...process.env };
  for (const k of ['IDQS_DB', 'IDQS_RELEASE', 'IDQS_RELEASE_SOURCE', 'IDQS_DEMO']) delete base[k];
  const t = performance.now();
  const proc = spawn(process.execPath, [join(root, 'bin/idqs.cjs'), 'serve', '--port', String(port)], {
    env: { ...base, IDQS_CACHE_DIR: cache, IDQS_LOG_LEVEL: 'warn', IDQS_WORKERS: WORKERS, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`idqs serve exited ${proc.exitCode}:\n${err}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/v3/version`)).ok) break;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return { seconds: (performance.now() - t) / 1000, data: /^data: .*$/m.exec(err)?.[0] ?? '(no data line)' };
  } finally {
    await new Promise<void>((resolve) => {
      proc.once('close', () => resolve());
      proc.kill('SIGTERM');
    });
  }
}

async function measure(label: string, env: Record<string, string>): Promise<void> {
  const cache = join(tmp, label);
  const first = await start(cache, env);
  console.log(`${label}, empty cache: ready in ${first.seconds.toFixed(1)} s\n  ${first.data}`);
  const later: number[] = [];
  for (let i = 0; i < 3; i++) later.push((await start(cache, env)).seconds);
  console.log(`${label}, later starts: ${later.map((s) => s.toFixed(1)).join(' s, ')} s`);
}

try {
  console.log(`idqs serve with no dataset named, IDQS_WORKERS=${WORKERS}; load average before: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  if (ONLY !== 'offline') await measure('online', {});
  if (ONLY !== 'online') {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await measure('offline', { IDQS_RELEASE_GCS_URL: `${closed}/gcs`, IDQS_RELEASE_GITHUB_URL: `${closed}/github`, IDQS_PYPI_INDEX: `${closed}/pypi/simple` });
  }
  console.log(`load average after: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
