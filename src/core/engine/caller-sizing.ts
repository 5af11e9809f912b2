// How many caller-SQL workers, and how much memory each, from the settings or
// (auto, the default) from the machine. Measured on a 2-core, 24 GB machine
// over the real release (the fourth audit): 2 GB split four ways left each
// worker 286 MB of engine memory, and real queries (a whole-release distinct
// count, SUMMARIZE) failed; one worker per core with a quarter of the machine
// between them answers them all, and more workers than cores only queue on the
// same cores while dividing the memory.

import { sizeBytes, type Config } from '../../config.ts';
import { machineCores, machineMemory, type MachineMemory } from './machine.ts';

/** The fraction of the machine's memory caller SQL gets by default; the rest is the server's own and the host's. */
const AUTO_FRACTION = 0.25;
/** No worker gets less than this: below it the runtime and the engine's own structures leave it nothing to work with. */
export const MIN_SHARE_BYTES = 256 * 1024 * 1024;
const MAX_AUTO_WORKERS = 4;

export interface CallerSizing {
  workers: number;
  /** Memory of caller SQL, all workers together. */
  memoryBytes: number;
  /** The setting as an operator reads it in messages: "2GB", or "auto (6.0 GB: a quarter of 24.0 GB of RAM)". */
  memoryText: string;
}

const gb = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GB`;

export function callerSizing(c: Pick<Config, 'sqlMemoryLimit' | 'sqlConnections' | 'fleetSize'>, machine: MachineMemory = machineMemory(), cores: number = machineCores()): CallerSizing {
  const fleet = Math.max(1, c.fleetSize);
  let memoryBytes: number;
  let memoryText: string;
  if (c.sqlMemoryLimit === 'auto') {
    memoryBytes = Math.floor((machine.bytes * AUTO_FRACTION) / fleet);
    const of = `${gb(machine.bytes)} of ${machine.source === 'cgroup' ? "the container's memory limit" : 'RAM'}`;
    memoryText = `auto (${gb(memoryBytes)}: a quarter of ${of}${fleet > 1 ? `, divided among ${fleet} serving processes` : ''})`;
  } else {
    memoryBytes = sizeBytes(c.sqlMemoryLimit);
    memoryText = c.sqlMemoryLimit;
  }
  const asked = c.sqlConnections === 'auto' ? Math.min(MAX_AUTO_WORKERS, Math.max(1, Math.floor(cores / fleet))) : c.sqlConnections;
  // Auto never splits the memory into shares too small to use; a number set by the operator is kept.
  const workers = c.sqlConnections === 'auto' ? Math.max(1, Math.min(asked, Math.floor(memoryBytes / MIN_SHARE_BYTES))) : asked;
  return { workers, memoryBytes, memoryText };
}
