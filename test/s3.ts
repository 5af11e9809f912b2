// Test helpers of the downloader: a real S3-compatible server (s3rver in its
// own process, seeded with an objects folder), a fault-injecting HTTP proxy in
// front of it, and a runner of the real `idqs` command.

import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Stores } from '../src/core/data/manifest.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI = fileURLToPath(new URL('../bin/idqs.cjs', import.meta.url));

export interface S3Server {
  url: string;
  close: () => Promise<void>;
}

/** Bucket names of both stores → the objects folder (named after cloud1 buckets) that holds their files. */
export function bucketFolders(stores: Stores): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['cloud1', 'cloud2'] as const) for (const [from, to] of Object.entries(stores[key].bucket_map)) out[to] = from;
  return out;
}

/** s3rver on a free loopback port, its buckets seeded from `objects` (see test/s3-server.cjs). */
export async function startS3(objects: string, buckets: Record<string, string>, directory: string): Promise<S3Server> {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', fileURLToPath(new URL('./s3-server.cjs', import.meta.url))], {
    env: { ...process.env, S3_SERVER_CONFIG: JSON.stringify({ directory, objects, buckets }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => resolve((JSON.parse(l) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`s3 server exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** What the proxy does with one request: pass it, answer with a status, or send part of the body then hang. */
export type Fault = { status: number } | { hangAfter: number } | { dropAfter: number } | null;

export interface FaultProxy {
  url: string;
  /** Requests seen, as "GET /bucket/key?query". */
  requests: string[];
  /** Resolves when a hanging response has sent its partial body. */
  hung: Promise<void>;
  close: () => Promise<void>;
}

/** An HTTP proxy in front of `target` that applies `rule` to each request. */
export async function faultProxy(target: string, rule: (req: http.IncomingMessage, n: number) => Fault): Promise<FaultProxy> {
  const requests: string[] = [];
  let onHung: () => void = () => {};
  const hung = new Promise<void>((r) => (onHung = r));
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const fault = rule(req, requests.length);
    if (fault && 'status' in fault) {
      res.writeHead(fault.status, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected ${fault.status}</Message></Error>`);
      return;
    }
    const up = http.request(target + req.url, { method: req.method, headers: req.headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      if (fault && ('hangAfter' in fault || 'dropAfter' in fault)) {
        const chunks: Buffer[] = [];
        ur.on('data', (c: Buffer) => chunks.push(c));
        ur.on('end', () => {
          const n = 'hangAfter' in fault ? fault.hangAfter : fault.dropAfter;
          res.write(Buffer.concat(chunks).subarray(0, n), () => {
            if ('dropAfter' in fault) res.destroy();
          });
          if ('hangAfter' in fault) {
            hanging.push(res);
            onHung();
          }
        });
        return;
      }
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    hung,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/** Start the real `idqs` command. */
export function startCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, IDQS_DOWNLOAD_RETRY_BASE_MS: '20', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<CliResult>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return startCli(args, opts).done;
}

/** JSON lines of a --json run. */
export function events(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
