// Download one file over HTTP(S) to disk: resumable (a .part file continued
// with a Range request, guarded by If-Range), retried under the shared policy
// (core/retry.ts: connection errors, 408, 429, 5xx, Retry-After), redirects followed, sha256 computed while
// the bytes arrive. File bodies are read by raw-get.ts into one reused 1 MB
// buffer and written as they come: a 80 MB wheel costs a few MB of memory.

import { createHash, type Hash } from 'node:crypto';
import { closeSync, createReadStream, existsSync, openSync, readdirSync, writeSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { http, https } from '../node-http.ts';
import { basename, dirname, join } from 'node:path';
import { retryable as retryableByDefault, retryableStatus, retryAfterMs, StopRetrying as AbortError, withRetry } from '../retry.ts';
import { pidAlive } from '../cache-lock.ts';
import { rawGet, type BodyResponse } from './raw-get.ts';

export type FetchErrorKind = 'not_found' | 'http' | 'network' | 'checksum' | 'size';

/** A failed download, with what went wrong in words a user can act on. */
export class FetchError extends Error {
  constructor(
    message: string,
    readonly kind: FetchErrorKind,
    readonly url: string,
    readonly status: number | null = null,
    /** The wait the server asked for (Retry-After), honoured on 429 and 503. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

export interface GetOptions {
  /** Retries after the first attempt. */
  retries?: number;
  /** First backoff delay, doubling per attempt. */
  retryBaseMs?: number;
  signal?: AbortSignal;
  /** Progress through the file, as deltas (a resumed prefix is reported once; a restart reports a negative delta). */
  onBytes?: (delta: number) => void;
  /** The size of the file when the server says it (once per attempt). */
  onLength?: (total: number | null) => void;
  onRetry?: (attempt: number, err: Error) => void;
  headers?: Record<string, string>;
}

const SOCKET_TIMEOUT_MS = 60_000;
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 16 }), https: new https.Agent({ keepAlive: true, maxSockets: 16 }) };

