// `idqs serve` as a user runs it, for the tests that must see the product as
// shipped (the build, in a process of its own, default settings): started on a
// database with no IDQS_* variable in its environment but the log level, and
// stopped with SIGTERM as an operator would.

import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
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
    post: (path, body) => postOnce(base + path, JSON.stringify(body)),
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A POST on a connection of its own. The tests compare big answers between requests, which can hold
 * their event loop past the server's keep-alive; a kept-alive socket the server closed meanwhile
 * would then fail the next request on the client's side (its race, not the server's).
 */
function postOnce(url: string, body: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers }));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
