// A local HTTP server in the layouts releases are published in, made from the
// test dataset of our own generator: the bucket (<tag>/release_artifacts/ with
// .sha256 sidecars and an S3-style tag listing), the repository's release
// assets (<tag>/<file>), and a package index (PEP 691 JSON or PEP 503 HTML)
// with a real wheel (zip with RECORD). Faults for the tests: drop the
// connection mid-file once, serve a wrong sha256, leave a file out, send a file slowly.
// The latest release is also reachable as the bucket's current/ and the assets' latest/.

import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import yazl from 'yazl';
import { TABLES } from '../src/core/registry/tables.ts';

export const TAG = '24.2.2';
export const WHEEL = `idc_index_data-${TAG}-py3-none-any.whl`;
const CORE = ['idc_index', 'prior_versions_index', 'collections_index', 'analysis_results_index', 'version_metadata_index'];

export interface ReleaseServer {
  url: string;
  /** Every request: path (with query), Range header. */
  requests: { path: string; range: string | undefined }[];
  /** Drop the connection of the next GET of this path after this many bytes. */
  dropOnce: Map<string, number>;
  /** Paths answered 404 (as if absent). */
  hidden: Set<string>;
  /** Paths sent with chunked transfer encoding (no Content-Length, no ranges). */
  chunked: Set<string>;
  /** Paths answered with a 302 to another path of this server. */
  redirect: Map<string, string>;
  /** Paths sent slowly: a pause of this many ms after every 16 KB (so concurrent clients overlap). */
  slow: Map<string, number>;
  /** Paths whose body is replaced (e.g. a wrong .sha256). */
  override: Map<string, string>;
  /** How the package index answers: json (PEP 691) or html (PEP 503). */
  indexForm: 'json' | 'html';
  sha256: Map<string, string>;
  close: () => Promise<void>;
}

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

function schemaJson(stem: string): string {
  const def = TABLES.find((t) => t.file === stem);
  return JSON.stringify({ table_description: def?.description ?? '', columns: (def?.columns ?? []).map((c) => ({ name: c.name, type: c.type, mode: c.mode, description: c.description })) });
}

async function writeWheel(dir: string, out: string): Promise<void> {
  const zip = new yazl.ZipFile();
  const record: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    const data = readFileSync(join(dir, f));
    zip.addBuffer(data, `idc_index_data/${f}`);
    record.push(`idc_index_data/${f},sha256=${createHash('sha256').update(data).digest('base64url')},${data.length}`);
  }
  zip.addBuffer(Buffer.from('__version__ = "24.2.2"\n'), 'idc_index_data/_version.py');
  record.push(`idc_index_data-${TAG}.dist-info/RECORD,,`);
  zip.addBuffer(Buffer.from(record.join('\n') + '\n'), `idc_index_data-${TAG}.dist-info/RECORD`);
  zip.end();
  await new Promise<void>((resolve, reject) => zip.outputStream.pipe(createWriteStream(out)).on('close', resolve).on('error', reject));
}

/** Lay out `dataset` (a folder of our generator) under `root` in the three published forms. */
export async function makeReleaseLayout(dataset: string, root: string): Promise<void> {
  const stems = readdirSync(dataset).filter((f) => f.endsWith('.parquet')).map((f) => f.slice(0, -'.parquet'.length));
  const gcs = join(root, 'gcs', TAG, 'release_artifacts');
  const gh = join(root, 'github', TAG);
  const wheelDir = join(root, 'wheel-src');
  for (const d of [gcs, gh, wheelDir, join(root, 'pypi', 'files')]) mkdirSync(d, { recursive: true });
  for (const stem of stems) {
    for (const d of [gcs, gh]) {
      copyFileSync(join(dataset, `${stem}.parquet`), join(d, `${stem}.parquet`));
      writeFileSync(join(d, `${stem}.parquet.sha256`), `${sha(join(dataset, `${stem}.parquet`))}  ${stem}.parquet\n`);
      writeFileSync(join(d, `${stem}_schema.json`), schemaJson(stem));
    }
    writeFileSync(join(wheelDir, `${stem}_schema.json`), schemaJson(stem));
    if (CORE.includes(stem)) copyFileSync(join(dataset, `${stem}.parquet`), join(wheelDir, `${stem}.parquet`));
  }
  await writeWheel(wheelDir, join(root, 'pypi', 'files', WHEEL));
}

