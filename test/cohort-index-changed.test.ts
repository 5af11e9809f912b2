// The fourth audit, item 4: the cohort-index file changed under a running
// server (copied over, rewritten by another process, a disk fault) gave wrong
// answers with 200 (counts by identifier 0, a collection's facet 0) and nothing
// was logged. Now a part read on first use is checked against its checksum
// from the load: every answer equals SQL written here (or is a clear 503), the
// operator is told, and the index is built again and the file rewritten.
// Damage before start is logged with its reason and the file replaced. On a
// copy of the test dataset (its own file, so other tests are untouched).

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConfig, testDataset, type TestServer } from './fixture.ts';
import { createContext } from '../src/core/context.ts';
import { buildServer } from '../src/server.ts';
import { indexOrigin, readyCohortIndex } from '../src/core/services/cohort-index/build.ts';
import { indexFileOf } from '../src/core/services/cohort-index/file.ts';

const dir = mkdtempSync(join(tmpdir(), 'idqs-index-changed-'));
const open: TestServer[] = [];
after(async () => {
  for (const s of open) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, cond: () => boolean, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    assert.ok(Date.now() < end, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A server on `db` with its index ready, and the operator lines it logs. */
async function serve(db: string): Promise<{ s: TestServer; said: { level: string; msg: string }[] }> {
  // The operator's lines from the very start (the file is read while the server starts).
  const ctx = await createContext(testConfig(), db);
  const said: { level: string; msg: string }[] = [];
  ctx.engine.events.on('operator', (e: { level: string; msg: string }) => said.push(e));
  const app = await buildServer(ctx);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const s: TestServer = {
    url,
    ctx,
    close: async () => {
      await app.close();
      ctx.engine.close();
    },
    get: (path) => fetch(url + path),
    post: (path, body) => fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  };
  open.push(s);
  await until('the index', () => readyCohortIndex(s.ctx) !== null);
  return { s, said };
}

/** A copy of the test database with a cohort-index file written for it. */
async function databaseWithIndexFile(name: string): Promise<string> {
  const db = join(dir, `${name}.duckdb`);
  copyFileSync((await testDataset()).db, db);
  const first = await serve(db);
  assert.equal(await indexOrigin(first.s.ctx)!.saved, 'written');
  await first.s.close();
  open.splice(open.indexOf(first.s), 1);
  return db;
}

/** Overwrite the second half of the file in place (same inode, same size), as a copy over it or a disk fault would. */
function damageInPlace(file: string): void {
  const bytes = readFileSync(file);
  const from = Math.floor(bytes.length / 2);
  for (let i = from; i < bytes.length; i++) bytes[i] = (bytes[i]! * 31 + i) & 0xff;
  const ino = statSync(file).ino;
  writeFileSync(file, bytes);
  assert.equal(statSync(file).ino, ino, 'the same file, rewritten in place');
}

test('a file changed under the running server never gives a wrong answer: SQL answers, the operator is told, the index is rebuilt and the file rewritten', async () => {
  const db = await databaseWithIndexFile('changed');
  const { s, said } = await serve(db);
  assert.equal(indexOrigin(s.ctx)!.loaded, true, 'loaded from its file');
  // A first request that reads no part on first use.
  assert.equal((await s.post('/v3/cohort/counts', { terms: { Modality: ['CT'] } })).status, 200);
  damageInPlace(indexFileOf(db));

  const e = s.ctx.engine;
  const series = (await e.rows(`SELECT SeriesInstanceUID AS u, collection_id AS c FROM "index" USING SAMPLE 15 ROWS (reservoir, 7)`)).map((r) => [String(r.u), String(r.c)]);
  let answered = 0;
  for (const [uid, collection] of series) {
    const r = await s.post('/v3/cohort/counts', { terms: { SeriesInstanceUID: [uid] } });
    const body = (await r.json()) as { series?: number; error?: { code: string } };
    if (r.status === 503) {
      assert.equal(body.error?.code, 'unavailable');
      continue;
    }
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.equal(body.series, 1, `counts of series ${uid}`);
    answered++;
    const f = await s.post('/v3/cohort/facets', { filters: { terms: { collection_id: [collection] } }, attributes: ['collection_id'] });
    if (f.status === 503) continue;
    assert.equal(f.status, 200);
    const facet = ((await f.json()) as { facets: { collection_id: { values: { value: string; count: number }[] } } }).facets.collection_id;
    const want = Number((await e.one(`SELECT count(DISTINCT PatientID) AS n FROM "index" WHERE collection_id = ?`, [collection!]))!.n);
    assert.equal(facet.values.find((v) => v.value === collection)?.count, want, `facet of ${collection}`);
  }
  assert.ok(answered >= 10, `${answered} of 15 answered`);
  assert.ok(said.some((l) => l.level === 'warn' && /changed under the running server/.test(l.msg)), JSON.stringify(said));
  // Built again from the database, and the file rewritten whole: a new server loads it.
  await until('the rebuild', () => readyCohortIndex(s.ctx) !== null && indexOrigin(s.ctx)?.loaded === false);
  assert.match(indexOrigin(s.ctx)!.reason ?? '', /damaged/);
  assert.equal(await indexOrigin(s.ctx)!.saved, 'written');
  const again = await serve(db);
  assert.equal(indexOrigin(again.s.ctx)!.loaded, true);
});

test('a file damaged before start is logged with its reason and replaced by the rebuilt one', async () => {
  const db = await databaseWithIndexFile('damaged');
  damageInPlace(indexFileOf(db));
  const { s, said } = await serve(db);
  assert.equal(indexOrigin(s.ctx)!.loaded, false);
  assert.ok(said.some((l) => l.level === 'warn' && /cohort index file not used.*damaged \(checksum mismatch\)/.test(l.msg)), JSON.stringify(said));
  assert.equal(await indexOrigin(s.ctx)!.saved, 'written');
  const next = await serve(db);
  assert.equal(indexOrigin(next.s.ctx)!.loaded, true, 'the file on disk is the rebuilt one');
});
