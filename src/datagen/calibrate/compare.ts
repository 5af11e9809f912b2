// `idqs data compare`: the calibration distributions of a real release and of
// a generated dataset, side by side (counts of the generated one divided by
// its scale), so drift shows when a new release comes out.

import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { distributions, type Distributions } from './distributions.ts';
import { openRelease } from './release-folder.ts';

export { checkReleasePath } from './release-folder.ts';
import { attachRelease } from './release-views.ts';

async function measure(dir: string): Promise<Distributions> {
  const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '2GB' });
  const conn = await db.connect();
  try {
    await attachRelease(conn, dir);
    return await distributions(conn);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

export interface Comparison {
  real: { source: string; distributions: Distributions };
  ours: { source: string; scale: number; distributions: Distributions };
}

export async function compare(opts: { real: string; ours: string }): Promise<Comparison> {
  if (!existsSync(join(opts.ours, 'idc_index.parquet'))) throw new Error(`${opts.ours} has no idc_index.parquet: give a dataset folder (idqs data generate --out DIR)`);
  const manifest = existsSync(join(opts.ours, 'dataset.json'))
    ? (JSON.parse(readFileSync(join(opts.ours, 'dataset.json'), 'utf8')) as { generator?: { scale: number } })
    : {};
  const release = await openRelease(opts.real);
  try {
    const real = await measure(release.dir);
    const ours = await measure(opts.ours);
    return { real: { source: release.source, distributions: real }, ours: { source: opts.ours, scale: manifest.generator?.scale ?? 1, distributions: ours } };
  } finally {
    await release.close();
  }
}

const pct = (x: number | undefined) => (x === undefined ? '-' : `${(100 * x).toFixed(2)}%`);
const num = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2));
const ratio = (a: number | undefined, b: number | undefined) => (a && b !== undefined ? (b / a).toFixed(2) : '-');

function table(title: string, head: string[], rows: string[][]): string {
  const all = [head, ...rows];
  const w = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => '  ' + r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  return [title, line(head), ...rows.map(line)].join('\n');
}

/** Shares of two distributions over the union of their keys, the real one's largest first. */
function shareRows(real: Record<string, number>, ours: Record<string, number>, limit = 25): string[][] {
  const keys = [...new Set([...Object.keys(real), ...Object.keys(ours)])].sort((a, b) => (real[b] ?? 0) - (real[a] ?? 0) || (ours[b] ?? 0) - (ours[a] ?? 0));
  return keys.slice(0, limit).map((k) => [k, pct(real[k]), pct(ours[k]), ratio(real[k], ours[k])]);
}

export function formatComparison(c: Comparison): string {
  const r = c.real.distributions;
  const o = c.ours.distributions;
  const s = c.ours.scale;
  const out: string[] = [`real: ${c.real.source}`, `ours: ${c.ours.source} (scale ${s}; counts divided by the scale)`, ''];
  const scaled = new Set(['patients', 'studies', 'series', 'instances', 'size_TB']);
  out.push(
    table('Totals', ['', 'real', 'ours', 'ours/scale', 'ratio'], Object.keys(r.totals).map((k) => {
      const ov = o.totals[k];
      const os = ov === undefined ? undefined : scaled.has(k) ? ov / s : ov;
      return [k, num(r.totals[k]), num(ov), num(os), ratio(r.totals[k], os)];
    })),
  );
  const mods = [...new Set([...Object.keys(r.modalities), ...Object.keys(o.modalities)])].sort((a, b) => (r.modalities[b]?.series ?? 0) - (r.modalities[a]?.series ?? 0));
  out.push(
    '',
    table(
      'Modalities: share of series, share of bytes, median instances and MB per series (real / ours)',
      ['', 'series', '', 'bytes', '', 'instances', '', 'MB', ''],
      mods.map((m) => {
        const a = r.modalities[m];
        const b = o.modalities[m];
        return [m, pct(a?.series), pct(b?.series), pct(a?.bytes), pct(b?.bytes), num(a?.med_instances), num(b?.med_instances), num(a?.med_mb), num(b?.med_mb)];
      }),
    ),
  );
  out.push('', table('Licenses and buckets (share of series)', ['', 'real', 'ours', 'ratio'], shareRows(r.licenses, o.licenses)));
  out.push('', table('NULL share per index column', ['', 'real', 'ours', 'ratio'], Object.keys(r.nulls).map((k) => [k, pct(r.nulls[k]), pct(o.nulls[k]), ratio(r.nulls[k], o.nulls[k])])));
  out.push('', table('StudyDate years (2nd, 25th, 50th, 75th, 98th percentile)', ['', 'p2', 'p25', 'p50', 'p75', 'p98'], [
    ['real', ...r.study_years.map(String)], ['ours', ...o.study_years.map(String)],
  ]));
  out.push('', table('BodyPartExamined (share of series, top 15)', ['', 'real', 'ours', 'ratio'], shareRows(r.body_parts, o.body_parts, 15)));
  out.push('', table('series_init_idc_version (share of series)', ['', 'real', 'ours', 'ratio'], shareRows(r.init_versions, o.init_versions, 30)));
  out.push('', table('Studies', ['', 'real', 'ours'], [
    ['series per study', num(r.study.series_per_study), num(o.study.series_per_study)],
    ['studies per patient', num(r.study.studies_per_patient), num(o.study.studies_per_patient)],
    ['share of derived series', pct(r.study.derived_share), pct(o.study.derived_share)],
  ]));
  const colls = Object.keys(r.collections).sort((a, b) => r.collections[b]!.series - r.collections[a]!.series);
  const missing = colls.filter((k) => !o.collections[k]);
  const extra = Object.keys(o.collections).filter((k) => !r.collections[k]);
  out.push(
    '',
    table(
      'Collections by series (top 25; ours divided by the scale)',
      ['', 'patients', '', 'studies', '', 'series', '', 'ratio'],
      colls.slice(0, 25).map((k) => {
        const a = r.collections[k]!;
        const b = o.collections[k];
        return [k, num(a.patients), num(b && b.patients / s), num(a.studies), num(b && b.studies / s), num(a.series), num(b && b.series / s), ratio(a.series, b && b.series / s)];
      }),
    ),
    `  collections only in the real release: ${missing.length ? missing.join(', ') : 'none'}`,
    `  collections only in ours: ${extra.length ? extra.join(', ') : 'none'}`,
  );
  return out.join('\n') + '\n';
}
