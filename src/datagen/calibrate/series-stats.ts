// Per-group distributions of series (instance counts, sizes, descriptions,
// equipment, SOP classes, transfer syntaxes, licenses, ...) computed in SQL
// over a real release, for the release profile.

import type { DuckDBConnection } from '@duckdb/node-api';
import { QUANTILE_P, type Quantiles, type SeriesProfile, type Weighted } from '../profile.ts';
import { query } from './release-views.ts';

const P_SQL = `[${QUANTILE_P.join(', ')}]`;

/** Round to 4 significant digits: the profile carries shapes, not exact values. */
export function sig(x: number): number {
  if (!Number.isFinite(x) || x === 0) return 0;
  return Number(x.toPrecision(4));
}

/** Mean of the piecewise-linear distribution through the quantile knots. */
export function knotMean(q: number[]): number {
  let m = 0;
  for (let i = 0; i + 1 < QUANTILE_P.length; i++) m += (QUANTILE_P[i + 1]! - QUANTILE_P[i]!) * (q[i]! + q[i + 1]!) / 2;
  return m;
}

export function quantiles(q: number[], realMean: number): Quantiles {
  const qs = q.map(sig);
  const m = knotMean(qs);
  return { q: qs, adj: m > 0 ? sig(realMean / m) : 1 };
}

const key = (row: Record<string, unknown>, keys: string[]) => keys.map((k) => String(row[k])).join('\u0001');

/** Top `k` values of `expr` per group with their share of the group's rows (NULL kept as a value). */
export async function topK<T>(conn: DuckDBConnection, rel: string, keys: string[], expr: string, k: number): Promise<Map<string, Weighted<T>>> {
  const ks = keys.join(', ');
  const rows = await query<Record<string, unknown> & { top: { v: T; n: number }[]; total: number }>(
    conn,
    `WITH t AS (SELECT ${ks}, ${expr} AS v, count(*)::DOUBLE AS n FROM ${rel} GROUP BY ALL)
     SELECT ${ks}, list({'v': v, 'n': n} ORDER BY n DESC, v NULLS LAST) AS top, sum(n) AS total FROM t GROUP BY ALL`,
  );
  const out = new Map<string, Weighted<T>>();
  for (const r of rows) out.set(key(r, keys), r.top.slice(0, k).map((x) => [x.v, sig(x.n / r.total)] as [T, number]));
  return out;
}

interface CoreRow {
  series: number;
  qi: number[];
  mi: number;
  qb: number[];
  mb: number;
  sdn: number;
}

/** SeriesProfile of every group of `rel` (a relation of index rows), keyed by the group's key values joined with U+0001. */
export async function seriesStats(conn: DuckDBConnection, rel: string, keys: string[]): Promise<Map<string, SeriesProfile>> {
  const ks = keys.join(', ');
  const core = await query<Record<string, unknown> & CoreRow>(
    conn,
    `SELECT ${ks}, count(*)::BIGINT AS series,
       quantile_cont(instanceCount, ${P_SQL}) AS qi, avg(instanceCount) AS mi,
       quantile_cont(series_size_MB / greatest(instanceCount, 1), ${P_SQL}) AS qb, avg(series_size_MB) AS mb,
       avg((SeriesDate IS NULL)::INTEGER) AS sdn
     FROM ${rel} GROUP BY ALL ORDER BY ALL`,
  );
  const [desc, equip, sop, ts, pi, pr, init, lic, body] = await Promise.all([
    topK<string | null>(conn, rel, keys, 'SeriesDescription', 12),
    topK<[string | null, string | null]>(conn, rel, keys, '[Manufacturer, ManufacturerModelName]', 5),
    topK<string>(conn, rel, keys, 'SOPClassUID', 3),
    topK<string | null>(conn, rel, keys, 'TransferSyntaxUID', 4),
    topK<string | null>(conn, rel, keys, 'PhotometricInterpretation', 3),
    topK<string | null>(conn, rel, keys, 'PixelRepresentation', 3),
    topK<number>(conn, rel, keys, 'series_init_idc_version', 6),
    topK<[string, string]>(conn, rel, keys, '[license_short_name, aws_bucket]', 4),
    topK<string | null>(conn, rel, keys, 'BodyPartExamined', 6),
  ]);
  const out = new Map<string, SeriesProfile>();
  for (const r of core) {
    const k = key(r, keys);
    const instances = quantiles(r.qi, r.mi);
    const nMean = r.mi;
    const b = quantiles(r.qb, 1);
    // Sizes are drawn per instance, independently of the count: scale them so
    // that mean count x mean size per instance equals the real mean series size.
    const bm = knotMean(b.q);
    out.set(k, {
      series: Number(r.series),
      instances,
      mb_per_instance: { q: b.q, adj: bm > 0 && nMean > 0 ? sig(r.mb / (nMean * bm)) : 1 },
      descriptions: desc.get(k) ?? [],
      equipment: equip.get(k) ?? [],
      sop: sop.get(k) ?? [],
      transfer_syntaxes: ts.get(k) ?? [],
      photometric: pi.get(k) ?? [],
      pixel_representation: pr.get(k) ?? [],
      series_date_null: sig(r.sdn),
      init_versions: (init.get(k) ?? []).map(([v, w]) => [Number(v), w]),
      licenses: lic.get(k) ?? [],
      body_parts: body.get(k) ?? [],
    });
  }
  return out;
}
