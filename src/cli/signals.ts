// How `idqs serve` stops on SIGTERM and SIGINT: it drains (in-flight requests finish within IDQS_SHUTDOWN_S
// whatever the clients do), closes its engines, waits for their caller-SQL workers, and exits 0 when every request
// finished in time, else EXIT_CUT; a second signal stops at once. A fleet worker takes its signals from its primary.

import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { AppContext } from '../core/context.ts';
import { EXIT_CUT, workerSignals } from './serve-workers.ts';

export interface Served {
  app: FastifyInstance;
  contexts: AppContext[];
  cfg: Config;
  /** This process is a fleet worker (its primary forwards the signals). */
  worker: boolean;
  /** Who stops, as said in the lines on stderr (empty for a single process). */
  who: string;
}

export function drainOnSignals({ app, contexts, cfg, worker, who }: Served): void {
  let stopping = false;
  // The caller-SQL workers are killed and waited for before the process exits (and the kernel kills any left when it does).
  const hardExit = (code: number) => {
    for (const c of contexts) c.engine.sql.abandon();
    process.exit(code);
  };
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.once('SIGINT', () => hardExit(130));
    process.once('SIGTERM', () => hardExit(143));
    const deadlineMs = cfg.shutdownS * 1000;
    setTimeout(() => hardExit(EXIT_CUT), deadlineMs + 2000).unref();
    process.stderr.write(`${signal}: finishing in-flight requests${who} (at most ${cfg.shutdownS} s)\n`);
    const { drain } = await import('../server.ts');
    const outcome = await drain(app, deadlineMs);
    for (const c of contexts) c.engine.close();
    await Promise.all(contexts.map((c) => c.engine.sql.stopped(1500)));
    process.stderr.write(outcome === 'clean' ? `stopped${who}\n` : `stopped${who}: requests still running at the deadline were cut (exit ${EXIT_CUT})\n`);
    process.exit(outcome === 'clean' ? 0 : EXIT_CUT);
  };
  if (worker) workerSignals((why) => void stop(why), () => contexts.forEach((c) => c.engine.sql.abandon()));
  else process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
