// Shared by the benchmarks: the series-level synthetic database of a scale
// (generated and built once into the cache), a free loopback port, and
// `idqs serve` started as a separate process (the real CLI) and waited for
// until /v3/health answers.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCacheDir } from '../src/config.ts';
import { build } from '../src/core/data/build.ts';
import { GENERATOR_VERSION } from '../src/datagen/dataset.ts';
import { generate } from '../src/datagen/generate.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The benchmark database of a scale (seed 42, no instance table), generated and built on first use. */
export async function ensureBenchDb(scale: number): Promise<string> {
  const dir = join(defaultCacheDir(), 'bench', `synthetic-g${GENERATOR_VERSION}-s${scale}-seed42-series`);
  const db = join(dir, 'bench.duckdb');
  if (!existsSync(join(dir, 'data', 'dataset.json'))) {
    mkdirSync(dir, { recursive: true });
    process.stderr.write(`generating scale ${scale} (series-level) ...\n`);
    await generate({ scale, seed: 42, out: join(dir, 'data'), instances: false });
  }
  const r = await build({ from: join(dir, 'data'), db });
  if (r.rebuilt) process.stderr.write(`built ${db} in ${r.seconds.toFixed(1)} s\n`);
  return db;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/** `idqs serve --db DB` on a free port, with extra environment; resolves once it serves. */
export async function spawnServer(db: string, env: Record<string, string> = {}): Promise<{ base: string; proc: ChildProcess; startSeconds: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const base = `http://127.0.0.1:${port}`;
  const proc = spawn(process.execPath, [join(root, 'bin/idqs.cjs'), 'serve', '--db', db, '--port', String(port)], {
    env: { ...process.env, IDQS_LOG_LEVEL: 'warn', IDQS_WORKERS: '1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(base + '/v3/health')).ok) break;
    } catch {
      /* not up yet */
    }
    if (i > 600 || proc.exitCode !== null) {
      proc.kill();
      throw new Error('server did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { base, proc, startSeconds: (performance.now() - t0) / 1000 };
}
