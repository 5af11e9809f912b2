// Temporary folders of caller-SQL workers: one per worker, named after the
// server process that owns it (idqs-sql-<server pid>-<slot>-XXXXXX), so that
// folders left behind by a server that died (a crash, an out-of-memory kill, a
// supervisor's SIGKILL) can be told apart and removed at the next start-up,
// while those of servers still running, ours or anyone's, are never touched.

import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'idqs-sql-';
const NAME = /^idqs-sql-(\d+)-\d+-[A-Za-z0-9]+$/;

/** A fresh folder for worker `slot` of this process, under the system's temporary folder. */
export function makeWorkerTempDir(slot: number, root = tmpdir()): string {
  return mkdtempSync(join(root, `${PREFIX}${process.pid}-${slot}-`));
}

/** Whether a process with this id exists (one of another user counts: it cannot be signalled, but it lives). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Remove the worker folders under `root` whose owning server is gone: only
 * folders of ours by name and by owner, and only when their server's process no
 * longer exists. Returns the folders removed. Never throws: a folder that cannot
 * be read or removed is left alone.
 */
export function sweepStaleWorkerTempDirs(root = tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const removed: string[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    const dir = join(root, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
  return removed;
}
