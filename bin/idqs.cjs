#!/usr/bin/env node
// Entry point of the `idqs` command: runs the compiled build in dist/ (made
// by `npm ci` through the prepare script, or `npm run build`). A missing
// build, or one older than the sources, is refused with what to run instead:
// running stale code, or the sources through a loader, would hide that the
// build was forgotten. CommonJS on purpose: it runs before any asynchronous
// file I/O, so the thread-pool size below takes effect. (An ES module entry is
// loaded with asynchronous reads that start libuv's pool at its default of 4
// threads; DuckDB runs queries on that pool, and four slow caller queries
// would then block every curated query.)
'use strict';
process.env.UV_THREADPOOL_SIZE ??= '16';
// V8's compiled code of every module is kept on disk (Node's own cache, in
// the system's temp folder) and reused by the next start: about a tenth of
// the time to the first answer on the real release, most of it the compile
// of Fastify, Ajv and DuckDB's bindings. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
require('node:module').enableCompileCache?.();

const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { buildState, ENTRY } = require('../scripts/build.cjs');

const root = join(__dirname, '..');
const { state, changed } = buildState(root);
if (state !== 'fresh') {
  const why =
    state === 'missing'
      ? 'idqs is not built: dist/ has no compiled build.'
      : `the build in dist/ is older than the sources (changed since: ${changed.slice(0, 3).join(', ')}${changed.length > 3 ? ` and ${changed.length - 3} more` : ''}).`;
  process.stderr.write(`idqs: ${why} Run "npm run build" in ${root} (npm ci does it too), then retry.\n`);
  process.exit(1);
}

import(pathToFileURL(join(root, ENTRY)).href).catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
