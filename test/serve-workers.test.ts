// `idqs serve --workers 2` as a user runs it (the real CLI, a real port): both
// workers answer on the one port, a worker killed is replaced while the other
// keeps serving, and SIGTERM drains the fleet and exits 0 with no process left.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, testDataset } from './fixture.ts';

const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'idqs.cjs');


/** GET on a fresh connection (no keep-alive), so the fleet's round-robin can pick any worker. */
function getFresh(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .setTimeout(10_000, function (this: import('node:http').ClientRequest) {
        this.destroy(new Error(`no answer from ${url} in 10 s`));
      })
      .on('error', reject);
  });
}

async function until(what: string, cond: () => boolean, ms: number, log: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; output:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('serve --workers 2: both workers answer on one port, a killed worker is replaced, SIGTERM drains all and exits 0', async () => {
  const db = (await testDataset()).db;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', String(port), '--workers', '2'], {
    env: { ...process.env, IDQS_LOG_LEVEL: 'info', IDQS_SHUTDOWN_S: '3', IDQS_SQL_CONNECTIONS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (c) => resolve(c)));
  const workerPids = () => [...err.matchAll(/worker \d+ \(pid (\d+)\) serving/g)].map((m) => Number(m[1]));
  try {
    await until('two workers serving', () => workerPids().length >= 2 || proc.exitCode !== null, 60_000, () => err);
    assert.equal(proc.exitCode, null, err);
    const [first, second] = workerPids() as [number, number];
    assert.notEqual(first, second);

    // Requests on fresh connections reach both workers: each logs its own request lines (pino writes its pid).
    for (let i = 0; i < 24; i++) assert.equal((await getFresh(`${url}/v3/version`)).status, 200);
    await until('request lines', () => (out.match(/"msg":"request"/g) ?? []).length >= 24, 5000, () => out);
    const served = new Set([...out.matchAll(/"pid":(\d+)[^\n]*"msg":"request"/g)].map((m) => Number(m[1])));
    assert.deepEqual([...served].sort(), [first, second].sort(), 'both workers answered');

    // A worker killed: the primary notices at once and starts a replacement; the other keeps answering.
    // (A connection handed to the worker in the instant it dies is lost: nginx in front retries it.)
    process.kill(first, 'SIGKILL');
    await until('the primary to notice', () => err.includes(`pid ${first}) killed by SIGKILL; starting a replacement`), 10_000, () => err);
    for (let i = 0; i < 5; i++) assert.equal((await getFresh(`${url}/v3/health`)).status, 200);
    await until('a replacement worker', () => workerPids().length >= 3, 60_000, () => err);
    const replacement = workerPids()[2]!;
    assert.ok(alive(replacement) && alive(second));

    // SIGTERM: every worker drains and the primary exits 0.
    proc.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 10_000))]);
    assert.equal(code, 0, err);
    await until('workers gone', () => !alive(second) && !alive(replacement), 3000, () => err);
    assert.match(err, /fleet stopped/);
  } finally {
    proc.kill('SIGKILL');
    for (const pid of workerPids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});
