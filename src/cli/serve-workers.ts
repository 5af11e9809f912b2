// `idqs serve --workers N`: one listening port, N worker processes (node:cluster)
// each serving the same read-only database file with its own engine. The
// primary holds no engine: it starts the workers, replaces one that dies, and
// on SIGTERM/SIGINT tells every worker to drain (finish in-flight requests
// within IDQS_SHUTDOWN_S), then exits. Workers are `idqs serve --db FILE`
// itself, run as cluster workers (see `workerSignals`).

import cluster, { type Worker } from 'node:cluster';
import { sweepStaleWorkerTempDirs } from '../core/engine/worker-temp.ts';

export interface FleetOptions {
  /** Resolved database file (a real path: a later swap of a link does not reach running workers). */
  db: string;
  port: number;
  host: string;
  workers: number;
  /** Drain deadline of each worker (IDQS_SHUTDOWN_S). */
  shutdownS: number;
  /** Operator messages (stderr). */
  say?: (line: string) => void;
}

/** Exit status of a stop whose drain was not clean: requests were cut at the deadline (or a worker killed). */
export const EXIT_CUT = 1;

/** Say which caller-SQL folders of dead servers were removed. */
export function reportSwept(dirs: string[], say: (line: string) => void = (line) => void process.stderr.write(`${line}\n`)): void {
  if (dirs.length > 0) say(`removed ${dirs.length} temporary folder(s) left by caller-SQL workers of servers no longer running`);
}

/** The message the primary sends a worker to make it drain and exit. */
export const DRAIN_MESSAGE = 'idqs:drain';
/** The message a worker that cannot start sends its primary, with the reason. */
const START_FAILED = 'idqs:start-failed';

/** In a fleet worker that cannot start: tell the primary why, then `done`. */
export function reportStartFailure(reason: string, done: () => void): void {
  process.send!({ t: START_FAILED, reason }, undefined, undefined, () => done());
}

/** A worker that dies before serving this many times in a row means it cannot start: give up. */
const MAX_FAILED_STARTS = 3;

