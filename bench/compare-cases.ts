// The requests bench/compare.ts measures on both servers. Rows that repeat one
// request are answered from IDQS's caches after the first; rows whose filter
// changes with every request never are.

export interface Case {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  /** One body for every request (the answer cache holds it after the first), or a new filter per request number. */
  body?: unknown | ((i: number) => unknown);
  headers?: Record<string, string>;
}

export const NLST_CT = { terms: { collection_id: ['nlst'], Modality: ['CT'] }, ranges: {} };

const DAY = 86_400_000;
export const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Collections of the release, for filters on a different set of them per request (read once from IDQS). */
let collections: string[] = [];
export function setCollections(ids: string[]): void {
  collections = ids;
}

/**
 * The i-th 3-subset of the collections (combinatorial number system, after a
 * multiplicative shuffle of i): every request a set not asked before.
 */
function collectionSet(i: number): string[] {
  const k = collections.length;
  const total = (k * (k - 1) * (k - 2)) / 6;
  // 2654435761 is prime and larger than any total here: a permutation of 0..total-1.
  let rank = Number((BigInt(i) * 2654435761n) % BigInt(total));
  const out: string[] = [];
  let c = k - 1;
  for (let m = 3; m >= 1; m--) {
    const choose = (n: number) => (m === 3 ? (n * (n - 1) * (n - 2)) / 6 : m === 2 ? (n * (n - 1)) / 2 : n);
    while (choose(c) > rank) c--;
    out.push(collections[c]!);
    rank -= choose(c);
    c--;
  }
  return out;
}

/**
 * A year-long StudyDate window from a day of 1990-2025 (then a day longer every 13,000 requests).
 * The day is i times a prime modulo 13,000, a permutation: every measurement (c1, c8, either server)
 * draws windows from the whole span alike. Taken in order, later measurements got later, denser
 * years, so one server's c8 and the other's rounds did not measure the same work.
 */
const yearWindow = (i: number) => {
  const start = Date.UTC(1990, 0, 1) + ((i * 7919) % 13_000) * DAY;
  return { gte: isoDay(start), lte: isoDay(start + (365 + Math.floor(i / 13_000)) * DAY) };
};

export const CASES: Case[] = [
  { name: 'counts, nlst + CT', path: '/v3/cohort/counts', body: NLST_CT },
  { name: 'counts, empty filter (whole release)', path: '/v3/cohort/counts', body: { terms: {}, ranges: {} } },
  { name: 'counts, instanceCount >= 1 (whole release)', path: '/v3/cohort/counts', body: { ranges: { instanceCount: { gte: 1 } } } },
  { name: 'counts, MR + BREAST', path: '/v3/cohort/counts', body: { terms: { Modality: ['MR'], BodyPartExamined: ['BREAST'] } } },
  { name: 'counts, StudyDate in 2001', path: '/v3/cohort/counts', body: { ranges: { StudyDate: { gte: '2001-01-01', lte: '2001-12-31' } } } },
  { name: 'counts, StudyDate, a year from a new day', path: '/v3/cohort/counts', body: (i: number) => ({ ranges: { StudyDate: yearWindow(i) } }) },
  { name: 'counts, 3 collections, a new set', path: '/v3/cohort/counts', body: (i: number) => ({ terms: { collection_id: collectionSet(i) } }) },
  {
    // Bounds outside the data: every row with a StudyDate (all but 1,524 of the release).
    name: 'counts, StudyDate ~all rows, new bounds',
    path: '/v3/cohort/counts',
    body: (i: number) => ({ ranges: { StudyDate: { gte: isoDay(Date.UTC(1880, 0, 1) - (i % 20_000) * DAY), lte: isoDay(Date.UTC(2027, 0, 1) + Math.floor(i / 20_000) * DAY) } } }),
  },
  {
    name: 'counts, CT or MR + StudyDate year, new window',
    path: '/v3/cohort/counts',
    body: (i: number) => ({ terms: { Modality: ['CT', 'MR'] }, ranges: { StudyDate: yearWindow(i) } }),
  },
  { name: 'manifest, page of 100', path: '/v3/cohort/manifest', body: { filters: NLST_CT, page_size: 100 } },
  { name: 'manifest, page 50 of 100', path: '/v3/cohort/manifest', body: { filters: NLST_CT, page_size: 100, page: 50 } },
  { name: 'manifest, page of 1,000', path: '/v3/cohort/manifest', body: { filters: NLST_CT, page_size: 1000 } },
  { name: 'caller SQL, repeated', path: '/v3/sql', body: { sql: 'SELECT Modality, count(*) AS n FROM index GROUP BY 1 ORDER BY n DESC', max_rows: 100 } },
  { name: 'GET /v3/collections', method: 'GET', path: '/v3/collections' },
  { name: 'GET /v3/collections, gzip accepted', method: 'GET', path: '/v3/collections', headers: { 'accept-encoding': 'gzip' } },
];

/** Whether a case repeats one request, so that IDQS answers it from a cache after the first. */
export const cachedCase = (c: Case): boolean => typeof c.body !== 'function';
