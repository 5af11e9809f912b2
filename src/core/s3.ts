// Anonymous S3 over plain HTTP(S) (shared by the downloader and the clinical fetch): ListObjectsV2 with paging and GET of
// objects to disk, with keep-alive connections, retries under the shared policy (core/retry.ts: 408, 429, 5xx,
// connection errors, Retry-After), and a size check of every body (plus, with
// checksum, the MD5 of single-part objects against their ETag). No credentials, no request signing: the stores are public.
//
// Plain node:http rather than an SDK: the two calls needed are a GET each,
// the SDK has no first-class unsigned mode (it needs a no-op signer), and its
// per-request middleware costs throughput on many small objects (see
// bench/download.ts and the README).

import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Agent, IncomingMessage } from 'node:http';
import { http, https } from './node-http.ts';
import { pipeline } from 'node:stream/promises';
import { retryable, retryableStatus, retryAfterMs, StopRetrying, transientNetworkError, withRetry } from './retry.ts';

export interface S3Object {
  bucket: string;
  key: string;
  size: number;
  /** ETag without quotes; a plain 32-hex ETag is the MD5 of a single-part object. */
  etag: string | null;
}

export class S3Error extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string,
    readonly retryable: boolean,
    /** The wait the store asked for (Retry-After), honoured on 429 and 503. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** The endpoint cannot be reached at all (connection or name errors, and no answer since): retrying each object is pointless. */
export class EndpointUnreachable extends Error {
  constructor(
    readonly endpoint: string,
    override readonly cause: Error,
    readonly failures: number,
  ) {
    super(`cannot reach ${endpoint}: ${cause.message} (${failures} connection attempts failed${failures > 1 ? ', none answered' : ''})`);
  }
}

/** Connection failures in a row, with no answer ever, after which the endpoint counts as unreachable. */
const UNREACHABLE_BEFORE_ANY_ANSWER = 3;

export interface S3Options {
  /** Base URL of the S3-compatible endpoint (path-style requests: <endpoint>/<bucket>/<key>). */
  endpoint: string;
  /** Most concurrent connections. */
  connections: number;
  /** Retries after the first attempt. */
  retries: number;
  /** First backoff delay; doubles per attempt (with jitter), capped at 10 s. */
  retryBaseMs: number;
  /** Check the MD5 of single-part objects against their ETag (costs CPU: about 600 MB/s per core). */
  checksum?: boolean;
  /** max-keys of a listing page (S3's own maximum is 1000). */
  listPageSize?: number;
  onRetry?: (what: string, attempt: number, err: Error, delayMs: number) => void;
}

/** A connection that sends nothing for this long is dropped (and retried). */
const SOCKET_TIMEOUT_MS = 60_000;

function decodeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e]!;
  });
}

function tag(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? decodeXml(m[1]!) : undefined;
}

/** The parts of a ListObjectsV2 result the downloader uses. */
export function parseListResult(xml: string): { objects: { key: string; size: number; etag: string | null }[]; truncated: boolean; next?: string } {
  if (!/<ListBucketResult[\s>]/.test(xml)) throw new S3Error('the endpoint did not answer with a ListBucketResult (is it an S3-compatible endpoint?)', 200, 'BadListing', false);
  const objects: { key: string; size: number; etag: string | null }[] = [];
  for (const m of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    const body = m[1]!;
    const key = tag(body, 'Key');
    const size = Number(tag(body, 'Size'));
    if (key === undefined || !Number.isFinite(size)) throw new S3Error('a listing entry has no Key or Size', 200, 'BadListing', false);
    const etag = tag(body, 'ETag');
    objects.push({ key, size, etag: etag ? etag.replaceAll('"', '') : null });
  }
  const truncated = tag(xml, 'IsTruncated') === 'true';
  return { objects, truncated, next: tag(xml, 'NextContinuationToken') };
}

function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

export class S3Client {
  readonly endpoint: string;
  private readonly agent: Agent;
  private readonly mod: typeof http | typeof https;
  /** Whether the endpoint ever answered (any HTTP status), and connection failures since its last answer. */
  private answered = false;
  private failuresInARow = 0;
  private unreachable: EndpointUnreachable | null = null;

