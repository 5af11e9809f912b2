#!/usr/bin/env node
// Entry point of the `idqs` command. Runs the compiled JavaScript in dist/
// (built by `npm ci` through the prepare script) when it is at least as new as
// every source file, and the TypeScript sources through tsx otherwise, so an
// edited tree never runs stale code.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The DuckDB bindings run queries on libuv's thread pool; the default of 4
// threads would let four slow caller queries block every curated query.
process.env.UV_THREADPOOL_SIZE ??= '16';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = join(root, 'dist', 'cli', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

if (existsSync(compiled) && statSync(compiled).mtimeMs >= newestSource(join(root, 'src'))) {
  await import(compiled);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
