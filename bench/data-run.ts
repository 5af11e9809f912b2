// One data benchmark run in its own process (so peak memory is its own):
// generate a dataset at a scale, build the database, print JSON figures.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../src/core/data/build.ts';
import { generate } from '../src/datagen/generate.ts';

const scale = Number(process.argv[2]);
const instances = process.argv[3] === 'instances';
const dir = mkdtempSync(join(process.env.IDQS_BENCH_DIR ?? tmpdir(), 'idqs-bench-'));
try {
  const t0 = performance.now();
  const m = await generate({ scale, seed: 42, out: join(dir, 'data'), instances });
  const t1 = performance.now();
  const r = await build({ from: join(dir, 'data'), db: join(dir, 'bench.duckdb') });
  const t2 = performance.now();
  const seriesRows = Object.entries(m.row_counts)
    .filter(([k]) => !k.startsWith('v2.'))
    .reduce((s, [, v]) => s + v, 0);
  const instanceRows = m.row_counts['v2.dicom_pivot'] ?? 0;
  process.stdout.write(
    JSON.stringify({
      scale,
      instances,
      series: m.totals?.series,
      total_instances: m.totals?.instances,
      size_TB: m.totals?.size_TB,
      collections: m.totals?.collections,
      patients: m.totals?.patients,
      studies: m.totals?.studies,
      analysis_results: m.row_counts.analysis_results_index,
      sm_series: m.row_counts.sm_index,
      series_level_rows: seriesRows,
      instance_rows: instanceRows,
      generate_s: (t1 - t0) / 1000,
      build_s: (t2 - t1) / 1000,
      rows_per_s: Math.round((seriesRows + instanceRows) / ((t2 - t0) / 1000)),
      db_MB: statSync(join(dir, 'bench.duckdb')).size / 1e6,
      tables: r.tables.length,
      peak_rss_MB: process.resourceUsage().maxRSS / 1024,
    }) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
