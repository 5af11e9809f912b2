// npm run bench:v2-count — first page of /v2 manifest previews on the real
// release (pinned in test/real-release.json), the count (totalFound) from the
// cohort index against the same server with IDQS_COHORT_INDEX=off (every
// count by SQL, as before the index counted /v2): two `idqs serve`
// processes, requests alternating between them, p50 per query and side.
// Options: --runs N requests per query and side (default 9).

import { loadavg } from 'node:os';
import { pinnedRelease } from '../test/real-releases.ts';
import { spawnServer } from './server.ts';

const i = process.argv.indexOf('--runs');
const runs = i >= 0 ? Number(process.argv[i + 1]) : 9;
const PREVIEW = '/v2/cohorts/manifest/preview';

const BODIES: [string, object][] = [
  ['series, whole release', { cohort_def: { filters: {} }, fields: ['SeriesInstanceUID'], counts: true, page_size: 100 }],
  ['series, Modality CT/MR', { cohort_def: { filters: { Modality: ['ct', 'MR'] } }, fields: ['SeriesInstanceUID', 'Modality'], counts: true, page_size: 100 }],
  ['series, collection nlst', { cohort_def: { filters: { collection_id: ['NLST'] } }, fields: ['SeriesInstanceUID'], page_size: 100 }],
  ['patients, BodyPart chest%', { cohort_def: { filters: { BodyPartExamined: ['chest%'] } }, fields: ['PatientID'], counts: true, page_size: 100 }],
  ['patients, CancerType %lung% + ct', { cohort_def: { filters: { CancerType: ['%lung%'], Modality: ['ct'] } }, fields: ['PatientID'], page_size: 100 }],
  ['studies, tcga% + CT', { cohort_def: { filters: { collection_id: ['tcga%'], Modality: ['CT'] } }, fields: ['StudyInstanceUID'], counts: true, page_size: 100 }],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function firstPage(base: string, body: object): Promise<[number, number]> {
  const t0 = performance.now();
  const r = await fetch(base + PREVIEW, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = (await r.json()) as { manifest?: { totalFound: number } };
  if (r.status !== 200 || !j.manifest) throw new Error(`${r.status} ${JSON.stringify(j).slice(0, 300)}`);
  return [performance.now() - t0, j.manifest.totalFound];
}

const rel = await pinnedRelease();
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const withIndex = await spawnServer(rel.db);
const sqlOnly = await spawnServer(rel.db, { IDQS_COHORT_INDEX: 'off' });
try {
  // The index is read from its file at start-up; one request each warms both sides.
  for (const [, b] of BODIES) {
    const [, a] = await firstPage(withIndex.base, b);
    const [, s] = await firstPage(sqlOnly.base, b);
    if (a !== s) throw new Error(`totalFound differs: index ${a}, SQL ${s} for ${JSON.stringify(b)}`);
  }
  process.stdout.write(`bench:v2-count on ${rel.db}: ${runs} first pages per query and side, alternating; load average ${load()}\n\n`);
  process.stdout.write(`| query (first page of 100) | totalFound | index p50 ms | SQL p50 ms | ratio |\n|---|---|---|---|---|\n`);
  for (const [name, b] of BODIES) {
    const ix: number[] = [];
    const sql: number[] = [];
    let total = 0;
    for (let k = 0; k < runs; k++) {
      const [t, n] = await firstPage(withIndex.base, b);
      ix.push(t);
      total = n;
      sql.push((await firstPage(sqlOnly.base, b))[0]);
    }
    const [a, s] = [median(ix), median(sql)];
    process.stdout.write(`| ${name} | ${total.toLocaleString('en-US')} | ${a.toFixed(1)} | ${s.toFixed(1)} | ${(s / a).toFixed(2)}× |\n`);
  }
  process.stdout.write(`\nload average after: ${load()}\n`);
} finally {
  withIndex.proc.kill();
  sqlOnly.proc.kill();
}
