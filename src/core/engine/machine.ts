// What this machine gives the service: the memory it may use (the smaller of
// the RAM and the container's cgroup limit) and its cores. Caller SQL is sized
// from these by default (IDQS_SQL_MEMORY_LIMIT=auto, IDQS_SQL_CONNECTIONS=auto),
// so a 4 GB container and a 64 GB host each get a share that fits them.

import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';

/** cgroup v2 first, then v1; a value of "max" (or v1's huge sentinel) is no limit. */
const CGROUP_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];

function readLimit(file: string): number | null {
  try {
    const text = readFileSync(file, 'utf8').trim();
    if (text === 'max') return null;
    const n = Number(text);
    // v1 says "no limit" with a number near 2^63.
    return Number.isFinite(n) && n > 0 && n < 2 ** 60 ? n : null;
  } catch {
    return null;
  }
}

export interface MachineMemory {
  bytes: number;
  /** Where the figure comes from, for the start-up line and the README's example. */
  source: 'ram' | 'cgroup';
}

/** The memory this process may use: the RAM, or the container's limit when lower. */
export function machineMemory(files: string[] = CGROUP_FILES, ram: number = totalmem()): MachineMemory {
  let limit: number | null = null;
  for (const f of files) {
    limit = readLimit(f);
    if (limit !== null) break;
  }
  return limit !== null && limit < ram ? { bytes: limit, source: 'cgroup' } : { bytes: ram, source: 'ram' };
}

export function machineCores(): number {
  return availableParallelism();
}
