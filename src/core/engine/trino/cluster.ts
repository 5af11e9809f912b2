// The configured Trino cluster as the service sees it: whether one is
// configured, whether it serves the release this context serves (checked once
// per release: the row count and instance total of its index table against
// the database's), the column types of that table, and a short memory of an
// unreachable cluster so that requests do not each wait for a connection.

import { releaseContext, type AppContext } from '../../context.ts';
import { DERIVED_FROM_AWS_URL } from '../../data/build.ts';
import { toNumber } from '../../services/numbers.ts';
import { runTrino, TrinoUnavailable, type TrinoTarget } from './client.ts';

export type ClusterState =
  | { state: 'serving'; types: ReadonlyMap<string, string>; derived: ReadonlyMap<string, string> }
  | { state: 'unavailable'; reason: string; retryAfterS: number }
  | { state: 'other-data'; reason: string };

/** How long an unreachable cluster is not asked again, and a cluster serving other data. */
const DOWN_MS = 5_000;
const OTHER_DATA_MS = 60_000;

export function trinoTarget(ctx: AppContext): TrinoTarget | null {
  const c = ctx.config;
  return c.trinoUrl ? { url: c.trinoUrl, catalog: c.trinoCatalog, schema: c.trinoSchema, user: c.trinoUser } : null;
}

const known = new WeakMap<AppContext, { at: number; state: Promise<ClusterState> }>();

async function check(ctx: AppContext, t: TrinoTarget): Promise<ClusterState> {
  const probe = `SELECT count(*) AS n, COALESCE(sum(instanceCount), 0) AS instances FROM "index"`;
  try {
    const signal = AbortSignal.timeout(Math.max(ctx.config.queryTimeoutMs, 10_000));
    const [theirs, cols, ours] = await Promise.all([
      runTrino(t, probe, { signal }),
      runTrino(t, `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = '${t.schema}' AND table_name = 'index'`, { signal }),
      ctx.engine.one(probe),
    ]);
    const [n, instances] = (theirs.rows[0] ?? []).map(toNumber);
    if (n !== toNumber(ours?.n) || instances !== toNumber(ours?.instances)) {
      const reason = `its ${t.catalog}.${t.schema}.index has ${n} series and ${instances} instances, the served release ${toNumber(ours?.n)} and ${toNumber(ours?.instances)}`;
      ctx.engine.events.emit('operator', { level: 'warn', msg: `Trino does not serve this release; DuckDB answers: ${reason}`, trino: t.url });
      return { state: 'other-data', reason };
    }
    const types = new Map(cols.rows.map((r) => [String(r[0]).toLowerCase(), String(r[1])]));
    // Columns the database derived at build (the release's files lack them): derived on Trino the same way.
    const derived = new Map<string, string>();
    if (types.has('series_aws_url')) {
      for (const c of ctx.catalog.columns.get('index') ?? []) {
        const expr = DERIVED_FROM_AWS_URL[c.name];
        if (expr && !types.has(c.name.toLowerCase())) derived.set(c.name.toLowerCase(), expr);
      }
    }
    return { state: 'serving', types, derived };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    if (!(e instanceof TrinoUnavailable)) return { state: 'other-data', reason: `the check of its index table failed: ${reason}` };
    return { state: 'unavailable', reason, retryAfterS: DOWN_MS / 1000 };
  }
}

/** What the configured cluster is to this release now (null: none configured). Checked once, again after a failure. */
export function clusterState(ctx: AppContext): Promise<ClusterState> | null {
  const t = trinoTarget(ctx);
  if (!t) return null;
  const key = releaseContext(ctx);
  const k = known.get(key);
  if (k) return k.state;
  const entry = { at: Date.now(), state: check(key, t) };
  known.set(key, entry);
  void entry.state.then((s) => {
    // Only a cluster found serving this release is kept; the others are asked again after a while.
    if (s.state === 'serving') return;
    const forget = setTimeout(() => known.get(key) === entry && known.delete(key), s.state === 'unavailable' ? DOWN_MS : OTHER_DATA_MS);
    forget.unref();
  });
  return entry.state;
}

/** The cluster went away mid-answer: ask it again (and check it again) only after a while. */
export function clusterLost(ctx: AppContext, reason: string): void {
  const key = releaseContext(ctx);
  const entry = { at: Date.now(), state: Promise.resolve<ClusterState>({ state: 'unavailable', reason, retryAfterS: DOWN_MS / 1000 }) };
  known.set(key, entry);
  const forget = setTimeout(() => known.get(key) === entry && known.delete(key), DOWN_MS);
  forget.unref();
}
