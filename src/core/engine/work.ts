// The work a request started, carried from the adapter that received it down
// to the engine without threading it through every service: its cancellation
// signal (aborted when the client goes away) and its request id (for log
// lines). Also the one time-limit helper every budget uses: a run deadline
// whose abort reason is a sentinel, so a timeout is told apart from a client
// that left without reading any message text.

import { AsyncLocalStorage } from 'node:async_hooks';

export interface Work {
  /** Aborted when whoever asked is gone; read lazily (adapters create it on first use). */
  readonly signal?: AbortSignal | undefined;
  readonly requestId?: string | undefined;
  /** Run deadline of this work's queries, when not the curated default (exports run longer). */
  readonly timeout?: { ms: number; setting: string } | undefined;
}

const scope = new AsyncLocalStorage<Work>();

/** Run `fn` (and everything it awaits) as the work of one request. */
export function runWork<T>(work: Work, fn: () => T): T {
  return scope.run(work, fn);
}

export function currentWork(): Work | undefined {
  return scope.getStore();
}

/**
 * Run shared work (a result memoized for every caller) detached from the
 * caller that happens to start it: its client leaving must not fail the others.
 */
export function detached<T>(fn: () => T): T {
  const w = scope.getStore();
  return w ? scope.run({ requestId: w.requestId, timeout: w.timeout }, fn) : fn();
}

/** Run `fn` outside any request: resources it creates (a worker process) belong to none. */
export function outsideWork<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** Abort reason of a run deadline: names the setting that sets it. */
export class DeadlineReached extends Error {
  constructor(
    readonly ms: number,
    readonly setting: string,
  ) {
    super(`deadline of ${ms} ms (${setting}) reached`);
    this.name = 'DeadlineReached';
  }
}

/** Abort reason of work nobody waits for any more (a client that left, a parked page nobody collected, shutdown). */
export class WorkCancelled extends Error {
  constructor(readonly why: string) {
    super(`cancelled: ${why}`);
    this.name = 'WorkCancelled';
  }
}

export interface Deadline {
  /** Aborted at the deadline (reason DeadlineReached) or when the parent is (its reason). */
  signal: AbortSignal;
  /** Stop the timer and stop following the parent. */
  clear(): void;
}

/** A signal that aborts after `ms` with a DeadlineReached naming `setting`, or when `parent` aborts. */
export function deadline(ms: number, setting: string, parent?: AbortSignal): Deadline {
  const ac = new AbortController();
  const onParent = () => ac.abort(parent!.reason ?? new WorkCancelled('the caller went away'));
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  const timer = setTimeout(() => ac.abort(new DeadlineReached(ms, setting)), ms);
  timer.unref();
  return {
    signal: ac.signal,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}

/** The signal of the current work, if any. */
export function workSignal(): AbortSignal | undefined {
  return scope.getStore()?.signal;
}

/**
 * `p` for the current work: rejects with the work's abort reason if its client
 * leaves first, while `p` itself (shared with others) goes on.
 */
export function forCaller<T>(p: Promise<T>): Promise<T> {
  const signal = scope.getStore()?.signal;
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
