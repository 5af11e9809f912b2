// Readiness, as opposed to liveness: whether this server should be sent
// traffic now. Not when it is shutting down, when the database cannot be read
// (a read error was seen, or a probe query fails), when a budget is saturated
// (its queue is full, so new work would be refused), or when a slot has been
// held far past any legitimate use (a leak). Load balancers and the fleet
// supervisor poll it; the answer lists every problem.

import type { AppContext } from '../context.ts';
import type { BudgetStats } from '../engine/budget.ts';

export interface Readiness {
  ready: boolean;
  problems: string[];
  checks: {
    draining: boolean;
    database: 'ok' | 'unreadable';
    budgets: Record<string, BudgetStats>;
  };
}

/** Deadline of the probe query: a ready server answers it at once. */
const PROBE_MS = 2000;

export async function readiness(ctx: AppContext, draining: boolean): Promise<Readiness> {
  const problems: string[] = [];
  if (draining) problems.push('shutting down: finishing in-flight work');
  let database: Readiness['checks']['database'] = 'ok';
  // Several releases served: every release's database is probed, and a problem names its release.
  const all = ctx.served ?? [ctx];
  for (const c of all) {
    const of = all.length > 1 ? `release ${c.dataset.index_version}: ` : '';
    const fault = c.engine.databaseFault;
    if (fault) {
      database = 'unreadable';
      problems.push(`${of}a database read error was seen at ${fault.at} (the file is damaged or unreadable; see the operator log)`);
    } else if (!draining) {
      try {
        await c.engine.one('SELECT 1 AS ok FROM "index" LIMIT 1', [], { timeoutMs: PROBE_MS, timeoutSetting: 'the readiness probe' });
      } catch (e) {
        database = 'unreadable';
        problems.push(`${of}the probe query failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  const budgets = ctx.engine.stats();
  const limits: Record<string, number> = {
    curated: ctx.config.queue,
    exports: ctx.config.exportQueue,
    facets: ctx.config.facetQueue,
    sql: ctx.config.sqlQueue,
  };
  for (const [name, b] of Object.entries(budgets)) {
    if (b.busy >= b.slots && b.queued >= (limits[name] ?? Infinity)) problems.push(`${name} is saturated: ${b.busy} running and ${b.queued} waiting, new work is refused`);
    if (b.leaked > 0) problems.push(`${name}: ${b.leaked} slot(s) held far past any deadline`);
  }
  return { ready: problems.length === 0, problems, checks: { draining, database, budgets } };
}
