// `idqs serve` as a user runs it, for the tests that must see the product as
// shipped (the build, in a process of its own, default settings): started on a
// database with no IDQS_* variable in its environment but the log level, and
// stopped with SIGTERM as an operator would.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './fixture.ts';

const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'idqs.cjs');

export interface CliServer {
  proc: ChildProcess;
  base: string;
  post: (path: string, body: unknown) => Promise<Response>;
  stop: () => Promise<void>;
}

export async function serveWithDefaults(db: string): Promise<CliServer> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('IDQS_')));
  const port = await freePort();
  const proc = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', String(port)], { env: { ...env, IDQS_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const end = Date.now() + 120_000;
  while (!/serving data release/.test(err)) {
    if (proc.exitCode !== null || Date.now() > end) throw new Error(`idqs serve did not start:\n${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const base = `http://127.0.0.1:${port}`;
  return {
    proc,
    base,
    post: (path, body) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
