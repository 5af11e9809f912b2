// `idqs download` against a store nobody answers (a closed loopback port):
// the real command stops after the first failures with one message naming
// the endpoint, --endpoint and --source, within seconds, for a dry run and a
// real one; and a dry run's summary is its plan.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, startServer, type TestServer } from './fixture.ts';
import { runCli } from './s3.ts';

let api: TestServer;
let tmp: string;
let coll: string;
let series: number;
before(async () => {
  api = await startServer();
  tmp = mkdtempSync(join(tmpdir(), 'idqs-dl-unreachable-'));
  // A collection of a few dozen series, as in the report (44 series).
  const row = (await api.ctx.engine.one(
    `SELECT collection_id AS c, count(*)::INTEGER AS n FROM "index" GROUP BY 1 HAVING count(*) BETWEEN 20 AND 80 ORDER BY n DESC, c LIMIT 1`,
  ))!;
  coll = String(row.c);
  series = Number(row.n);
});
after(async () => {
  await api?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

for (const dryRun of [true, false]) {
  test(`${dryRun ? 'a dry run' : 'a download'} from an unreachable store stops at once with one clear message`, async () => {
    // Nothing listens on a port just freed.
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const out = join(tmp, dryRun ? 'dry' : 'real');
    const started = Date.now();
    const r = await runCli(['download', '--collection', coll, '--api', api.url, '--endpoint', endpoint, '--out', out, '--yes', ...(dryRun ? ['--dry-run'] : [])], {
      // The default backoff, as a user gets it.
      env: { IDQS_DOWNLOAD_RETRY_BASE_MS: '250' },
    });
    const seconds = (Date.now() - started) / 1000;
    assert.equal(r.code, 1, r.stderr);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('error:'));
    assert.equal(errors.length, 1, r.stderr);
    assert.match(errors[0]!, new RegExp(`cloud1 store is unreachable: cannot reach ${endpoint.replace(/\./g, '\\.')}`));
    assert.match(errors[0]!, /--source cloud2/);
    assert.match(errors[0]!, /--endpoint URL/);
    assert.ok(r.stderr.split('\n').length < 15, `a few lines, not one per series and retry:\n${r.stderr}`);
    assert.ok(seconds < 20, `stopped after ${seconds.toFixed(1)} s`);
    assert.ok(r.stderr.includes(`${series} series`), 'the plan was announced first');
    // Nothing was written.
    assert.deepEqual(readdirSync(tmp).filter((d) => d === (dryRun ? 'dry' : 'real')), []);
  });
}
