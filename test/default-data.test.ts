// What `idqs serve` serves when no dataset is named, as a user starts it (the
// real CLI, a real port, an empty cache): the latest real release from the
// first release source that answers (local servers laid out like the bucket,
// the release assets and the package index), then the same from the cache
// with no network; with every source unreachable (closed ports) the generated
// dataset within seconds, labelled on the terminal, in /v3/version, in the MCP
// instructions and by a banner on the explorer's pages (a real browser).
// --demo and IDQS_DEMO=1 serve the generated dataset without a single request.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { openBrowser, type TestBrowser } from './browser.ts';
import { freePort, testDataset } from './fixture.ts';
import { makeReleaseLayout, startReleaseServer, TAG, type ReleaseServer } from './release-server.ts';

const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'idqs.cjs');
const BANNER = 'Generated demo data: identifiers are not real.';
let tmp: string;
let srv: ReleaseServer;
let dataset: string;
let closed: string;
let browser: TestBrowser | undefined;

before(async () => {
  dataset = (await testDataset()).folder;
  tmp = mkdtempSync(join(tmpdir(), 'idqs-default-'));
  await makeReleaseLayout(dataset, join(tmp, 'srv'));
  srv = await startReleaseServer(join(tmp, 'srv'));
  // A port nothing listens on: connections are refused.
  closed = `http://127.0.0.1:${await freePort()}`;
});
after(async () => {
  await browser?.close();
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The release sources: each at the local server or at the closed port. */
function sources(up: { gcs?: boolean; github?: boolean; pypi?: boolean }): Record<string, string> {
  return {
    IDQS_RELEASE_GCS_URL: `${up.gcs ? srv.url : closed}/gcs`,
    IDQS_RELEASE_GITHUB_URL: `${up.github ? srv.url : closed}/github`,
    IDQS_PYPI_INDEX: `${up.pypi ? srv.url : closed}/pypi/simple`,
  };
}

interface Served {
  url: string;
  proc: ChildProcess;
  err: () => string;
  /** Seconds from spawn to the line saying which data is served. */
  decidedS: () => number | null;
  stop: () => Promise<void>;
}

/** `idqs serve` with `args` and no dataset in the environment; resolves once /v3/version answers. */
async function serve(cacheDir: string, env: Record<string, string>, args: string[] = []): Promise<Served> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const base = { ...process.env };
  for (const k of ['IDQS_DB', 'IDQS_RELEASE', 'IDQS_RELEASE_SOURCE', 'IDQS_DEMO', 'PIP_INDEX_URL']) delete base[k];
  const started = Date.now();
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', String(port), ...args], {
    env: { ...base, IDQS_CACHE_DIR: cacheDir, IDQS_WORKERS: '1', IDQS_LOG_LEVEL: 'warn', IDQS_SCALE: '0.001', IDQS_SOURCE_TIMEOUT_MS: '1500', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  let decided: number | null = null;
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    if (decided === null && /^data: /m.test(err)) decided = (Date.now() - started) / 1000;
  });
  const end = Date.now() + 180_000;
  for (;;) {
    if (proc.exitCode !== null) assert.fail(`idqs serve exited ${proc.exitCode}:\n${err}`);
    if (Date.now() > end) assert.fail(`idqs serve not ready in 180 s:\n${err}`);
    try {
      if ((await fetch(`${url}/v3/version`)).ok) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    proc,
    err: () => err,
    decidedS: () => decided,
    stop: () =>
      new Promise((resolve) => {
        proc.once('close', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

const json = async (url: string) => (await fetch(url)).json() as Promise<Record<string, unknown>>;

/** One value computed here from the release's own files. */
async function scalar(sql: string): Promise<number> {
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  const r = await c.runAndReadAll(sql);
  c.closeSync();
  inst.closeSync();
  return r.getRows()[0]![0] as number;
}

async function mcpInstructions(url: string): Promise<string> {
  const r = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
  return ((await r.json()) as { result: { instructions: string } }).result.instructions;
}

test('no dataset named, empty cache: the latest release from the first source that answers (the bucket), built and served; then from the cache with no network', async () => {
  const cacheDir = join(tmp, 'cache-bucket');
  const before = srv.requests.length;
  const s = await serve(cacheDir, sources({ gcs: true, github: true, pypi: true }));
  try {
    const v = await json(`${s.url}/v3/version`);
    assert.equal(v.synthetic, false);
    // The bucket's latest says its release in its files (ours in version_metadata_index only).
    assert.equal(v.idc_version, `v${await scalar(`SELECT max(idc_version)::INT FROM read_parquet('${join(dataset, 'version_metadata_index.parquet')}')`)}`);
    const stats = await json(`${s.url}/v3/stats`);
    assert.equal(stats.patients, await scalar(`SELECT count(DISTINCT PatientID)::INT FROM read_parquet('${join(dataset, 'idc_index.parquet')}')`));
    assert.match(s.err(), /^data: the real release v\d+ \(index [^)]*, from gcs, just fetched in .*\); the generated demo data instead: --demo$/m);
    const asked = srv.requests.slice(before).map((r) => r.path);
    assert.ok(asked.includes(`/gcs/${TAG}/release_artifacts/idc_index.parquet`), 'fetched from the bucket');
    assert.ok(!asked.some((p) => p.startsWith('/github') || p.startsWith('/pypi')), 'the other sources were not needed');
    assert.doesNotMatch(await mcpInstructions(s.url), /GENERATED DEMO DATA/);
    // Real data: no banner.
    browser ??= await openBrowser();
    await browser.page.goto(`${s.url}/`);
    await browser.page.getByText('Data release').first().waitFor({ timeout: 30_000 });
    await browser.page.waitForTimeout(500);
    assert.equal(await browser.page.getByText(BANNER).count(), 0);
  } finally {
    await s.stop();
  }

  // Started again with every source unreachable: the cached release, without a request.
  const again = srv.requests.length;
  const t = await serve(cacheDir, sources({}));
  try {
    assert.equal((await json(`${t.url}/v3/version`)).synthetic, false);
    assert.match(t.err(), /^data: the real release v\d+ \(index [^)]*, from gcs, cached in /m);
    assert.equal(srv.requests.length, again);
  } finally {
    await t.stop();
  }
});

test('the bucket and GitHub unreachable: the release comes from PyPI, each source passed over saying why', async () => {
  const s = await serve(join(tmp, 'cache-pypi'), sources({ pypi: true }));
  try {
    assert.equal((await json(`${s.url}/v3/version`)).synthetic, false);
    assert.match(s.err(), /^the public bucket \(http:\/\/127\.0\.0\.1:\d+\/gcs\/current\/release_artifacts\/idc_index\.parquet\.sha256\): connect ECONNREFUSED/m);
    assert.match(s.err(), /^GitHub \(http:\/\/127\.0\.0\.1:\d+\/github\/latest\/idc_index\.parquet\.sha256\): connect ECONNREFUSED/m);
    assert.match(s.err(), new RegExp(`^data: the real release v24 \\(index ${TAG.replaceAll('.', '\\.')}, from pypi, just fetched`, 'm'));
  } finally {
    await s.stop();
  }
});

test('no source answers: the generated dataset within seconds, labelled on the terminal, in /v3/version, in the MCP instructions and on every explorer page', async () => {
  const s = await serve(join(tmp, 'cache-offline'), sources({}));
  try {
    // Three refused connections cost next to nothing; the decision comes well within the connect timeouts.
    assert.ok(s.decidedS()! < 3 * 1.5 + 5, `decided after ${s.decidedS()} s`);
    assert.match(s.err(), /^data: GENERATED DEMO DATA, identifiers are not real: no release source answered \(gcs, github, pypi\); for the real release .*idqs data fetch --release latest$/m);
    assert.equal((await json(`${s.url}/v3/version`)).synthetic, true);
    assert.match(await mcpInstructions(s.url), /^This server serves GENERATED DEMO DATA/);
    browser ??= await openBrowser();
    for (const page of ['/', '/?tab=sql', '/explore/filters/?Modality=CT']) {
      await browser.page.goto(`${s.url}${page}`);
      const banner = browser.page.getByRole('alert').filter({ hasText: BANNER });
      await banner.waitFor({ timeout: 30_000 });
      assert.match(await banner.innerText(), /For the real release, run idqs serve --release latest/);
    }
    await browser.screenshot('demo-banner');
  } finally {
    await s.stop();
  }
});

test('--demo and IDQS_DEMO=1 serve the generated dataset without one request to any source', async () => {
  // The cache of the offline test: its generated dataset is reused (generating it is the slow part).
  const cacheDir = join(tmp, 'cache-offline');
  const before = srv.requests.length;
  const s = await serve(cacheDir, sources({ gcs: true, github: true, pypi: true }), ['--demo']);
  try {
    assert.equal((await json(`${s.url}/v3/version`)).synthetic, true);
    assert.match(s.err(), /^data: the generated demo dataset \(identifiers are not real\), as asked/m);
  } finally {
    await s.stop();
  }
  const t = await serve(cacheDir, { ...sources({ gcs: true, github: true, pypi: true }), IDQS_DEMO: '1' });
  try {
    assert.equal((await json(`${t.url}/v3/version`)).synthetic, true);
  } finally {
    await t.stop();
  }
  assert.equal(srv.requests.length, before, 'no request to any release source');
});
