// A child process that must not outlive its parent, even while its own event
// loop is busy or stuck: a thread of its own wakes a few times a second and,
// once the process has been re-parented (its parent died), kills the process
// at once. It does not wait for the main thread, so a native query running on
// the engine's threads, or an exit stuck in the engine's teardown, cannot keep
// the process alive. Used where the kernel's parent-death signal (setpriv
// --pdeathsig, see ./sql-workers.ts) cannot be set: cluster workers, which
// node:cluster starts itself, and hosts without setpriv.

import { Worker } from 'node:worker_threads';

const WATCH = `
const { workerData } = require('node:worker_threads');
const nap = new Int32Array(new SharedArrayBuffer(4));
for (;;) {
  Atomics.wait(nap, 0, 0, workerData.everyMs);
  if (process.ppid !== workerData.parent) process.kill(process.pid, 'SIGKILL');
}
`;

/** Kill this process within `everyMs` of its parent's death (or now, if the parent is already not `parent`). */
export function dieWithParent(parent = process.ppid, everyMs = 200): void {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL');
  // unref: the watch never keeps the process alive by itself.
  new Worker(WATCH, { eval: true, workerData: { parent, everyMs } }).unref();
}
