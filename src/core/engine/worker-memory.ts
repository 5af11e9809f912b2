// The memory plan of one caller-SQL worker, and the reading of what it holds.
//
// A worker's share is split between the engine (DuckDB's memory_limit: past it
// the engine spills to the worker's temp folder) and V8's heap (the rows being
// written as JSON, bounded by the byte budget). The kernel's cap (RLIMIT_DATA,
// which counts address space, not resident memory) is the backstop above both:
// it is set once the worker has started, at what the runtime then holds plus
// twice the engine's limit (the allocator reserves more address space than it
// touches) plus the heap, so it can never sit below what the engine and the
// runtime need, whatever the Node version. Before that the worker starts under
// a loose cap: Node 24 reserves far more address space while it starts than
// Node 20 did, and a tight cap there made workers fail to start or fail their
// first allocations.

import { readFileSync } from 'node:fs';

const MB = 1024 * 1024;

export interface WorkerMemoryPlan {
  /** DuckDB's memory_limit, MB. */
  engineMb: number;
  /** V8's old-space limit, MB. */
  heapMb: number;
  /** The kernel cap while the worker starts, bytes. */
  startCapBytes: number;
}

/** Address space any Node runtime (with tsx when run from source) may take while it starts, before the engine does any work. */
const START_ALLOWANCE_BYTES = 3 * 1024 * MB;
/** Slack above the measured runtime and the engine's allowance: thread stacks, the spill writer's buffers. */
export const CAP_SLACK_BYTES = 256 * MB;

export function planWorkerMemory(shareBytes: number): WorkerMemoryPlan {
  // The heap holds at most a result's JSON (IDQS_SQL_MAX_BYTES, 32 MB by default) a few times over.
  const heapBytes = Math.min(512 * MB, Math.max(128 * MB, shareBytes * 0.2));
  const engineBytes = Math.max(64 * MB, shareBytes - Math.min(heapBytes, shareBytes * 0.3));
  return {
    engineMb: Math.floor(engineBytes / MB),
    heapMb: Math.floor(heapBytes / MB),
    startCapBytes: Math.round(START_ALLOWANCE_BYTES + 2 * engineBytes + heapBytes),
  };
}

/** The cap once started: what the runtime holds now, plus the engine's allowance and the heap. */
export function runningCap(plan: WorkerMemoryPlan, startedDataBytes: number): number {
  return startedDataBytes + 2 * plan.engineMb * MB + plan.heapMb * MB + CAP_SLACK_BYTES;
}

export interface ProcMemory {
  /** Resident memory, bytes. */
  rss: number;
  /** Address space counted by RLIMIT_DATA, bytes. */
  data: number;
}

/** What a process holds now (Linux); null where /proc cannot tell (another system, or it has exited). */
export function procMemory(pid: number): ProcMemory | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS');
    const data = kb('VmData');
    return Number.isFinite(rss) && Number.isFinite(data) ? { rss, data } : null;
  } catch {
    return null;
  }
}

/**
 * Whether a worker must be replaced before its next query: it holds more than its share beyond
 * what it held when it started (the allocator kept what a query freed), or its address space is
 * near its cap (its next allocation could fail in the middle of an unrelated query).
 */
export function overShare(now: ProcMemory, started: ProcMemory, shareBytes: number, capBytes: number | null): string | null {
  if (now.rss - started.rss > shareBytes) return `it holds ${Math.round(now.rss / MB)} MB, more than its ${Math.round(shareBytes / MB)} MB share above the ${Math.round(started.rss / MB)} MB it started with`;
  if (capBytes !== null && now.data > capBytes - CAP_SLACK_BYTES / 2) return `its address space (${Math.round(now.data / MB)} MB) is near its cap (${Math.round(capBytes / MB)} MB)`;
  return null;
}
