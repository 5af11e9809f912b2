#!/usr/bin/env node
// Entry point of the `idqs` command. CommonJS on purpose: it runs before any
// asynchronous file I/O, so the thread-pool size below takes effect. (An ES
// module entry is loaded with asynchronous reads that start libuv's pool at
// its default of 4 threads; DuckDB runs queries on that pool, and four slow
// caller queries would then block every curated query.)
'use strict';
process.env.UV_THREADPOOL_SIZE ??= '16';

const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const root = join(__dirname, '..');
const compiled = join(root, 'dist', 'cli', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

// Run the compiled JavaScript (built by `npm ci` through the prepare script)
// when it is at least as new as every source file, else the sources via tsx,
// so an edited tree never runs stale code.
(async () => {
  if (existsSync(compiled) && statSync(compiled).mtimeMs >= newestSource(join(root, 'src'))) {
    await import(pathToFileURL(compiled).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
  }
})().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
