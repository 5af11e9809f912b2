// Caller SQL runs in worker processes (./sql-worker.ts), one query each at a
// time, admitted through a budget (bounded queue, queue deadline). Each
// worker has a share of the caller-SQL memory (./caller-sizing.ts): the
// engine's own limit, past which it spills, V8's heap limit, and above both a
// hard cap the kernel enforces (./worker-memory.ts), and a lower CPU priority,
// so a runaway query can neither take the server's memory nor its cores. A
// worker that ends a query holding more than its share, or near its cap, or
// that ran out of memory, is replaced before the next query, never reused. The
// run deadline is real: at the deadline (or when the client leaves) the
// worker is asked to interrupt, and killed and replaced if it does not stop
// within a second; the caller gets its 504 as soon as the worker is free,
// so a retry finds the slot. A worker that dies is
// replaced on next use; warm workers are reused. Workers start on first use,
// and one idle for IDQS_SQL_IDLE_S is stopped, so an idle server holds none.
//
// A worker never outlives its server: the kernel sends it SIGKILL when the
// server dies, however it dies (setpriv --pdeathsig; without setpriv, a thread
// of the worker watches for its parent's death, ./parent-watch.ts), and it
// kills itself when its IPC channel closes. Its temporary folder is removed
// when it exits; those left by a server that was killed are removed at the
// next start-up (./worker-temp.ts).

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { rmSync } from 'node:fs';
import { IdqsError, cancelled, msg, queryTimeout, resourceExhausted, setting, unavailable } from '../errors.ts';
import { SERVER_FAULT } from './sql-sandbox.ts';
import { Pool, type BudgetStats } from './budget.ts';
import { DeadlineReached, currentWork, deadline, outsideWork } from './work.ts';
import type { FromWorker, WorkerResult } from './sql-worker.ts';
import { CallerSqlResult } from './caller-result.ts';

export { CallerSqlResult };
import { makeWorkerTempDir } from './worker-temp.ts';
import { PRLIMIT, workerCommand } from './worker-command.ts';
import { overShare, planWorkerMemory, procMemory, runningCap, type ProcMemory, type WorkerMemoryPlan } from './worker-memory.ts';

/** What work given to a closed engine (or caught by its close) is answered. */
export const engineClosed = () => cancelled('The engine is closed: the service is shutting down.');

export interface SqlWorkersOptions {
  path: string;
  workers: number;
  /** Memory of caller SQL in bytes, split evenly among the workers. */
  memoryBytes: number;
  /** The setting as an operator reads it (2GB, or auto and what it came to), for messages. */
  memoryLimit: string;
  threads: number;
  tempDirSize: string;
  queue: number;
  queueTimeoutMs: number;
  timeoutMs: number;
  /** A worker idle this long is stopped (started again on next use); 0 keeps it. */
  idleMs: number;
}

/** Time a worker gets to stop after an interrupt before it is killed. */
const KILL_GRACE_MS = 1000;

interface Job {
  id: number;
  /** The request it serves, for operator log lines. */
  requestId: string | undefined;
  done: boolean;
  finish: (r: WorkerResult | null, e: Error | null) => void;
}

