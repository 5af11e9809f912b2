// What a user sees on the terminal, with the real CLI: `idqs serve` prints
// readable lines on a terminal (a pseudo-terminal made by script(1)) and JSON
// lines otherwise, at most one line per request; a fleet prints its banner
// once; `idqs sql` without --db says on stderr which dataset answered.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { freePort, testDataset } from './fixture.ts';
import { CLI, runCli } from './s3.ts';

let db: string;
before(async () => {
  db = (await testDataset()).db;
});

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Starts a command; resolves its output once `ready` appears in it (stdout and stderr together). */
function start(cmd: string, args: string[], ready: RegExp, env: Record<string, string> = {}) {
  const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(c);
  let out = '';
  const seen = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 40 s:\n${out}`)), 40_000);
    const on = (d: Buffer) => {
      out += String(d);
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    c.stdout!.on('data', on);
    c.stderr!.on('data', on);
  });
  const stop = () =>
    new Promise<string>((resolve) => {
      c.on('close', () => resolve(out));
      c.kill('SIGTERM');
    });
  return { seen, output: () => out, stop };
}

async function requests(port: number): Promise<void> {
  for (const path of ['/v3/version', '/v3/stats', '/v3/nope']) await (await fetch(`http://127.0.0.1:${port}${path}`)).text();
  // The log line is written when the response closes.
  await new Promise((r) => setTimeout(r, 500));
}

test('on a terminal the request log is one readable line per request; elsewhere one JSON line', async () => {
  const env = { IDQS_DB: db, IDQS_WORKERS: '1' };
  // Not a terminal: JSON lines on stdout.
  const p1 = await freePort();
  const plain = start(process.execPath, [CLI, 'serve', '--port', String(p1)], /serving data release/, env);
  await plain.seen;
  await requests(p1);
  const json = plain.output().split('\n').filter((l) => l.startsWith('{'));
  const reqLines = json.map((l) => JSON.parse(l) as { msg: string; path: string }).filter((r) => r.msg === 'request');
  assert.deepEqual(reqLines.map((r) => r.path), ['/v3/version', '/v3/stats', '/v3/nope']);
  await plain.stop();

  // A terminal: script(1) gives the server a pseudo-terminal.
  const p2 = await freePort();
  const line = [process.execPath, CLI, 'serve', '--port', String(p2)].map((a) => `'${a}'`).join(' ');
  const tty = start('script', ['-qfec', line, '/dev/null'], /serving data release/, env);
  await tty.seen;
  await requests(p2);
  // eslint-disable-next-line no-control-regex -- the terminal's colour codes are what is stripped
  const text = tty.output().replace(/\x1b\[[0-9;]*m/g, '');
  const logged = text.split(/\r?\n/).filter((l) => /request/.test(l) && /\/v3\//.test(l));
  assert.equal(logged.length, 3, text);
  for (const l of logged) assert.doesNotMatch(l.trim(), /^\{/, 'not JSON');
  assert.match(logged[0]!, /^\[?\d\d:\d\d:\d\d/, 'starts with the time');
  assert.match(logged.find((l) => l.includes('/v3/nope'))!, /404/);
  await tty.stop();
});

test('a fleet prints the banner once, not once per worker', async () => {
  const port = await freePort();
  const fleet = start(process.execPath, [CLI, 'serve', '--port', String(port), '--workers', '2'], /IDQS fleet of 2 workers/, { IDQS_DB: db });
  await fleet.seen;
  const out = await fleet.stop();
  assert.equal(out.match(/serving data release/g)?.length, 1, out);
});

test('idqs sql without --db says on stderr which dataset answers; stdout is the result only', async () => {
  const r = await runCli(['sql', 'SELECT 6 * 7 AS n', '--format', 'json'], { env: { IDQS_DB: db } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((JSON.parse(r.stdout) as { rows: unknown[] }).rows, [{ n: 42 }]);
  assert.match(r.stderr, /answering from IDQS_DB .*data release v\d+/);
  const named = await runCli(['sql', 'SELECT 1 AS n', '--db', db, '--format', 'json']);
  assert.equal(named.code, 0, named.stderr);
  assert.doesNotMatch(named.stderr, /answering from/, 'with --db the user named it');
});
