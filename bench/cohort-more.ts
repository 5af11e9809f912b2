// npm run bench:cohort-more -- [--db FILE] [--reps N]
//
// The answers issue 22 moved onto the cohort index beyond plain terms and
// ranges: counts of filters with null (missing value), all_terms and
// collection-level attributes, and /v3/cohort/table pages at every level,
// sorted and not. IDQS with the index beside IDQS with IDQS_COHORT_INDEX=off
// (the same requests answered by SQL), requests alternating between the two
// in one run, sequential (c1). Prints p50 and p90 per request and server and
// the ratio. Counts vary a no-op bound per request so the index's answer
// cache is not what is measured. --db defaults to the pinned real release.

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { defaultCacheDir } from '../src/config.ts';
import { spawnServer } from './server.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const PIN = JSON.parse(readFileSync(new URL('../test/real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const db = arg('db') ?? join(defaultCacheDir(), 'releases', `${PIN.release}-${PIN.source}`, 'idqs.duckdb');
const reps = Number(arg('reps') ?? 15);

type Body = (i: number) => unknown;
/** A bound no series exceeds, different per request: the same cohort, not the same cached answer. */
const fresh = (i: number) => ({ instanceCount: { lte: 1e12 + i } });

const REQUESTS: [string, string, Body][] = [
  ['counts: Modality ALL CT,PT (all_terms)', '/v3/cohort/counts', (i) => ({ all_terms: { Modality: ['CT', 'PT'] }, ranges: fresh(i) })],
  ['counts: BodyPartExamined null or CHEST', '/v3/cohort/counts', (i) => ({ terms: { BodyPartExamined: [null, 'CHEST'] }, ranges: fresh(i) })],
  ['counts: cancer_types Lung Cancer + CT', '/v3/cohort/counts', (i) => ({ terms: { cancer_types: ['Lung Cancer'], Modality: ['CT'] }, ranges: fresh(i) })],
  ['counts: program_id tcga', '/v3/cohort/counts', (i) => ({ terms: { program_id: ['tcga'] }, ranges: fresh(i) })],
  ['table: collections, whole release', '/v3/cohort/table', () => ({ level: 'collections' })],
  ['table: collections by series desc', '/v3/cohort/table', () => ({ level: 'collections', sort: 'series', order: 'desc' })],
  ['table: patients, whole release, page 100', '/v3/cohort/table', () => ({ level: 'patients', page: 100 })],
  ['table: patients of nlst by studies desc', '/v3/cohort/table', () => ({ level: 'patients', sort: 'studies', order: 'desc', filters: { terms: { collection_id: ['nlst'] } } })],
  ['table: studies of CT by StudyDate', '/v3/cohort/table', () => ({ level: 'studies', sort: 'StudyDate', filters: { terms: { Modality: ['CT'] } } })],
  ['table: series, whole release, by size desc', '/v3/cohort/table', () => ({ level: 'series', sort: 'series_size_MB', order: 'desc' })],
  ['table: series of nlst by Modality', '/v3/cohort/table', () => ({ level: 'series', sort: 'Modality', filters: { terms: { collection_id: ['nlst'] } } })],
  ['table: series of nlst by SeriesDescription', '/v3/cohort/table', () => ({ level: 'series', sort: 'SeriesDescription', filters: { terms: { collection_id: ['nlst'] } } })],
  ['table: studies by StudyDescription desc', '/v3/cohort/table', () => ({ level: 'studies', sort: 'StudyDescription', order: 'desc' })],
];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

async function timed(base: string, path: string, body: unknown): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  if (!r.ok) throw new Error(`${path} ${JSON.stringify(body)}: HTTP ${r.status}`);
  return performance.now() - t0;
}

const on = await spawnServer(db);
const off = await spawnServer(db, { IDQS_COHORT_INDEX: 'off' });
try {
  // The index is loaded before the server listens when its file is there; one request each warms the engine.
  for (const [, path, body] of REQUESTS) {
    await timed(on.base, path, body(-1));
    await timed(off.base, path, body(-1));
  }
  process.stdout.write(`database ${db}; ${reps} requests each, alternating; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n\n`);
  process.stdout.write('| request | index p50 / p90 ms | SQL p50 / p90 ms | p50 ratio |\n|---|---|---|---|\n');
  for (const [name, path, body] of REQUESTS) {
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < reps; i++) {
      a.push(await timed(on.base, path, body(i)));
      b.push(await timed(off.base, path, body(i)));
    }
    const f = (x: number) => x.toFixed(1);
    process.stdout.write(`| ${name} | ${f(pct(a, 0.5))} / ${f(pct(a, 0.9))} | ${f(pct(b, 0.5))} / ${f(pct(b, 0.9))} | ${(pct(b, 0.5) / pct(a, 0.5)).toFixed(1)}× |\n`);
  }
  process.stdout.write(`\nload average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
} finally {
  on.proc.kill();
  off.proc.kill();
}
