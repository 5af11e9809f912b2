// npm run bench:data — generation and build speed, database size and peak
// memory: the default scale (0.03, everything), scale 1.0 (series-level
// tables) and the instance-level table at scale 0.2, and how far scale 1.0
// lands from the real release the generator is calibrated on. Each run is a
// separate process. Targets: scale 1.0 series-level generate+build < 60 s,
// peak < 4 GB, totals within 5% of the real release.
// Pass scales to run a subset, e.g. `npm run bench:data -- 0.03`.

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadProfile } from '../src/datagen/profile.ts';

const runs: [number, boolean][] = [
  [0.03, true],
  [1.0, false],
  [0.2, true],
];
const only = process.argv.slice(2).map(Number);
const script = fileURLToPath(new URL('./data-run.ts', import.meta.url));
const results: Record<string, unknown>[] = [];
for (const [scale, instances] of runs) {
  if (only.length && !only.includes(scale)) continue;
  process.stderr.write(`scale ${scale}${instances ? ' with instance table' : ' series-level'} ...\n`);
  const out = execFileSync(process.execPath, ['--import', 'tsx', script, String(scale), instances ? 'instances' : 'series'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  results.push(JSON.parse(out.trim().split('\n').pop()!));
}
const fmt = (v: unknown) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(2)) : String(v));
const cols = ['scale', 'instances', 'series', 'instance_rows', 'size_TB', 'generate_s', 'build_s', 'rows_per_s', 'db_MB', 'peak_rss_MB'];
console.log(`| ${cols.join(' | ')} |`);
console.log(`|${cols.map(() => '---').join('|')}|`);
for (const r of results) console.log(`| ${cols.map((c) => fmt(r[c])).join(' | ')} |`);
const big = results.find((r) => r.scale === 1 && r.instances === false);
if (big) {
  const total = (big.generate_s as number) + (big.build_s as number);
  console.log(`\nscale 1.0 series-level: ${total.toFixed(1)} s (target < 60 s), peak ${(big.peak_rss_MB as number).toFixed(0)} MB (target < 4096 MB)`);
  const p = loadProfile();
  const real: Record<string, number> = {
    collections: p.totals.collections, analysis_results: p.totals.analysis_results, patients: p.totals.patients, studies: p.totals.studies,
    series: p.totals.series, total_instances: p.totals.instances, size_TB: p.totals.size_TB,
  };
  console.log(`\nscale 1.0 against the real release (${p.provenance.source}; target: within 5%)`);
  console.log('| total | real | generated | difference |');
  console.log('|---|---|---|---|');
  for (const [k, v] of Object.entries(real)) {
    const g = big[k] as number;
    console.log(`| ${k} | ${fmt(v)} | ${fmt(g)} | ${(((g - v) / v) * 100).toFixed(2)}% |`);
  }
}
