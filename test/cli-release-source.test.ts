// `idqs data fetch` and `idqs serve --release` take the release's source from the same places in the same order
// (--source, then IDQS_RELEASE_SOURCE, then gcs): run as real processes against a local server in the published
// layouts (the bucket under /gcs, the release assets under /github, the package index under /pypi), each with
// its own empty cache, the source each one used is read from the server's own log of requests and from the line
// each one prints ("fetching release X from S"). `data fetch` ignored IDQS_RELEASE_SOURCE before the CLI had one
// builder of the fetch's options.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDataset } from './fixture.ts';
import { makeReleaseLayout, startReleaseServer, TAG, type ReleaseServer } from './release-server.ts';
import { startCli } from './s3.ts';

let tmp: string;
let srv: ReleaseServer;
let caches = 0;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'idqs-source-'));
  await makeReleaseLayout((await testDataset()).folder, join(tmp, 'srv'));
  srv = await startReleaseServer(join(tmp, 'srv'));
});
after(async () => {
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The environment of both commands: every source's base on the local server, a fresh cache, and `extra`. */
function env(extra: Record<string, string>): Record<string, string> {
  const e: Record<string, string> = {
    IDQS_RELEASE_GCS_URL: `${srv.url}/gcs`,
    IDQS_RELEASE_GITHUB_URL: `${srv.url}/github`,
    IDQS_PYPI_INDEX: `${srv.url}/pypi/simple`,
    IDQS_CACHE_DIR: join(tmp, `cache-${caches++}`),
    IDQS_FETCH_RETRY_BASE_MS: '10',
    ...extra,
  };
  // The test's own environment must not choose for it.
  delete process.env.IDQS_RELEASE_SOURCE;
  delete process.env.IDQS_RELEASE;
  return e;
}

/** The first path segments of the requests made since `from` (gcs, github or pypi). */
function sourcesAsked(from: number): string[] {
  return [...new Set(srv.requests.slice(from).map((q) => q.path.split('/')[1]!))].sort();
}

/** `idqs data fetch --no-build` in `environment`: the source it says it fetches from, and the one it asked. */
async function dataFetch(environment: Record<string, string>, ...flags: string[]) {
  const from = srv.requests.length;
  const r = await startCli(['data', 'fetch', '--release', TAG, '--no-build', ...flags], { env: env(environment) }).done;
  assert.equal(r.code, 0, r.stderr);
  return { said: /fetching release \S+ from (\w+)/.exec(r.stderr)?.[1], asked: sourcesAsked(from) };
}

/** `idqs serve --release` in `environment`, stopped once it serves: the source it says it fetched from, and the one it asked. */
async function serve(environment: Record<string, string>, ...flags: string[]) {
  const from = srv.requests.length;
  const run = startCli(['serve', '--release', TAG, '--port', '0', ...flags], { env: env(environment) });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    run.child.stderr!.on('data', (c: Buffer | string) => {
      stderr += String(c);
      if (/IDQS \S+ serving/.test(stderr)) resolve();
    });
    run.child.once('exit', (code) => reject(new Error(`serve exited (${code}) before serving:\n${stderr}`)));
  });
  run.child.kill('SIGTERM');
  const r = await run.done;
  assert.equal(r.code, 0, r.stderr);
  return { said: /fetching release \S+ from (\w+)/.exec(r.stderr)?.[1], asked: sourcesAsked(from) };
}

test('with IDQS_RELEASE_SOURCE=github, data fetch and serve both fetch from github', async () => {
  const f = await dataFetch({ IDQS_RELEASE_SOURCE: 'github' });
  const s = await serve({ IDQS_RELEASE_SOURCE: 'github' });
  assert.deepEqual(f, { said: 'github', asked: ['github'] });
  assert.deepEqual(s, { said: 'github', asked: ['github'] });
});

test('without IDQS_RELEASE_SOURCE, both fetch from the same default, the bucket (gcs)', async () => {
  const f = await dataFetch({});
  const s = await serve({});
  assert.deepEqual(f, { said: 'gcs', asked: ['gcs'] });
  assert.deepEqual(s, { said: 'gcs', asked: ['gcs'] });
});

test('--source wins over IDQS_RELEASE_SOURCE for both', async () => {
  const f = await dataFetch({ IDQS_RELEASE_SOURCE: 'github' }, '--source', 'pypi');
  const s = await serve({ IDQS_RELEASE_SOURCE: 'github' }, '--source', 'pypi');
  assert.deepEqual(f, { said: 'pypi', asked: ['pypi'] });
  assert.deepEqual(s, { said: 'pypi', asked: ['pypi'] });
});
