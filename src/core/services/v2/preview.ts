// /v2 manifest preview and its next pages. A page is read with a keyset
// condition (rows after the last one sent, in the manifest's order), so deep
// pages cost what the first one does and pages never overlap or skip. When a
// page takes longer than the deadline the caller gets a token for that same
// page (HTTP 202); the work goes on, parked, and resubmitting the token
// collects it. Work nobody waits for is cancelled: a page whose client leaves
// before any 202 announced it, and a parked page nobody collects within
// IDQS_V2_ORPHAN_MS. At most IDQS_V2_PARKED pages are parked at once.

import { releaseContext, type AppContext } from '../../context.ts';
import { IdqsError, busy, invalidQuery, msg, setting } from '../../errors.ts';
import { WorkCancelled, currentWork, runWork } from '../../engine/work.ts';
import type { Row } from '../../engine/engine.ts';
import type { JsonValue } from '../../engine/json.ts';
import { answer } from '../../planner/plan.ts';
import { inlineSql, keysetCondition, planManifest, type ManifestPlan } from './plan.ts';
import { requireV2Rows } from './source.ts';
import { parsePreviewBody } from './request.ts';
import { ResultCache, materialized, slice } from './result-cache.ts';
import { TokenCodec, type ManifestQuery, type PageCursor } from './token.ts';
import { currentVersion } from './metadata.ts';

export const TIMEOUT_MESSAGE = '[ERROR] API query took longer than the allowed time to execute. Retry the query using the next_page token.';

export interface ManifestPage {
  /** Each row as its JSON text (written by the engine), in manifest order. */
  manifest_data: string[];
  rowsReturned: number;
  totalFound: number;
}

export interface CohortDefEcho {
  name: unknown;
  description: unknown;
  sql: string;
  user_email: null;
  filterSet: { filters: Record<string, (string | number)[]>; svc_data_version: string; idc_data_version: string };
}

export type PageOutcome =
  | { status: 'done'; manifest: ManifestPage; next_page: string }
  /** The deadline passed first: resubmit `next_page` (the same page) to collect it. */
  | { status: 'pending'; next_page: string };

export interface PreviewOutcome {
  cohort_def: CohortDefEcho;
  page: PageOutcome;
}

/** Token codec of this release (an HMAC key derivation: cheap). */
function tokens(ctx: AppContext): TokenCodec {
  // A token comes back in a request body, so it is no longer than one; its query came in one too.
  const limits = { maxChars: ctx.config.bodyLimit, maxJsonBytes: 8 * ctx.config.bodyLimit };
  return new TokenCodec(ctx.dataset.identity, ctx.tokenSecret, limits);
}

/** Work under way or finished but not yet collected, by page identity. */
interface Pending {
  promise: Promise<{ manifest: ManifestPage; cursor: PageCursor | null }>;
  /** Stops the page's queries. */
  stop: AbortController;
  /** A 202 has given out its token: someone may come back for it. */
  announced: boolean;
  /** Cancels it when nobody collects it in time. */
  orphan?: NodeJS.Timeout;
}

const pendingByContext = new WeakMap<AppContext, Map<string, Pending>>();

function pendingMap(ctx: AppContext): Map<string, Pending> {
  let p = pendingByContext.get(releaseContext(ctx));
  if (!p) {
    p = new Map();
    pendingByContext.set(releaseContext(ctx), p);
  }
  return p;
}

/** Keep a page for whoever comes back with its token; cancel it if nobody does in time. */
function park(ctx: AppContext, key: string, entry: Pending): void {
  const pending = pendingMap(ctx);
  clearTimeout(entry.orphan);
  entry.orphan = setTimeout(() => {
    if (pending.get(key) === entry) pending.delete(key);
    entry.stop.abort(new WorkCancelled('a /v2 page nobody collected'));
  }, ctx.config.v2OrphanMs);
  entry.orphan.unref();
  pending.set(key, entry);
}

const caches = new WeakMap<AppContext, ResultCache>();

function resultCache(ctx: AppContext): ResultCache {
  let c = caches.get(releaseContext(ctx));
  if (!c) {
    c = new ResultCache(ctx.config.v2CacheMb * 1024 * 1024);
    caches.set(releaseContext(ctx), c);
  }
  return c;
}

/** Rough size of a materialized row: its JSON text (names, identifier-sized values, counts), plus overhead. */
function rowBytes(plan: ManifestPlan): number {
  return 24 + plan.columns.reduce((n, c, i) => n + c.length + 4 + (i < plan.keys.length ? 72 : 12), 0);
}

