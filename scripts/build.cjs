#!/usr/bin/env node
// Compiles src/ to dist/, bundles the web explorer (web/build.mjs) into
// dist/web, and stamps the build with a digest of every source file, so bin/idqs.cjs can tell a build that matches the tree from a missing
// or stale one. `node scripts/build.cjs` builds; `--if-stale` builds only when
// the stamp does not match the sources (what `npm test` runs first).
// CommonJS: bin/idqs.cjs requires it before anything asynchronous happens.
'use strict';

const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const { spawnSync } = require('node:child_process');

const STAMP = join('dist', '.build-stamp.json');
const ENTRY = join('dist', 'cli', 'main.js');

/** Every file under src/ and web/, relative to root, sorted. */
function sourceFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(root, p));
    }
  };
  walk(join(root, 'src'));
  if (existsSync(join(root, 'web'))) walk(join(root, 'web'));
  return out.sort();
}

function digestOf(root, file) {
  return createHash('sha256').update(readFileSync(join(root, file))).digest('hex').slice(0, 16);
}

/** The digest of every source file, and when they were read. */
function snapshot(root) {
  const started = Date.now();
  const files = {};
  for (const f of sourceFiles(root)) files[f] = digestOf(root, f);
  return { started, files };
}

/** Record what the build in dist/ was made from (a snapshot taken before compiling). */
function writeStamp(root, snap = snapshot(root)) {
  writeFileSync(join(root, STAMP), JSON.stringify({ sources_read_at: snap.started, files: snap.files }, null, 1) + '\n');
}

/**
 * {state: 'fresh'} when dist/ was built from the sources as they are;
 * 'missing' when there is no build (or no stamp); 'stale' with the files that
 * changed, appeared or disappeared since. Sources not modified since the stamp
 * are not read (the common case costs one stat per file).
 */
function buildState(root) {
  const stampPath = join(root, STAMP);
  if (!existsSync(join(root, ENTRY)) || !existsSync(stampPath)) return { state: 'missing', changed: [] };
  const stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
  const recorded = stamp.files;
  const files = sourceFiles(root);
  // A file modified after the sources were read for the build may differ from what was compiled: compare digests then.
  const untouched = files.every((f) => statSync(join(root, f)).mtimeMs < stamp.sources_read_at);
  if (untouched && files.length === Object.keys(recorded).length && files.every((f) => f in recorded)) return { state: 'fresh', changed: [] };
  const changed = files.filter((f) => recorded[f] !== digestOf(root, f));
  const removed = Object.keys(recorded).filter((f) => !files.includes(f));
  return changed.length + removed.length === 0 ? { state: 'fresh', changed: [] } : { state: 'stale', changed: [...changed, ...removed] };
}

function build(root) {
  const snap = snapshot(root);
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  const web = spawnSync(process.execPath, [join(root, 'web', 'build.mjs')], { stdio: 'inherit' });
  if (web.status !== 0) process.exit(web.status ?? 1);
  writeStamp(root, snap);
}

module.exports = { buildState, writeStamp, STAMP, ENTRY };

if (require.main === module) {
  const root = join(__dirname, '..');
  if (process.argv.includes('--if-stale') && buildState(root).state === 'fresh') process.exit(0);
  build(root);
}