/** Start the fleet; resolves never (the process exits when the fleet stops). */
export function runFleet(o: FleetOptions): void {
  const say = o.say ?? ((line: string) => void process.stderr.write(`${line}\n`));
  // Workers run the same entry point, serving the resolved file on the shared port.
  cluster.setupPrimary({ args: ['serve', '--db', o.db, '--port', String(o.port), '--host', o.host, '--workers', '1'] });
  const listening = new Set<Worker>();
  let failedStarts = 0;
  let announced = false;
  let stopping: 'drain' | 'give-up' | null = null;
  /** Whether every worker that stopped during the drain stopped cleanly. */
  let drainedClean = true;

  const start = (slot: number) => {
    // Each worker sizes its caller SQL as one of the fleet (IDQS_SQL_MEMORY_LIMIT=auto divides by it).
    const w = cluster.fork({ IDQS_FLEET_SIZE: String(o.workers) });
    slots.set(w, slot);
  };
  const slots = new Map<Worker, number>();

  /** Why the last worker that failed to start failed, in its own words. */
  let lastFailure = '';
  cluster.on('message', (_w, m: { t?: string; reason?: string }) => {
    if (m?.t === START_FAILED && typeof m.reason === 'string') lastFailure = m.reason;
  });

  cluster.on('listening', (w, address) => {
    listening.add(w);
    failedStarts = 0;
    say(`worker ${slots.get(w)} (pid ${w.process.pid}) serving`);
    const host = address.address && address.address.includes(':') ? `[${address.address}]` : (address.address ?? o.host);
    where = `http://${host}:${address.port}`;
    announce();
  });
  // Every worker sends the same banner: it is printed once, with the fleet's line, when all serve.
  let banner: string | null = null;
  let where = '';
  const announce = () => {
    if (announced || banner === null || listening.size < o.workers) return;
    announced = true;
    say(banner);
    say(`IDQS fleet of ${o.workers} workers at ${where} (primary pid ${process.pid}; SIGTERM drains every worker)`);
  };
  cluster.on('message', (_w, m: unknown) => {
    if (m && typeof m === 'object' && (m as { t?: unknown }).t === 'banner') {
      banner ??= String((m as { text?: unknown }).text);
      announce();
    }
  });

  cluster.on('exit', (w, code, signal) => {
    const slot = slots.get(w) ?? 0;
    slots.delete(w);
    const served = listening.delete(w);
    // Its caller-SQL workers died with it (the kernel's parent-death signal); their folders go now.
    reportSwept(sweepStaleWorkerTempDirs(), say);
    if (stopping) {
      if (code !== 0) drainedClean = false;
      if (slots.size === 0) finish();
      return;
    }
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    const why = lastFailure ? `: ${lastFailure}` : '';
    if (!served && ++failedStarts >= MAX_FAILED_STARTS) {
      say(`worker ${slot} (pid ${w.process.pid}) could not start (${how}), ${failedStarts} times in a row: giving up${why}`);
      stop('give-up', undefined, lastFailure);
      return;
    }
    say(served ? `worker ${slot} (pid ${w.process.pid}) ${how}; starting a replacement` : `worker ${slot} (pid ${w.process.pid}) could not start (${how})${why}; trying again`);
    // A short pause after failed starts, so a broken start does not spin. Not unref'd: with no
    // worker alive, this timer is what keeps the primary running until the replacement starts.
    setTimeout(() => start(slot), served ? 0 : 500 * failedStarts);
  });

  let deadline: NodeJS.Timeout | undefined;
  const finish = () => {
    clearTimeout(deadline);
    if (stopping === 'give-up') {
      say(`fleet stopped: its workers cannot start${failure ? `: ${failure}` : ' (see the errors above)'}`);
      process.exit(1);
    }
    say(drainedClean ? 'fleet stopped' : `fleet stopped: requests still running at the deadline were cut (exit ${EXIT_CUT})`);
    process.exit(drainedClean ? 0 : EXIT_CUT);
  };

  let failure = '';
  const stop = (why: 'drain' | 'give-up', signal?: string, reason = '') => {
    if (stopping) return;
    stopping = why;
    failure = reason;
    // A second signal stops everything at once.
    process.once('SIGINT', () => hardStop(130));
    process.once('SIGTERM', () => hardStop(143));
    if (signal) say(`${signal}: draining ${slots.size} workers (at most ${o.shutdownS} s)`);
    for (const w of slots.keys()) if (w.isConnected()) w.send(DRAIN_MESSAGE);
    // Each worker cuts its own requests at the deadline; this one catches a worker that cannot.
    deadline = setTimeout(() => {
      drainedClean = false;
      for (const w of slots.keys()) w.process.kill('SIGKILL');
    }, o.shutdownS * 1000 + 3000);
    if (slots.size === 0) finish();
  };
  const hardStop = (code: number) => {
    for (const w of slots.keys()) w.process.kill('SIGKILL');
    process.exit(code);
  };

  process.once('SIGINT', () => stop('drain', 'SIGINT'));
  process.once('SIGTERM', () => stop('drain', 'SIGTERM'));
  for (let i = 1; i <= o.workers; i++) start(i);
}

/**
 * In a fleet worker: drain when the primary says so. A terminal's Ctrl-C
 * reaches every process of the group; the primary decides, so a worker ignores
 * SIGINT (its own SIGTERM still drains it, and the primary replaces it).
 * A worker never outlives its primary: when the IPC channel closes it kills
 * its caller-SQL workers (`abandon`) and itself at once (node:cluster's own
 * exit would wait for running queries); the watch thread started with the
 * worker (`dieWithParent`) kills it even when its event loop is busy.
 */
export function workerSignals(drainNow: (why: string) => void, abandon: () => void): void {
  process.prependOnceListener('disconnect', () => {
    abandon();
    process.kill(process.pid, 'SIGKILL');
  });
  process.on('SIGINT', () => {});
  process.on('message', (m) => {
    if (m === DRAIN_MESSAGE) drainNow('fleet stop');
  });
}

export const isFleetWorker = () => cluster.isWorker;

/** A worker hands its banner to the primary, which prints it once for the fleet. */
export function announceBanner(text: string): void {
  process.send?.({ t: 'banner', text });
}

/** This worker's number in the fleet (replacements get new ones), for its log line. */
export const fleetWorkerId = () => cluster.worker?.id ?? 0;
