// Several releases served by one process. Each release has its own context
// (read-only database, catalog, memoized results, caches, cohort index);
// their engines share one set of budgets (see Engine.shareBudgets). The
// newest release is the default. A request names its release once, at the
// adapter's edge (`inRelease`); everything below it sees that release's
// context through the served view (`servedView`), so services and route
// bodies are the same whether one release is served or several.

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { RELEASE_OF_VIEW, createContext, releaseContext, type AppContext } from './context.ts';
import { field, invalidQuery, msg } from './errors.ts';
import { stats, type Stats } from './services/version.ts';

export { releaseContext };

/** The contexts served, newest first (the default); one context when a single release is served. */
export function servedReleases(ctx: AppContext): AppContext[] {
  return ctx.served ?? [releaseContext(ctx)];
}

/** Newest first: by index version (25.0.5 before 24.2.2), then by data release number. */
function newestFirst(a: AppContext, b: AppContext): number {
  const nums = (v: string) => (v.match(/\d+/g) ?? []).map(Number);
  for (const [x, y] of [
    [nums(a.dataset.index_version), nums(b.dataset.index_version)],
    [nums(a.dataset.release), nums(b.dataset.release)],
  ] as const) {
    for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
  }
  return 0;
}

/**
 * Open every database (each its own read-only engine), newest first; the
 * engines after the first draw on the first one's budgets. The same release
 * twice is refused: its requests could not tell the two apart.
 */
export async function createReleaseContexts(config: Parameters<typeof createContext>[0], dbPaths: string[]): Promise<AppContext[]> {
  const opened: AppContext[] = [];
  try {
    for (const p of dbPaths) opened.push(await createContext(config, p));
    const seen = new Map<string, string>();
    for (const [i, c] of opened.entries()) {
      const name = c.dataset.index_version;
      if (seen.has(name)) throw new Error(`${dbPaths[i]} and ${seen.get(name)} are both release ${name}; serve each release once`);
      seen.set(name, dbPaths[i]!);
    }
  } catch (e) {
    for (const c of opened) c.engine.close();
    throw e;
  }
  opened.sort(newestFirst);
  if (opened.length > 1) {
    for (const c of opened.slice(1)) c.engine.shareBudgets(opened[0]!.engine);
    // Answers that list every release (/v3/version, /v3/releases) change with the set served: so do the validators.
    const set = createHash('sha256').update(opened.map((c) => c.dataset.identity).join('\n')).digest('hex').slice(0, 8);
    for (const c of opened) {
      c.served = opened;
      c.etag = `W/"idqs-${c.dataset.identity.slice(0, 16)}-${set}-${c.serverVersion}"`;
    }
  }
  return opened;
}

/** The name commands and links carry when several releases are served (none when one is: it is the only answer). */
export function namedRelease(ctx: AppContext): string | undefined {
  return ctx.served ? ctx.dataset.index_version : undefined;
}

/** How users name a release: its index version (25.0.5) and its data release (v25, 25). */
function names(c: AppContext): string[] {
  const r = c.dataset.release.toLowerCase();
  return [c.dataset.index_version.toLowerCase(), r, r.replace(/^v/, '')];
}

/** What a message lists: "25.0.5 (v25, the default), 24.2.2 (v24)". */
export function releaseList(contexts: AppContext[]): string {
  return contexts.map((c, i) => `${c.dataset.index_version} (${c.dataset.release}${i === 0 ? ', the default' : ''})`).join(', ');
}

/**
 * The context of the release a request names; the default (newest) when it
 * names none. An index version matches exactly; a data release (v25 or 25)
 * matches when one served release has it.
 */
export function pickRelease(ctx: AppContext, name: string | undefined | null): AppContext {
  const all = servedReleases(ctx);
  if (name === undefined || name === null || name.trim() === '') return all[0]!;
  const n = name.trim().toLowerCase();
  const exact = all.find((c) => c.dataset.index_version.toLowerCase() === n);
  if (exact) return exact;
  const matching = all.filter((c) => names(c).includes(n));
  if (matching.length === 1) return matching[0]!;
  if (matching.length > 1) {
    throw invalidQuery(
      msg`${field('release')} ${JSON.stringify(name)} names ${matching.length} served releases (${matching.map((c) => c.dataset.index_version).join(', ')}); name one by its index version.`,
    );
  }
  throw invalidQuery(msg`Unknown ${field('release')} ${JSON.stringify(name)}: this server serves ${releaseList(all)}.`);
}

const current = new AsyncLocalStorage<AppContext>();

/** Run `fn` (and everything it awaits) on the release `ctx`. */
export function inRelease<T>(ctx: AppContext, fn: () => T): T {
  return current.run(releaseContext(ctx), fn);
}

/**
 * What adapters hold when several releases are served: a context that is the
 * current request's release (see `inRelease`), the default one outside any
 * request (start-up work, warm-ups). One release: the context itself.
 */
export function servedView(contexts: AppContext[]): AppContext {
  const first = contexts[0]!;
  if (contexts.length === 1) return first;
  return new Proxy(first, {
    get(_target, prop) {
      const c = current.getStore() ?? first;
      return prop === RELEASE_OF_VIEW ? c : Reflect.get(c, prop, c);
    },
  });
}

export interface ReleaseInfo extends Stats {
  /** Index version (idc-index-data), how a request names it: 25.0.5. */
  release: string;
  idc_index_data_version: string;
  dataset_identity: string;
  default: boolean;
  synthetic: boolean;
}

/** Every release served, newest (the default) first, with its totals. */
export async function listReleases(ctx: AppContext): Promise<{ releases: ReleaseInfo[] }> {
  const all = servedReleases(ctx);
  const rows = await Promise.all(
    all.map(async (c, i) => ({
      release: c.dataset.index_version,
      idc_index_data_version: c.dataset.index_version,
      dataset_identity: c.dataset.identity,
      default: i === 0,
      synthetic: c.dataset.synthetic,
      ...(await inRelease(c, () => stats(c))),
    })),
  );
  return { releases: rows };
}