interface Worker {
  index: number;
  proc: ChildProcess | null;
  ready: Promise<void> | null;
  tempDir: string | null;
  job: Job | null;
  /** Set when we killed it (deadline), so its exit is not reported as a crash. */
  killed: boolean;
  /** Stopped because it was idle: not a crash, not a restart. */
  idleStop: boolean;
  idleTimer: NodeJS.Timeout | null;
  stderr: string;
  /** What it held once started, and the kernel cap then set (null where prlimit or /proc is missing). */
  started: ProcMemory | null;
  cap: number | null;
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}`;
}

export class SqlWorkers {
  readonly pool: Pool<Worker>;
  /** Operator events: a worker crashed, was killed, could not start. */
  readonly events = new EventEmitter();
  private nextId = 1;
  private closed = false;
  private restarts = 0;
  /** Workers replaced after a query because of what they held (not crashes). */
  private replaced = 0;
  private readonly shareBytes: number;
  /** Every worker process not yet seen to exit, with its exit. */
  private readonly live = new Map<ChildProcess, Promise<void>>();

  constructor(private readonly o: SqlWorkersOptions) {
    const workers: Worker[] = Array.from({ length: o.workers }, (_, index) => ({ index, proc: null, ready: null, tempDir: null, job: null, killed: false, idleStop: false, idleTimer: null, stderr: '', started: null, cap: null }));
    this.pool = new Pool(workers, {
      what: 'SQL queries',
      queue: o.queue,
      queueTimeoutMs: o.queueTimeoutMs,
      settings: { slots: 'IDQS_SQL_CONNECTIONS', queue: 'IDQS_SQL_QUEUE', queueTimeout: 'IDQS_QUEUE_TIMEOUT_MS' },
      maxHoldMs: o.timeoutMs + KILL_GRACE_MS + 5000,
    });
    this.shareBytes = Math.floor(o.memoryBytes / o.workers);
    this.plan = planWorkerMemory(this.shareBytes);
  }

  private readonly plan: WorkerMemoryPlan;

  /** Start `n` workers now so the first queries find them warm. */
  prewarm(n = 1): void {
    for (const w of this.pool.all().slice(0, n)) this.ensure(w).catch(() => undefined);
  }

  /** The worker's process, started when it has none (for the request `requestId`, named in operator logs). */
  private ensure(w: Worker, requestId?: string): Promise<void> {
    if (this.closed) return Promise.reject(engineClosed());
    if (w.ready) return w.ready;
    w.tempDir = makeWorkerTempDir(w.index);
    const { command, args } = workerCommand({ path: this.o.path, threads: this.o.threads, tempDirSize: this.o.tempDirSize, tempDir: w.tempDir, plan: this.plan });
    w.killed = false;
    w.idleStop = false;
    w.stderr = '';
    // Spawned outside the request that needs it first: its events belong to no request.
    const proc = outsideWork(() =>
      spawn(command, args, {
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        serialization: 'advanced',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: w.tempDir! },
      }),
    );
    w.proc = proc;
    this.live.set(proc, new Promise<void>((resolve) => proc.once('exit', () => resolve())).finally(() => this.live.delete(proc)));
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (d: string) => (w.stderr = (w.stderr + d).slice(-4000)));
    let started = false;
    w.started = null;
    w.cap = null;
    w.ready = new Promise<void>((resolve, reject) => {
      proc.on('message', (m: FromWorker) => {
        if (m.t !== 'ready') return this.onMessage(w, m);
        void this.capOnceStarted(w, proc).then(() => {
          started = true;
          resolve();
        });
      });
      proc.once('exit', (code, signal) => {
        // Exited before it was ready (a stop of a running worker, idle or not, is no failure to start).
        if (w.proc === proc && !started) {
          const cause = w.stderr.trim().split('\n').slice(-2).join(' | ');
          const fault = SERVER_FAULT.test(cause);
          if (!w.killed) {
            this.events.emit('operator', { level: 'error', msg: fault ? 'database read error: the database file is damaged or unreadable (a caller-SQL worker could not open it)' : 'caller-SQL worker could not start', cause, exit: code ?? signal, req_id: requestId });
          }
          reject(unavailable(fault ? 'The database could not be read; the operator has been told. Retry later.' : 'The SQL worker could not start; the operator log has the cause. Retry later.'));
        }
        this.onExit(w, proc, code, signal, started);
      });
      proc.once('error', (e) => reject(unavailable(`The SQL worker could not start: ${e.message}`)));
    });
    w.ready.catch(() => undefined);
    return w.ready;
  }

  private onMessage(w: Worker, m: FromWorker): void {
    const job = w.job;
    if (!job || m.t === 'ready' || m.id !== job.id) return;
    if (m.t === 'result') job.finish(m, null);
    else {
      if (m.kind === 'unavailable') {
        this.events.emit('operator', { level: 'error', msg: 'database read error: the database file is damaged or unreadable (caller-SQL worker)', cause: m.cause, req_id: job.requestId });
      }
      const parts =
        m.kind === 'resource_exhausted'
          ? [...m.parts, ...msg`\nCaller SQL may use ${this.shareText()} per query (its share of ${setting('IDQS_SQL_MEMORY_LIMIT')}=${this.o.memoryLimit}): aggregate, filter or add a LIMIT, and retry.`]
          : m.parts;
      job.finish(null, new IdqsError(m.kind, parts));
    }
  }

  /** Once a worker is ready: what it holds, and the kernel cap tightened to that plus its allowance. */
  private async capOnceStarted(w: Worker, proc: ChildProcess): Promise<void> {
    const pid = proc.pid;
    const held = pid ? procMemory(pid) : null;
    w.started = held;
    const prlimit = PRLIMIT;
    if (!held || !pid || !prlimit) return;
    const cap = runningCap(this.plan, held.data);
    await new Promise<void>((resolve) =>
      execFile(prlimit, ['--pid', String(pid), `--data=${cap}`], (e) => {
        if (e) this.events.emit('operator', { level: 'warn', msg: 'caller-SQL worker: its memory cap could not be tightened; it keeps its start-up cap', cause: e.message });
        else if (w.proc === proc) w.cap = cap;
        resolve();
      }),
    );
  }

  /**
   * The worker ready, or a 503 once the statement timeout passes first: a start that hangs (a process
   * that never says it is ready, nor exits) must not hold a request, and its slot, forever. A caller
   * that leaves stops waiting; the start goes on for the next query.
   */
  private async startWithin(w: Worker, signal?: AbortSignal): Promise<void> {
    const d = deadline(this.o.timeoutMs, 'IDQS_SQL_TIMEOUT_MS', signal);
    try {
      await Promise.race([
        this.ensure(w, currentWork()?.requestId),
        new Promise<never>((_, reject) => {
          if (d.signal.aborted) reject(d.signal.reason);
          d.signal.addEventListener('abort', () => reject(d.signal.reason), { once: true });
        }),
      ]);
    } catch (e) {
      if (!(e instanceof DeadlineReached)) throw e;
      const proc = w.proc;
      if (proc) this.detachAndKill(w, proc);
      this.events.emit('operator', { level: 'error', msg: 'caller-SQL worker did not start within the statement timeout: killed', pid: proc?.pid, req_id: currentWork()?.requestId });
      throw unavailable(msg`The SQL worker did not start within ${formatSeconds(this.o.timeoutMs)}s (${setting('IDQS_SQL_TIMEOUT_MS')}); the operator log says so. Retry.`);
    } finally {
      d.clear();
    }
  }

  /** After a query: a worker that ran out of memory, or now holds more than its share, is replaced at once. */
  private checkAfterQuery(w: Worker, e: Error | null): void {
    const proc = w.proc;
    if (!proc?.pid || this.closed) return;
    let why: string | null = null;
    if (e instanceof IdqsError && e.code === 'resource_exhausted') why = 'its query ran out of memory';
    else if (w.started) {
      const now = procMemory(proc.pid);
      if (now) why = overShare(now, w.started, this.shareBytes, w.cap);
    }
    if (why) this.replace(w, proc, why);
  }

  /** Kill `proc` without calling it a crash, and start the worker's next process now, warm for the next query. */
  private replace(w: Worker, proc: ChildProcess, why: string): void {
    this.replaced++;
    this.events.emit('operator', { level: 'info', msg: `caller-SQL worker replaced before its next query: ${why}` });
    this.detachAndKill(w, proc);
    this.warm(w);
  }

  /** Kill `proc`, detached from `w` first: its exit then touches neither the worker's next process nor its folder (removed once it is gone). */
  private detachAndKill(w: Worker, proc: ChildProcess): void {
    const tempDir = w.tempDir;
    w.proc = null;
    w.ready = null;
    w.tempDir = null;
    proc.once('exit', () => {
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    });
    proc.kill('SIGKILL');
  }

  /** Start `w`'s process outside any request; once ready it is stopped when idle like any other. */
  private warm(w: Worker): void {
    if (this.closed) return;
    this.ensure(w).then(
      () => {
        if (!w.job) this.stopWhenIdle(w);
      },
      () => undefined,
    );
  }

  private onExit(w: Worker, proc: ChildProcess, code: number | null, signal: NodeJS.Signals | null, started: boolean): void {
    if (w.proc !== proc) return;
    const killed = w.killed;
    w.proc = null;
    w.ready = null;
    if (w.tempDir) rmSync(w.tempDir, { recursive: true, force: true });
    w.tempDir = null;
    if (this.closed) {
      // A job it still held (one that raced close()) is answered now, not at its deadline.
      w.job?.finish(null, engineClosed());
      return;
    }
    if (w.idleStop) return;
    this.restarts++;
    const share = this.shareText();
    if (!killed) {
      this.events.emit('operator', {
        level: 'warn',
        msg: 'caller-SQL worker stopped; it is replaced on next use',
        req_id: w.job?.requestId,
        exit: code ?? signal,
        stderr: w.stderr.trim().split('\n').slice(-3).join(' | '),
      });
    }
    w.job?.finish(
      null,
      resourceExhausted(
        msg`The query was stopped: the SQL worker running it ended (${String(code ?? signal)}), most likely because it needed more than its memory share (${share} of ${setting('IDQS_SQL_MEMORY_LIMIT')}=${this.o.memoryLimit}). Aggregate, filter or add a LIMIT, and retry.`,
      ),
    );
    // A worker that had started (it did not fail to open the database) is replaced now, not on next use.
    if (started) this.warm(w);
  }

  /** Stop the worker once it has been idle for idleMs, so an idle server holds no worker's memory. */
  private stopWhenIdle(w: Worker): void {
    if (w.idleTimer) clearTimeout(w.idleTimer);
    w.idleTimer = null;
    if (this.o.idleMs <= 0 || this.closed || !w.proc) return;
    w.idleTimer = setTimeout(() => {
      w.idleTimer = null;
      if (w.job || !w.proc || this.closed) return;
      w.idleStop = true;
      w.killed = true;
      w.proc.kill('SIGKILL');
    }, this.o.idleMs);
    w.idleTimer.unref();
  }

  private shareText(): string {
    return `${Math.round(this.shareBytes / (1024 * 1024))} MB`;
  }

  /** Run one caller statement; resolves with its result, rejects with a core error. */
  async run(sql: string, maxRows: number, maxBytes: number, signal?: AbortSignal): Promise<CallerSqlResult> {
    const lease = await this.pool.acquire(signal);
    const w = lease.item;
    if (w.idleTimer) clearTimeout(w.idleTimer);
    w.idleTimer = null;
    try {
      await this.startWithin(w, signal);
      // Closed while its worker started: the worker is being killed, and a job given to it now would wait for its deadline.
      if (this.closed) throw engineClosed();
    } catch (e) {
      lease.release();
      throw e;
    }
    const d = deadline(this.o.timeoutMs, 'IDQS_SQL_TIMEOUT_MS', signal);
    const id = this.nextId++;
    return new Promise<CallerSqlResult>((resolve, reject) => {
      let answered = false;
      /** The deadline's answer, given once the worker is free (at most KILL_GRACE_MS later). */
      let late: IdqsError | null = null;
      let killTimer: NodeJS.Timeout | undefined;
      const job: Job = {
        id,
        requestId: currentWork()?.requestId,
        done: false,
        finish: (r, e) => {
          if (job.done) return;
          job.done = true;
          clearTimeout(killTimer);
          d.clear();
          d.signal.removeEventListener('abort', onAbort);
          w.job = null;
          // Before the slot is free: the next query must find the replacement, never this process.
          this.checkAfterQuery(w, e);
          if (w.proc) this.stopWhenIdle(w);
          lease.release();
          if (answered) return;
          answered = true;
          if (late) reject(late);
          else if (e) reject(e);
          else resolve(new CallerSqlResult(r!.columns, r!.types, r!.rows, r!.row_count, r!.truncated, r!.truncated_reason, maxRows));
        },
      };
      // At the deadline the worker is interrupted, and killed if it does not stop within the grace;
      // the caller is answered once its worker is free, so a retry finds the slot. A client that
      // left is owed nothing: its work is stopped the same way.
      const onAbort = () => {
        const reason: unknown = d.signal.reason;
        if (reason instanceof DeadlineReached) {
          this.pool.count('timed_out');
          late = queryTimeout(
            msg`Query exceeded the ${formatSeconds(this.o.timeoutMs)}s statement timeout (${setting('IDQS_SQL_TIMEOUT_MS')}) and was cancelled. Narrow the query (filters, LIMIT, aggregation) and retry.`,
          );
        } else {
          answered = true;
          this.pool.count('cancelled');
          reject(cancelled('The client went away; its query was stopped.'));
        }
        if (w.proc?.connected) w.proc.send({ t: 'cancel', id });
        killTimer = setTimeout(() => {
          if (job.done || !w.proc) return;
          w.killed = true;
          this.events.emit('operator', { level: 'warn', msg: 'caller-SQL worker did not stop after an interrupt; killed and replaced', req_id: job.requestId });
          w.proc.kill('SIGKILL');
        }, KILL_GRACE_MS);
      };
      w.job = job;
      d.signal.addEventListener('abort', onAbort, { once: true });
      if (d.signal.aborted) onAbort();
      else if (w.proc?.connected) w.proc.send({ t: 'run', id, sql, maxRows, maxBytes });
      else job.finish(null, unavailable('The SQL worker stopped before the query could start. Retry.'));
    });
  }

  stats(): BudgetStats & { restarts: number; replaced: number; running: number } {
    return { ...this.pool.stats(), restarts: this.restarts, replaced: this.replaced, running: this.pool.all().filter((w) => w.proc !== null).length };
  }

  /** What the running workers hold now (resident and address space, bytes), for metrics and tests. */
  memory(): { pid: number; rss: number; data: number; cap: number | null }[] {
    return this.pool.all().flatMap((w) => {
      const pid = w.proc?.pid;
      const now = pid ? procMemory(pid) : null;
      return pid && now ? [{ pid, ...now, cap: w.cap }] : [];
    });
  }

  /** Stop every worker (running queries are answered as cancelled); `stopped` says when they are gone. */
  close(): void {
    this.closed = true;
    this.pool.close();
    for (const w of this.pool.all()) w.job?.finish(null, engineClosed());
    this.abandon();
  }

  /**
   * Kill every worker process at once and remove its folder, touching no engine: safe when the
   * server itself is about to be killed (its fleet's primary is gone).
   */
  abandon(): void {
    for (const w of this.pool.all()) {
      if (w.idleTimer) clearTimeout(w.idleTimer);
      if (w.proc) {
        w.killed = true;
        w.proc.kill('SIGKILL');
      }
      if (w.tempDir) rmSync(w.tempDir, { recursive: true, force: true });
    }
  }

  /** Resolves true once every worker process has exited, false when some still run after `ms`. */
  async stopped(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([Promise.all(this.live.values()).then(() => true as const), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
