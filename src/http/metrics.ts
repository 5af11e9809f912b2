// Prometheus metrics (prom-client) served at /metrics: requests by route,
// method and status (499 when the client left first), latency histograms, each
// budget's slots, queue depth, refusals, queue-deadline expiries,
// cancellations and run-deadline timeouts, the caller-SQL workers, and the
// process (resident memory, event-loop delay). One registry per app, so
// several servers can share a process (tests).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BudgetStats } from '../core/engine/budget.ts';
import type { Engine } from '../core/engine/engine.ts';
import { plannerStats } from '../core/planner/plan.ts';

export interface Metrics {
  registry: Registry;
  /** Record a finished (or abandoned) request. */
  observe(route: string, method: string, status: number, seconds: number): void;
}

const BUDGET_FIELDS = ['slots', 'busy', 'queued', 'admitted', 'rejected', 'expired', 'cancelled', 'timed_out', 'leaked'] as const;

/** `more`: budgets kept outside the engine (the large-body lane), by name. */
export function createMetrics(engine: Engine, more: () => Record<string, BudgetStats> = () => ({})): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const requests = new Counter({ name: 'idqs_http_requests_total', help: 'HTTP requests by route pattern, method and status (499: the client left first).', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const latency = new Histogram({
    name: 'idqs_http_request_duration_seconds',
    help: 'Time from the request to the end of its response, by route pattern and method.',
    labelNames: ['route', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const budget = new Gauge({
    name: 'idqs_budget',
    help: 'Budgets of work (curated queries, exports, facets, caller SQL, large request bodies): slots, busy, queued, and since start admitted, rejected (queue full), expired (queue deadline), cancelled, timed_out (run deadline) and leaked.',
    labelNames: ['budget', 'field'],
    registers: [registry],
    collect() {
      const s = { ...engine.stats(), ...more() };
      for (const [name, b] of Object.entries(s)) for (const f of BUDGET_FIELDS) this.set({ budget: name, field: f }, b[f]);
    },
  });
  void budget;
  new Gauge({
    name: 'idqs_sql_timeouts',
    help: 'Caller SQL stopped at its deadline (IDQS_SQL_TIMEOUT_MS) since start.',
    registers: [registry],
    collect() {
      this.set(engine.stats().sql.timed_out);
    },
  });
  new Gauge({
    name: 'idqs_sql_worker_restarts',
    help: 'Caller-SQL worker processes that ended (crashed, or killed after a deadline) and were replaced, since start.',
    registers: [registry],
    collect() {
      this.set(engine.stats().sql.restarts);
    },
  });
  new Gauge({
    name: 'idqs_sql_worker_replaced',
    help: 'Caller-SQL worker processes replaced after a query because they ran out of memory or held more than their share, since start.',
    registers: [registry],
    collect() {
      this.set(engine.stats().sql.replaced);
    },
  });
  new Gauge({
    name: 'idqs_sql_worker_resident_bytes',
    help: 'Resident memory of the running caller-SQL worker processes, together.',
    registers: [registry],
    collect() {
      this.set(engine.sql.memory().reduce((sum, w) => sum + w.rss, 0));
    },
  });
  new Gauge({
    name: 'idqs_cohort_answers',
    help: 'Cohort questions answered since start, by the evaluator the planner chose (cohort-index, duckdb) and the question.',
    labelNames: ['evaluator', 'question'],
    registers: [registry],
    collect() {
      for (const a of plannerStats()) this.set({ evaluator: a.evaluator, question: a.question }, a.answers);
    },
  });
  new Gauge({
    name: 'idqs_database_fault',
    help: '1 when a database read error has been seen (the file is damaged or unreadable).',
    registers: [registry],
    collect() {
      this.set(engine.databaseFault ? 1 : 0);
    },
  });
  return {
    registry,
    observe(route, method, status, seconds) {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
  };
}