/** One GET, following up to five redirects; resolves with the final response (body unread). */
function get(url: string, headers: Record<string, string>, signal: AbortSignal | undefined, hops = 0): Promise<{ res: IncomingMessage; url: string }> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new AbortError(new FetchError(`${url} is not a valid URL`, 'http', url)));
      return;
    }
    const mod = u.protocol === 'https:' ? https : u.protocol === 'http:' ? http : null;
    if (!mod) {
      reject(new AbortError(new FetchError(`${url}: only http:// and https:// URLs can be fetched`, 'http', url)));
      return;
    }
    const req = mod.get(u, { agent: u.protocol === 'https:' ? agents.https : agents.http, headers: { 'user-agent': 'idqs-fetch', ...headers }, signal }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (hops >= 5) reject(new AbortError(new FetchError(`${url}: too many redirects`, 'http', url, status)));
        else get(new URL(res.headers.location, u).href, headers, signal, hops + 1).then(resolve, reject);
        return;
      }
      resolve({ res, url });
    });
    req.setTimeout(SOCKET_TIMEOUT_MS, () => req.destroy(Object.assign(new Error(`no data for ${SOCKET_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
}

/** An error for a non-2xx answer: 404 and other 4xx are final, 408, 429 and 5xx are retried (after Retry-After when given). */
function statusError(url: string, status: number, retryAfter?: string | string[]): Error {
  const err = new FetchError(`${url}: HTTP ${status}${status === 404 ? ' (not found)' : ''}`, status === 404 ? 'not_found' : 'http', url, status, retryAfterMs(retryAfter));
  return retryableStatus(status) ? err : new AbortError(err);
}

function isRetryable(e: Error): boolean {
  return e instanceof FetchError ? e.kind === 'network' || e.kind === 'size' || (e.status !== null && retryableStatus(e.status)) : retryableByDefault(e);
}

/** Nothing listens there (or no route to it): after this many attempts, no more (a busy server answers, a down one does not). */
const UNANSWERED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND']);
const UNANSWERED_ATTEMPTS = 3;

function withRetries<T>(what: string, opts: GetOptions, fn: () => Promise<T>): Promise<T> {
  let answered = false;
  const attempt = async () => {
    try {
      return await fn();
    } catch (e) {
      if (!UNANSWERED.has((e as NodeJS.ErrnoException).code ?? '')) answered = true;
      throw e;
    }
  };
  const retryable = (error: Error, attemptNumber: number) =>
    isRetryable(error) && (answered || attemptNumber < UNANSWERED_ATTEMPTS || !UNANSWERED.has((error as NodeJS.ErrnoException).code ?? ''));
  return withRetry(attempt, {
    retries: opts.retries ?? 5,
    baseMs: opts.retryBaseMs ?? 500,
    signal: opts.signal,
    shouldRetry: retryable,
    onRetry: (error, attemptNumber) => opts.onRetry?.(attemptNumber, new Error(`${what}: ${error.message}`)),
  });
}

/** A small text resource (an index page, a .sha256 sidecar, a listing); null on 404. */
export async function getText(url: string, opts: GetOptions = {}): Promise<{ text: string; contentType: string } | null> {
  try {
    return await withRetries(url, opts, async () => {
      const { res } = await get(url, opts.headers ?? {}, opts.signal);
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        res.resume();
        throw statusError(url, status, res.headers['retry-after']);
      }
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      return { text: Buffer.concat(chunks).toString('utf8'), contentType: String(res.headers['content-type'] ?? '') };
    });
  } catch (e) {
    if (e instanceof FetchError && e.kind === 'not_found') return null;
    throw e;
  }
}

/** Whether a URL exists (a one-byte GET; 404 = no), for telling a missing release from a missing file. */
export async function exists(url: string, opts: GetOptions = {}): Promise<boolean> {
  const { res } = await get(url, { ...opts.headers, range: 'bytes=0-0' }, opts.signal);
  res.resume();
  return res.statusCode !== 404;
}

/** A response whose body is read piece by piece (see raw-get.ts: pieces may be views into a reused buffer). */
type Body = Pick<BodyResponse, 'status' | 'headers' | 'read' | 'discard'>;

/** node:http's response as a Body (the fallback for chunked bodies). */
function incomingBody(res: IncomingMessage): Body {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return {
    status: res.statusCode ?? 0,
    headers,
    discard: () => res.destroy(),
    read: (onChunk) =>
      new Promise<void>((resolve, reject) => {
        res.on('data', (c: Buffer) => {
          try {
            onChunk(c);
          } catch (e) {
            res.destroy(e as Error);
          }
        });
        res.once('end', resolve);
        res.once('error', reject);
        res.once('close', () => {
          if (!res.complete) reject(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
        });
      }),
  };
}

/**
 * GET a file's body, following up to five redirects: through the fast reader
 * (raw-get.ts), or node:http when the body is chunked.
 */
async function openBody(url: string, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<Body> {
  let current = url;
  for (let hops = 0; ; hops++) {
    let u: URL;
    try {
      u = new URL(current);
    } catch {
      throw new AbortError(new FetchError(`${current} is not a valid URL`, 'http', current));
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AbortError(new FetchError(`${current}: only http:// and https:// URLs can be fetched`, 'http', current));
    const res = await rawGet(u, { 'user-agent': 'idqs-fetch', ...headers }, { signal, timeoutMs: SOCKET_TIMEOUT_MS });
    if (res.status >= 300 && res.status < 400 && res.headers.location) {
      res.discard();
      if (hops >= 5) throw new AbortError(new FetchError(`${url}: too many redirects`, 'http', url, res.status));
      current = new URL(res.headers.location, u).href;
      continue;
    }
    if (!res.unsupportedFraming) return res;
    res.discard();
    return incomingBody((await get(current, headers, signal)).res);
  }
}

/** Append a body to `path`, calling `onChunk` with each piece before it is written. */
async function writeBody(body: Body, path: string, append: boolean, onChunk: (c: Buffer) => void): Promise<void> {
  const fd = openSync(path, append ? 'a' : 'w');
  try {
    await body.read((c) => {
      onChunk(c);
      for (let off = 0; off < c.length; ) off += writeSync(fd, c, off, c.length - off);
    });
  } finally {
    closeSync(fd);
  }
}

interface PartMeta {
  url: string;
  validator: string | null;
}

async function hashPrefix(path: string): Promise<Hash> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path, { highWaterMark: 1 << 20 })) h.update(c as Buffer);
  return h;
}

export interface Downloaded {
  path: string;
  bytes: number;
  sha256: string;
  /** Bytes that were already on disk from an interrupted run. */
  resumed: number;
}

/**
 * The part file of an earlier run that died (its pid is gone) to resume:
 * renamed to ours, so no two processes ever write one file. Parts of live
 * processes are left alone; other dead ones are removed.
 */