/** The manifest order over the rows of `q`. */
const qOrder = (plan: ManifestPlan) => plan.keys.map((k) => `q."${k.replace(/"/g, '""')}" ASC NULLS FIRST`).join(', ');

/** Sort key of a row from its JSON text. */
function keyOf(plan: ManifestPlan, json: string): JsonValue[] {
  const row = JSON.parse(json) as Record<string, JsonValue>;
  return plan.keys.map((k) => row[k] ?? null);
}

const sameKey = (a: JsonValue[], b: JsonValue[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/** Rows of a later page from the materialized manifest; null when it cannot be cached. */
async function cachedRows(ctx: AppContext, plan: ManifestPlan, cursor: PageCursor, size: number): Promise<string[] | null> {
  if (cursor.total === null || cursor.after === null || plan.keys.length === 0) return null;
  const cache = resultCache(ctx);
  const bytes = cursor.total * rowBytes(plan);
  if (!cache.fits(bytes)) return null;
  const key = JSON.stringify([plan.sql, plan.params.map((p) => (typeof p === 'bigint' ? String(p) : p))]);
  const m = await cache.get(key, bytes, async () => {
    const r = await ctx.engine.materialize(`SELECT to_json(q)::VARCHAR AS j FROM (${plan.unordered}) q ORDER BY ${qOrder(plan)}`, plan.params);
    return materialized(r.chunks);
  });
  if (!m || m.rows !== cursor.total) return null;
  // The row before the page must be the one the token says was sent last.
  const prev = slice(m, cursor.offset - 1, 1)[0];
  if (!prev || !sameKey(keyOf(plan, prev), cursor.after)) return null;
  return slice(m, cursor.offset, size);
}

async function readPage(ctx: AppContext, plan: ManifestPlan, cursor: PageCursor, size: number): Promise<{ manifest: ManifestPage; cursor: PageCursor | null }> {
  const eng = ctx.engine;
  const totalP = cursor.total !== null ? Promise.resolve(cursor.total) : answer('v2Count', ctx, plan);
  const texts = (rows: Row[]) => rows.map((r) => String(r.j));
  let rowsP: Promise<string[]>;
  if (plan.keys.length === 0) {
    // One row of totals.
    rowsP = cursor.offset > 0 ? Promise.resolve([]) : eng.rows(`SELECT to_json(q)::VARCHAR AS j FROM (${plan.unordered}) q`, plan.params).then(texts);
  } else {
    rowsP = cachedRows(ctx, plan, cursor, size).then((cached) => {
      if (cached) return cached;
      const cond = cursor.after ? keysetCondition(plan.keys, cursor.after) : null;
      const sql = `SELECT to_json(q)::VARCHAR AS j FROM (${plan.unordered}) q${cond ? ` WHERE ${cond.text}` : ''} ORDER BY ${qOrder(plan)} LIMIT ${size}`;
      return eng.rows(sql, [...plan.params, ...(cond?.params ?? [])]).then(texts);
    });
  }
  const [total, rows] = await Promise.all([totalP, rowsP]);
  const sent = cursor.offset + rows.length;
  const last = rows[rows.length - 1];
  const more = rows.length > 0 && sent < total;
  return {
    manifest: { manifest_data: rows, rowsReturned: rows.length, totalFound: total },
    cursor: more ? { offset: sent, after: keyOf(plan, last!), total, pageSize: cursor.pageSize } : null,
  };
}

/** Settles (rejecting) when the signal aborts. */
function whenAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

/** Run a page against the deadline; on timeout the work is parked under the page's own token. */
async function pageWithDeadline(ctx: AppContext, query: ManifestQuery, plan: ManifestPlan, cursor: PageCursor, size: number): Promise<PageOutcome> {
  const tk = tokens(ctx);
  const here = tk.encode({ query, cursor: { ...cursor, pageSize: size } });
  const pending = pendingMap(ctx);
  let entry = pending.get(here);
  if (entry) {
    // Collected: it is this request's to wait for now.
    clearTimeout(entry.orphan);
    pending.delete(here);
  } else {
    const stop = new AbortController();
    // The page's queries follow its own signal, not the request's: a parked page outlives its first client.
    const work = { signal: stop.signal, requestId: currentWork()?.requestId, timeout: { ms: ctx.config.exportTimeoutMs, setting: 'IDQS_EXPORT_TIMEOUT_MS' } };
    const promise = runWork(work, () => readPage(ctx, plan, cursor, size));
    promise.catch(() => undefined); // collected (and reported) by whoever awaits it
    entry = { promise, stop, announced: false };
  }
  const deadline = ctx.config.v2DeadlineMs;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadline)));
  const caller = currentWork()?.signal;
  try {
    const r = await Promise.race([entry.promise, late, whenAborted(caller)]);
    if (r === 'late') {
      if (pending.size >= ctx.config.v2Parked) {
        entry.stop.abort(new WorkCancelled('too many parked /v2 pages'));
        throw busy(msg`Too many /v2 pages are being prepared (at most ${ctx.config.v2Parked}, ${setting('IDQS_V2_PARKED')}); retry in a few seconds.`, 5);
      }
      entry.announced = true;
      park(ctx, here, entry);
      return { status: 'pending', next_page: here };
    }
    return { status: 'done', manifest: r.manifest, next_page: r.cursor ? tk.encode({ query, cursor: r.cursor }) : '' };
  } catch (e) {
    if (caller?.aborted && e === caller.reason) {
      // The client left: a page someone holds a token for waits for them; one nobody knows of stops.
      if (entry.announced) park(ctx, here, entry);
      else entry.stop.abort(new WorkCancelled('the client went away'));
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function clampPageSize(ctx: AppContext, size: number | null, fallback: number): number {
  return Math.min(size ?? fallback, ctx.config.v2MaxPageSize);
}

/** POST /v2/cohorts/manifest/preview */
export async function preview(ctx: AppContext, body: unknown): Promise<PreviewOutcome> {
  const req = parsePreviewBody(body);
  const plan = planManifest(req.query, requireV2Rows(ctx));
  const version = await currentVersion(ctx);
  const cohort_def: CohortDefEcho = {
    name: req.name,
    description: req.description,
    sql: req.sql ? inlineSql(plan.sql, plan.params) : '',
    user_email: null,
    filterSet: { filters: req.query.filters, svc_data_version: version, idc_data_version: version },
  };
  const size = clampPageSize(ctx, req.pageSize, ctx.config.v2PageSize);
  const page = await pageWithDeadline(ctx, req.query, plan, { offset: 0, after: null, total: null, pageSize: size }, size);
  return { cohort_def, page };
}

/** Never the token itself: it may be anything, of any size. */
const invalidToken = (raw: string | null) =>
  invalidQuery(
    raw === null
      ? // The public service's words (clients match them), then what to do: the request carried no token.
        'Invalid next_page token None: the request has no next_page value (it is empty, or the parameter is not spelled next_page). Pass the next_page value of the previous response unchanged, or run the query again from its first page.'
      : `Invalid next_page token (${raw.length} characters): it is not a token this server issued, or it was altered. Pass the next_page value of the previous response unchanged, or run the query again from its first page.`,
  );

/** The next page of a manifest (or the page a 202 promised), from its token. */
export async function nextPage(ctx: AppContext, token: unknown, pageSize: number | null): Promise<PageOutcome> {
  const raw = typeof token === 'string' && token !== '' ? token : null;
  const body = raw ? tokens(ctx).decode(raw) : 'malformed';
  if (body === 'other_release') {
    // Several releases served: a token stays with the release that issued it.
    const here = releaseContext(ctx);
    const issuer = (ctx.served ?? []).find((c) => c !== here && typeof tokens(c).decode(raw!) === 'object');
    if (issuer) {
      throw invalidQuery(
        `Invalid next_page token for release ${here.dataset.index_version}: it was issued for release ${issuer.dataset.index_version}, also served here, and a token stays with the release that issued it. Send release=${issuer.dataset.index_version} with it, or run the query again from its first page on release ${here.dataset.index_version}.`,
      );
    }
    // A release switch happened while the caller paged: never continue with rows of another release.
    throw invalidQuery(
      `Invalid next_page token: it was issued for another data release (or by a server with another IDQS_TOKEN_SECRET), and this server now serves ${ctx.dataset.release} (data ${ctx.dataset.identity.slice(0, 12)}). Run the query again from its first page to get a manifest of one release.`,
    );
  }
  if (body === 'malformed') throw invalidToken(raw);
  const rows = requireV2Rows(ctx);
  let plan: ManifestPlan;
  try {
    plan = planManifest(body.query, rows);
  } catch (e) {
    if (e instanceof IdqsError) throw invalidToken(raw);
    throw e;
  }
  // The sort key of the last row sent has one value per key of the plan.
  if (body.cursor.after !== null && body.cursor.after.length !== plan.keys.length) throw invalidToken(raw);
  const size = clampPageSize(ctx, pageSize, body.cursor.pageSize);
  return pageWithDeadline(ctx, body.query, plan, body.cursor, size);
}
