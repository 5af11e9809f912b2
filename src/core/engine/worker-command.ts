// The command line that starts one caller-SQL worker (./sql-worker.ts): Node
// with V8's heap limit and the worker's setup, under the system tools that set
// what must hold from its first instruction (a lower CPU priority, death with
// the server, a loose memory cap while it starts; ./worker-memory.ts).

import { existsSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerSetup } from './sql-worker.ts';
import type { WorkerMemoryPlan } from './worker-memory.ts';

/**
 * Worker processes (every thread: set before Node starts) run below the server's priority, so its
 * own work comes first; not the lowest, so caller SQL still moves on a host busy with other work.
 */
const WORKER_NICENESS = 10;
export const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p)) ?? null;
const NICE = ['/usr/bin/nice', '/bin/nice'].find((p) => existsSync(p)) ?? null;
/** util-linux, like prlimit: sets the parent-death signal, which survives the exec of prlimit and Node. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) ?? null;

export interface WorkerCommandOptions {
  /** The database file. */
  path: string;
  threads: number;
  tempDirSize: string;
  /** The worker's own temporary folder. */
  tempDir: string;
  plan: WorkerMemoryPlan;
}

export function workerCommand(o: WorkerCommandOptions): { command: string; args: string[]; setup: WorkerSetup } {
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts');
  const entry = join(dirname(here), `sql-worker.${fromSource ? 'ts' : 'js'}`);
  const setup: WorkerSetup = {
    path: o.path,
    // The engine gets most of the share; the rest is for the rows being serialised.
    memoryLimit: `${o.plan.engineMb}MB`,
    threads: o.threads,
    tempDir: o.tempDir,
    tempDirSize: o.tempDirSize,
    secrets: [dirname(o.path), o.path, o.tempDir, tmpdir(), homedir(), process.cwd()],
    parentPid: process.pid,
    kernelWatch: SETPRIV !== null,
  };
  const node = [...(fromSource ? ['--import', import.meta.resolve('tsx')] : []), `--max-old-space-size=${o.plan.heapMb}`, entry, JSON.stringify(setup)];
  // Limits are set before Node starts, so every thread the engine creates inherits them.
  const argv = [process.execPath, ...node];
  // A loose cap while it starts; the running cap is set once it is ready (SqlWorkers' capOnceStarted).
  if (PRLIMIT) argv.unshift(PRLIMIT, `--data=${o.plan.startCapBytes}`, '--');
  // Each of these execs the next, so the worker keeps the pid spawn gave it and the server stays its parent.
  if (SETPRIV) argv.unshift(SETPRIV, '--pdeathsig', 'KILL');
  if (NICE) argv.unshift(NICE, '-n', String(WORKER_NICENESS));
  return { command: argv[0]!, args: argv.slice(1), setup };
}
