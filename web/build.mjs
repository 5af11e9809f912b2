// Build the web explorer (run by `npm run build`, hence by `npm ci`): type-check
// web/src, bundle it with esbuild into dist/web/assets with content-hashed
// names, write dist/web/index.html pointing at them, and store gzip and
// brotli copies next to each asset so the server sends them without
// compressing per request. Fails when JS + CSS exceed the gzipped budget.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';
import { build } from 'esbuild';

const BUDGET_GZIP_BYTES = 300 * 1024;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web');
const assets = join(out, 'assets');
const started = Date.now();

try {
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'web', 'tsconfig.json')], { stdio: 'inherit' });
} catch {
  process.stderr.write('web build: type errors in web/src (above)\n');
  process.exit(1);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });
const result = await build({
  entryPoints: { app: join(root, 'web', 'src', 'main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  outdir: assets,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});

const files = Object.keys(result.metafile.outputs).map((f) => join(root, f));
const js = files.find((f) => f.endsWith('.js'));
const css = files.find((f) => f.endsWith('.css'));
if (!js || !css) throw new Error('web build: expected one .js and one .css output');

let gzipped = 0;
for (const f of files) {
  const body = readFileSync(f);
  const gz = gzipSync(body, { level: 9 });
  writeFileSync(`${f}.gz`, gz);
  writeFileSync(`${f}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  if (f.endsWith('.js') || f.endsWith('.css')) gzipped += gz.length;
}

const html = readFileSync(join(root, 'web', 'index.html'), 'utf8').replace('%JS%', basename(js)).replace('%CSS%', basename(css));
writeFileSync(join(out, 'index.html'), html);

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
process.stderr.write(`web explorer built in ${((Date.now() - started) / 1000).toFixed(1)} s: ${basename(js)}, ${basename(css)}; JS+CSS ${kb(gzipped)} gzipped (budget ${kb(BUDGET_GZIP_BYTES)})\n`);
if (gzipped > BUDGET_GZIP_BYTES) {
  process.stderr.write(`web build: JS+CSS is ${kb(gzipped)} gzipped, over the ${kb(BUDGET_GZIP_BYTES)} budget\n`);
  process.exit(1);
}