  constructor(readonly opts: S3Options) {
    const url = new URL(opts.endpoint);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`endpoint ${opts.endpoint} must be an http:// or https:// URL`);
    this.endpoint = opts.endpoint.replace(/\/+$/, '');
    this.mod = url.protocol === 'https:' ? https : http;
    const agentOpts = { keepAlive: true, maxSockets: Math.max(1, opts.connections), maxFreeSockets: Math.max(1, opts.connections), scheduling: 'lifo' as const };
    this.agent = url.protocol === 'https:' ? new https.Agent(agentOpts) : new http.Agent(agentOpts);
  }

  close(): void {
    this.agent.destroy();
  }

  objectUrl(bucket: string, key: string): string {
    return `${this.endpoint}/${encodeURIComponent(bucket)}/${encodeKey(key)}`;
  }

  private get(url: string, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.mod.get(url, { agent: this.agent, signal, headers: { 'user-agent': 'idqs-download' } }, resolve);
      req.setTimeout(SOCKET_TIMEOUT_MS, () => req.destroy(Object.assign(new Error(`no data for ${SOCKET_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
    });
  }

  /** An S3Error from a non-2xx response (reads its XML error body). */
  private async failure(res: IncomingMessage, what: string): Promise<S3Error> {
    let body = '';
    try {
      for await (const c of res) if (body.length < 4096) body += String(c);
    } catch {
      // the error body is informative only
    }
    const status = res.statusCode ?? 0;
    const code = tag(body, 'Code') ?? `HTTP${status}`;
    const message = tag(body, 'Message');
    return new S3Error(`${what}: HTTP ${status} ${code}${message ? ` (${message})` : ''}`, status, code, retryableStatus(status) || code === 'SlowDown', retryAfterMs(res.headers['retry-after']));
  }

  /** Run `fn` under the shared retry policy (core/retry.ts), counting connection failures toward "unreachable". */
  private retry<T>(what: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const attempt = async () => {
      if (this.unreachable) throw new StopRetrying(this.unreachable);
      try {
        const r = await fn();
        this.answered = true;
        this.failuresInARow = 0;
        return r;
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        if (err instanceof S3Error) {
          this.answered = true;
          this.failuresInARow = 0;
        } else if (!signal.aborted && transientNetworkError(err) && (err as NodeJS.ErrnoException).code) {
          // A store that never answered is unreachable after the first few failures; one that did answer
          // is only after a sustained run of them (a blip on many parallel connections is not enough).
          this.failuresInARow++;
          const limit = this.answered ? 4 * Math.max(1, this.opts.connections) : UNREACHABLE_BEFORE_ANY_ANSWER;
          if (this.failuresInARow >= limit) throw new StopRetrying((this.unreachable ??= new EndpointUnreachable(this.endpoint, err, this.failuresInARow)));
        }
        throw err;
      }
    };
    return withRetry(attempt, {
      retries: this.opts.retries,
      baseMs: this.opts.retryBaseMs,
      signal,
      shouldRetry: (err) => (err instanceof S3Error ? err.retryable : retryable(err)),
      onRetry: (err, n, delay) => this.opts.onRetry?.(what, n, err, delay),
    });
  }

  /** Every object under `prefix` (ListObjectsV2, following continuation tokens). */
  async list(bucket: string, prefix: string, signal: AbortSignal): Promise<S3Object[]> {
    const out: S3Object[] = [];
    let token: string | undefined;
    do {
      const q = new URLSearchParams({ 'list-type': '2', prefix, 'max-keys': String(this.opts.listPageSize ?? 1000) });
      if (token) q.set('continuation-token', token);
      const url = `${this.endpoint}/${encodeURIComponent(bucket)}?${q}`;
      const page = await this.retry(`list s3://${bucket}/${prefix}`, signal, async () => {
        const res = await this.get(url, signal);
        if (res.statusCode !== 200) throw await this.failure(res, `list s3://${bucket}/${prefix}`);
        let xml = '';
        res.setEncoding('utf8');
        for await (const c of res) xml += c;
        return parseListResult(xml);
      });
      for (const o of page.objects) out.push({ bucket, ...o });
      token = page.truncated ? page.next : undefined;
      if (page.truncated && !token) throw new S3Error(`list s3://${bucket}/${prefix}: truncated listing without a continuation token`, 200, 'BadListing', false);
    } while (token);
    return out;
  }

  /**
   * Download one object to `dest`: the body goes to `tmp` and is renamed to
   * `dest` only when its size equals the listing's (and its MD5 the ETag's, for
   * single-part objects). A failed or aborted attempt removes `tmp`.
   */
  async download(obj: S3Object, tmp: string, dest: string, signal: AbortSignal, onBytes: (n: number) => void): Promise<void> {
    const url = this.objectUrl(obj.bucket, obj.key);
    const md5 = this.opts.checksum && obj.etag && /^[0-9a-f]{32}$/i.test(obj.etag) ? obj.etag.toLowerCase() : null;
    await this.retry(`get s3://${obj.bucket}/${obj.key}`, signal, async () => {
      let received = 0;
      try {
        const res = await this.get(url, signal);
        if (res.statusCode !== 200) throw await this.failure(res, `get s3://${obj.bucket}/${obj.key}`);
        const hash = md5 ? createHash('md5') : null;
        // Counting (and hashing) beside the pipe costs less than a transform stage per chunk.
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          hash?.update(chunk);
          onBytes(chunk.length);
        });
        await pipeline(res, createWriteStream(tmp, { highWaterMark: 1 << 20 }), { signal });
        if (received !== obj.size) {
          throw new S3Error(`get s3://${obj.bucket}/${obj.key}: received ${received} bytes, the listing says ${obj.size}`, 200, 'SizeMismatch', true);
        }
        if (hash && md5 && hash.digest('hex') !== md5) {
          throw new S3Error(`get s3://${obj.bucket}/${obj.key}: MD5 differs from the ETag`, 200, 'BadDigest', true);
        }
        await rename(tmp, dest);
      } catch (e) {
        // Bytes of a failed attempt do not count as progress.
        if (received > 0) onBytes(-received);
        await rm(tmp, { force: true });
        throw e;
      }
    });
  }
}