async function adoptDeadPart(dest: string, part: string, url: string): Promise<void> {
  const dir = dirname(dest);
  if (!existsSync(dir) || existsSync(part)) return;
  const prefix = `${basename(dest)}.part`;
  let best: { path: string; size: number } | null = null;
  for (const name of readdirSync(dir)) {
    // <dest>.part-<pid>, or <dest>.part of releases before per-process names.
    const m = name.startsWith(prefix) ? /^(?:-(\d+))?$/.exec(name.slice(prefix.length)) : null;
    if (!m) continue;
    if (m[1] && (Number(m[1]) === process.pid || pidAlive(Number(m[1])))) continue;
    const path = join(dir, name);
    const meta = existsSync(`${path}.json`) ? (JSON.parse(await readFile(`${path}.json`, 'utf8').catch(() => 'null')) as PartMeta | null) : null;
    const size = (await stat(path)).size;
    if (meta?.url === url && (!best || size > best.size)) {
      if (best) await rm(best.path, { force: true }).then(() => rm(`${best!.path}.json`, { force: true }));
      best = { path, size };
    } else {
      await rm(path, { force: true });
      await rm(`${path}.json`, { force: true });
    }
  }
  if (!best) return;
  await rename(`${best.path}.json`, `${part}.json`);
  await rename(best.path, part);
}

/**
 * Download `url` to `dest`. Bytes go to `<dest>.part-<pid>` (its URL and
 * validator in `<part>.json`), which a later attempt continues with a Range
 * request, and which a later run adopts when this process died; the file is
 * renamed to `dest` once complete. Callers hold the cache lock of `dest`'s
 * folder (cache-lock.ts). 404 throws a FetchError of kind not_found at once.
 */
export async function downloadFile(url: string, dest: string, opts: GetOptions = {}): Promise<Downloaded> {
  const part = `${dest}.part-${process.pid}`;
  const metaFile = `${part}.json`;
  await adoptDeadPart(dest, part, url);
  let resumed = -1;
  // Position reported through onBytes, so a resumed prefix counts once and a restart from 0 rewinds it.
  let reported = 0;
  const result = await withRetries(url, opts, async () => {
    let meta: PartMeta | null = existsSync(metaFile) ? (JSON.parse(await readFile(metaFile, 'utf8')) as PartMeta) : null;
    let offset = existsSync(part) && meta?.url === url ? (await stat(part)).size : 0;
    const headers: Record<string, string> = { ...opts.headers, 'accept-encoding': 'identity' };
    if (offset > 0) {
      headers.range = `bytes=${offset}-`;
      if (meta?.validator) headers['if-range'] = meta.validator;
    }
    const res = await openBody(url, headers, opts.signal);
    const status = res.status;
    if (status === 416 && offset > 0) {
      // The part is not a prefix of what the server has now: start over.
      res.discard();
      await rm(part, { force: true });
      throw new FetchError(`${url}: the server refused to resume; downloading from the start`, 'size', url, status);
    }
    if (status !== 200 && status !== 206) {
      res.discard();
      throw statusError(url, status, res.headers['retry-after']);
    }
    if (status === 206) {
      const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
      if (!m || Number(m[1]) !== offset) {
        res.discard();
        await rm(part, { force: true });
        throw new FetchError(`${url}: the server resumed at the wrong offset; downloading from the start`, 'size', url, status);
      }
    } else offset = 0; // 200: the whole file (a server without ranges, or the file changed: If-Range)
    if (resumed < 0) resumed = offset;
    const validator = res.headers.etag ?? res.headers['last-modified'] ?? null;
    if (offset === 0 || meta?.validator !== validator) {
      meta = { url, validator };
      await writeFile(metaFile, JSON.stringify(meta));
    }
    const length = Number(res.headers['content-length']);
    const total = Number.isFinite(length) ? offset + length : null;
    opts.onLength?.(total);
    if (offset !== reported) opts.onBytes?.(offset - reported);
    reported = offset;
    const hash = offset > 0 ? await hashPrefix(part) : createHash('sha256');
    let got = 0;
    try {
      await writeBody(res, part, offset > 0, (chunk) => {
        hash.update(chunk);
        got += chunk.length;
        reported += chunk.length;
        opts.onBytes?.(chunk.length);
      });
    } catch (e) {
      const err = e as Error;
      if (opts.signal?.aborted) throw new AbortError(err);
      // A local write failure (disk full, permissions) is not the network's: say so and stop.
      if ((err as NodeJS.ErrnoException).syscall === 'write') throw new AbortError(new Error(`writing ${part}: ${err.message}`));
      throw new FetchError(`${url}: connection lost after ${offset + got} bytes (${err.message}); resuming`, 'network', url);
    }
    if (total !== null && offset + got !== total) {
      throw new FetchError(`${url}: got ${offset + got} of ${total} bytes; resuming`, 'size', url);
    }
    return { bytes: offset + got, sha256: hash.digest('hex') };
  });
  await rename(part, dest);
  await rm(metaFile, { force: true });
  return { path: dest, bytes: result.bytes, sha256: result.sha256, resumed: Math.max(0, resumed) };
}
