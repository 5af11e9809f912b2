// The one retry policy of every HTTP(S) transfer (the release fetch, the clinical fetch, the downloader's S3 client):
// which failures are worth another attempt (network resets and timeouts, HTTP 408, 429 and 5xx), how long to wait
// (exponential backoff with jitter, or the server's own Retry-After on 429 and 503, in seconds or as an HTTP date,
// capped), and how many attempts at most. Built on p-retry; engine-free, so the downloader may use it.

import pRetry, { AbortError } from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';

/** Thrown by an attempt to stop retrying at once: the wrapped error is what the caller gets. */
export { AbortError as StopRetrying };

/** Socket and name-resolution failures that a later attempt may not meet. */
const TRANSIENT_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH',
  'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE',
]);
const TRANSIENT_MESSAGE = /socket hang up|premature close|aborted|terminated/i;

/** The longest wait a Retry-After header may ask for; a longer one is cut to this. */
export const MAX_RETRY_AFTER_MS = 30_000;
/** The longest exponential backoff between two attempts. */
const MAX_BACKOFF_MS = 10_000;

/** Whether an HTTP status is worth another attempt: a timeout (408), too many requests (429) or a server error (5xx). */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Whether an error that carries no HTTP status is a network failure worth another attempt. */
export function transientNetworkError(e: Error): boolean {
  return TRANSIENT_CODES.has((e as NodeJS.ErrnoException).code ?? '') || TRANSIENT_MESSAGE.test(e.message);
}

/**
 * The wait a Retry-After header asks for, in ms (delta-seconds or an HTTP date, at most `capMs`);
 * null when absent or unreadable.
 */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now(), capMs = MAX_RETRY_AFTER_MS): number | null {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!v) return null;
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now;
  if (!Number.isFinite(ms)) return null;
  return Math.min(capMs, Math.max(0, ms));
}

/** What a failed HTTP answer may carry for the retry policy: its status and the wait its server asked for. */
export interface HttpFailure {
  status?: number | null;
  retryAfterMs?: number | null;
}

export interface RetryOptions {
  /** Retries after the first attempt. */
  retries: number;
  /** First backoff delay; doubles per attempt (with jitter), at most 10 s. */
  baseMs: number;
  signal?: AbortSignal;
  /** Whether this failure is worth another attempt (default: `retryable`). */
  shouldRetry?: (err: Error, attempt: number) => boolean;
  /** Before each wait: the failed attempt (1-based), its error and the wait. */
  onRetry?: (err: Error, attempt: number, delayMs: number) => void;
}

/** The default rule: an HTTP failure by its status, any other error when it is a transient network failure. */
export function retryable(err: Error): boolean {
  const status = (err as HttpFailure).status;
  return typeof status === 'number' && status > 0 ? retryableStatus(status) : transientNetworkError(err);
}

/** The wait before the next attempt: the server's Retry-After on 429 and 503, else the backoff of this attempt. */
export function retryDelayMs(err: Error, attempt: number, baseMs: number): number {
  const { status, retryAfterMs: asked } = err as HttpFailure;
  if ((status === 429 || status === 503) && typeof asked === 'number') return asked;
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** (attempt - 1)) * (0.5 + Math.random());
}

/**
 * Run `fn` until it succeeds, a failure is not worth retrying, or `retries` retries are spent (the last error is
 * thrown). An abort of `signal` stops at once with its reason.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  const worth = (err: Error, attempt: number) => !o.signal?.aborted && (o.shouldRetry ?? retryable)(err, attempt);
  try {
    return await pRetry(fn, {
      retries: o.retries,
      // The wait is ours (it may be the server's Retry-After): p-retry's own is nil.
      minTimeout: 0,
      maxTimeout: 0,
      signal: o.signal,
      shouldRetry: ({ error, attemptNumber }) => worth(error, attemptNumber),
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft <= 0 || !worth(error, attemptNumber)) return;
        const delay = retryDelayMs(error, attemptNumber, o.baseMs);
        o.onRetry?.(error, attemptNumber, delay);
        await sleep(delay, undefined, { signal: o.signal });
      },
    });
  } catch (e) {
    if (o.signal?.aborted && o.signal.reason instanceof Error) throw o.signal.reason;
    throw e;
  }
}