/** Serve `root` (made by makeReleaseLayout) on a loopback port. */
export async function startReleaseServer(root: string): Promise<ReleaseServer> {
  const state: Omit<ReleaseServer, 'url' | 'close'> = {
    requests: [],
    dropOnce: new Map(),
    hidden: new Set(),
    chunked: new Set(),
    redirect: new Map(),
    override: new Map(),
    slow: new Map(),
    indexForm: 'json',
    sha256: new Map(),
  };
  const wheelPath = join(root, 'pypi', 'files', WHEEL);
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    // The latest release under the names the real sources give it: the bucket's current/, the assets' latest/.
    const path = u.pathname.replace(/^\/gcs\/current\//, `/gcs/${TAG}/`).replace(/^\/github\/latest\//, `/github/${TAG}/`);
    state.requests.push({ path: `${path}${u.search}`, range: req.headers.range });
    if (state.hidden.has(path)) {
      res.writeHead(404).end('not found');
      return;
    }
    const to = state.redirect.get(path);
    if (to !== undefined) {
      res.writeHead(302, { location: to }).end();
      return;
    }
    if (state.override.has(path)) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(state.override.get(path));
      return;
    }
    // The bucket's listing of its top-level "folders" (the tags).
    if (path === '/gcs' && u.searchParams.get('delimiter') === '/') {
      const tags = readdirSync(join(root, 'gcs')).map((t) => `<CommonPrefixes><Prefix>${t}/</Prefix></CommonPrefixes>`);
      res.writeHead(200, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><ListBucketResult>${tags.join('')}</ListBucketResult>`);
      return;
    }
    if (path === '/pypi/simple/idc-index-data/') {
      const digest = state.sha256.get(WHEEL) ?? sha(wheelPath);
      const href = `../../files/${WHEEL}`;
      if (state.indexForm === 'json' && String(req.headers.accept ?? '').includes('application/vnd.pypi.simple.v1+json')) {
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' }).end(
          JSON.stringify({
            meta: { 'api-version': '1.1' },
            name: 'idc-index-data',
            versions: [TAG],
            files: [
              { filename: `idc_index_data-${TAG}.tar.gz`, url: `../../files/idc_index_data-${TAG}.tar.gz`, hashes: { sha256: '0'.repeat(64) }, yanked: false },
              { filename: WHEEL, url: href, hashes: { sha256: digest }, size: statSync(wheelPath).size, yanked: false },
            ],
          }),
        );
      } else {
        res.writeHead(200, { 'content-type': 'text/html' }).end(
          `<!DOCTYPE html><html><body><h1>Links for idc-index-data</h1>\n<a href="${href}#sha256=${digest}" data-requires-python="&gt;=3.10">${WHEEL}</a><br/>\n</body></html>`,
        );
      }
      return;
    }
    const file = join(root, path);
    if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    if (state.chunked.has(path)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      createReadStream(file, { highWaterMark: 4096 }).pipe(res);
      return;
    }
    const size = statSync(file).size;
    const etag = `"${statSync(file).mtimeMs}-${size}"`;
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = m && (!req.headers['if-range'] || req.headers['if-range'] === etag) ? Number(m[1]) : 0;
    const headers = { 'content-length': String(size - start), 'accept-ranges': 'bytes', etag, 'content-type': 'application/octet-stream' };
    if (start > 0) res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${size - 1}/${size}` });
    else res.writeHead(200, headers);
    const drop = state.dropOnce.get(path);
    if (drop !== undefined) {
      state.dropOnce.delete(path);
      // Send the first bytes, then cut the connection mid-file.
      const s = createReadStream(file, { start, end: start + drop - 1 });
      s.on('data', (c) => res.write(c));
      s.on('end', () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    const pause = state.slow.get(path);
    if (pause !== undefined) {
      const s = createReadStream(file, { start, highWaterMark: 16 * 1024 });
      s.on('data', (c) => {
        s.pause();
        res.write(c, () => setTimeout(() => s.resume(), pause));
      });
      s.on('end', () => res.end());
      res.on('close', () => s.destroy());
      return;
    }
    createReadStream(file, { start }).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...state,
    get indexForm() {
      return state.indexForm;
    },
    set indexForm(v) {
      state.indexForm = v;
    },
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
