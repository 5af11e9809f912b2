// `idqs serve` that cannot start exits non-zero with the reason (issue 21, item
// 6): a supervisor that restarts on failure must see a failure. The real CLI
// on a truncated copy of a real database and on a file of random bytes, with
// the default worker count and with a fleet of two.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, testDataset } from './fixture.ts';

const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'idqs.cjs');
const root = mkdtempSync(join(tmpdir(), 'idqs-exit-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** The first `bytes` of a real database: its header is right, its blocks are missing. */
async function truncatedCopy(bytes: number): Promise<string> {
  const fd = openSync((await testDataset()).db, 'r');
  const head = Buffer.alloc(bytes);
  readSync(fd, head, 0, bytes, 0);
  closeSync(fd);
  const out = join(root, 'truncated.duckdb');
  writeFileSync(out, head);
  return out;
}

function corrupt(): string {
  const out = join(root, 'random.duckdb');
  writeFileSync(out, randomBytes(1 << 20));
  return out;
}

async function serveFails(db: string, workers: string | null): Promise<{ code: number | null; signal: string | null; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: root, IDQS_LOG_LEVEL: 'warn' };
  delete env.IDQS_WORKERS;
  const args = [CLI, 'serve', '--db', db, '--port', String(await freePort())];
  if (workers) args.push('--workers', workers);
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 90_000);
  const [code, signal] = (await new Promise((resolve) => proc.on('exit', (...a) => resolve(a)))) as [number | null, string | null];
  clearTimeout(timer);
  return { code, signal, err };
}

for (const [name, make, reason] of [
  ['a truncated database', () => truncatedCopy(300_000), /Could not read enough bytes/],
  ['a file that is not a database', async () => corrupt(), /not a valid DuckDB database file/],
] as const) {
  for (const workers of [null, '2']) {
    test(`serve ${workers ? `--workers ${workers}` : '(default worker count)'} on ${name}: exits 1 with the reason`, async () => {
      const r = await serveFails(await make(), workers);
      assert.equal(r.signal, null, `exited by itself, not killed by the test's 90 s limit\n${r.err}`);
      assert.equal(r.code, 1, r.err);
      // The last line says why, in the engine's words.
      const last = r.err.trim().split('\n').at(-1)!;
      assert.match(last, reason, r.err);
      assert.doesNotMatch(r.err, /starting a replacement/, 'a worker that never served is not "replaced"');
      // The default is a single process (issue 21, item 7): no fleet worker was started.
      if (!workers) assert.doesNotMatch(r.err, /worker \d+ \(pid/, r.err);
    });
  }
}
