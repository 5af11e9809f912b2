// What a server process tree costs, read from /proc: resident memory and CPU
// time of the process and its children (caller-SQL workers are children), and
// a wait until it has finished queued work.

import { readdirSync, readFileSync } from 'node:fs';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The fields of /proc/<pid>/stat after the command name, or null when the process is gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(Number(d));
    if (f && Number(f[1]) === pid) out.push(Number(d));
  }
  return out;
}

/** Resident memory of a process and its children, in MB. */
export function treeRssMb(pid: number): number {
  let own = 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    own = m ? Number(m[1]) / 1024 : 0;
  } catch {
    /* gone meanwhile */
  }
  return own + childrenOf(pid).reduce((s, c) => s + treeRssMb(c), 0);
}

/** CPU seconds a process and its children have used (all their threads). */
export function cpuSeconds(pid: number): number {
  const own = statFields(pid);
  const mine = own ? (Number(own[11]) + Number(own[12])) / 100 : 0;
  return mine + childrenOf(pid).reduce((s, c) => s + cpuSeconds(c), 0);
}

/**
 * Until a server has finished the work a measurement left queued (a slow
 * server still answers its last requests after the client stops), at most
 * 60 s: else that work would run during the other server's measurement.
 */
export async function settle(pid: number): Promise<void> {
  const t = performance.now();
  while (performance.now() - t < 60_000) {
    const before = cpuSeconds(pid);
    await sleep(250);
    if (cpuSeconds(pid) - before < 0.025) return;
  }
}
