// What every generation step shares: the connection, the plan, and the SQL
// macros that turn keys into deterministic random draws (uniforms, weighted
// picks, quantile samples, identifiers). The same seed and key always give
// the same value, whatever the order rows are produced in.

import type { DuckDBConnection } from '@duckdb/node-api';
import { lit } from '../core/data/sql.ts';
import type { Plan } from './plan.ts';
import { QUANTILE_P, type Weighted } from './profile.ts';
import { TRANSFER_SYNTAX_NAMES } from './vocab.ts';

export interface GenContext {
  conn: DuckDBConnection;
  plan: Plan;
  seed: number;
  run: (sql: string) => Promise<void>;
}

/** Values and cumulative boundaries of a weighted list, for the wpick macro. */
export function weights<T>(w: Weighted<T>): { vals: T[]; cum: number[] } {
  const total = w.reduce((s, [, x]) => s + x, 0) || 1;
  let acc = 0;
  const cum: number[] = [];
  for (const [, x] of w.slice(0, -1)) {
    acc += x / total;
    cum.push(Math.round(acc * 1e9) / 1e9);
  }
  return { vals: w.map(([v]) => v), cum };
}

/** Piecewise-linear inverse CDF through the knots at QUANTILE_P. */
function qsampleSql(): string {
  const P = QUANTILE_P;
  const cases = P.slice(1, -1).map((p, i) => {
    const lo = P[i]!;
    return `WHEN u < ${p} THEN q[${i + 1}] + (q[${i + 2}] - q[${i + 1}]) * ((u - ${lo}) / ${p - lo})`;
  });
  const n = P.length;
  return `CASE ${cases.join(' ')} ELSE q[${n - 1}] + (q[${n}] - q[${n - 1}]) * ((u - ${P[n - 2]}) / ${1 - P[n - 2]!}) END`;
}

/** Macros shared by every generation step. `u` is a uniform draw in [0, 1) keyed by (key, salt). */
export function macros(seed: number): string[] {
  const S = String(seed);
  const tsMap = `MAP {${Object.entries(TRANSFER_SYNTAX_NAMES)
    .map(([k, v]) => `${lit(k)}: ${lit(v)}`)
    .join(', ')}}`;
  return [
    // hash() of several arguments combines them linearly, so draws with different
    // salts for one key would be correlated; hashing the result again mixes them.
    `CREATE MACRO u(k, salt) AS ((hash(hash(${S}, k, salt)) >> 11)::DOUBLE / 9007199254740992.0)`,
    `CREATE MACRO u2(k, j, salt) AS ((hash(hash(${S}, k, j, salt)) >> 11)::DOUBLE / 9007199254740992.0)`,
    `CREATE MACRO ui(k, salt, lo, hi) AS (lo + floor(u(k, salt) * (hi - lo + 1))::BIGINT)`,
    `CREATE MACRO gauss(k, salt) AS (sqrt(-2 * ln(1 - u(k, salt || ':a'))) * cos(2 * pi() * u(k, salt || ':b')))`,
    `CREATE MACRO pick(lst, k, salt) AS (lst[1 + floor(u(k, salt) * len(lst))::INTEGER])`,
    // A value of a weighted list: cum holds the cumulative boundaries (one fewer than vals).
    `CREATE MACRO wpick(vals, cum, uu) AS (vals[1 + len(list_filter(cum, lambda x: x <= uu))])`,
    `CREATE MACRO qsample(q, u) AS (${qsampleSql()})`,
    // Extra items beyond the first: geometric with ratio r (see geometricRatio in plan.ts), capped.
    `CREATE MACRO extra(r, cap, uu) AS (CASE WHEN r <= 0 OR cap <= 1 THEN 0 WHEN r >= 1 THEN cap - 1
       ELSE least(cap - 1, floor(ln(1 - uu) / ln(r)))::BIGINT END)`,
    // dN: N random decimal digits, the first never 0 (constants written out: computing them per row is slow).
    ...[17, 13, 10, 6, 1].map((n) => `CREATE MACRO d${n}(k, salt) AS ((${10n ** BigInt(n - 1)} + hash(hash(${S}, k, salt)) % ${9n * 10n ** BigInt(n - 1)})::VARCHAR)`),
    // A version-4 UUID from two hashes, formatted once (no substrings of a hex string per part).
    `CREATE MACRO h64(k, salt, part) AS hash(hash(${S}, k, salt, part))`,
    `CREATE MACRO uuid4(k, salt) AS printf('%08x-%04x-4%03x-%x%03x-%012x', h64(k, salt, 1) >> 32, (h64(k, salt, 1) >> 16) & 65535,
       h64(k, salt, 1) & 4095, 8 + (h64(k, salt, 2) >> 62), (h64(k, salt, 2) >> 48) & 4095, h64(k, salt, 2) & 281474976710655)`,
    // DICOM UIDs: digits and dots, at most 64 characters, no component with a
    // leading zero; \`typ\` and the index (11 digits, the first a 1) make them unique.
    `CREATE MACRO uid(style, c4a, c4b, typ, idx, k) AS CASE style
       WHEN 'nlst' THEN '1.2.840.113654.2.55.' || typ || (10000000000 + idx)::VARCHAR || d17(k, 'uid1') || d10(k, 'uid2')
       WHEN 'pixelmed' THEN '1.3.6.1.4.1.5962.99.1.' || typ || (10000000000 + idx)::VARCHAR || '.' || d13(k, 'uid3') || '.2.0'
       WHEN 'highdicom' THEN '1.2.826.0.1.3680043.10.511.3.' || typ || (10000000000 + idx)::VARCHAR || d17(k, 'uid1') || d6(k, 'uid2')
       ELSE '1.3.6.1.4.1.14519.5.2.1.' || c4a || '.' || c4b || '.' || typ || (10000000000 + idx)::VARCHAR || d17(k, 'uid1') || d1(k, 'uid2')
     END`,
    // Sizes of the instances of a series whose total is known, summing to it
    // exactly: slide pyramids shrink by four per level (level 0 takes the
    // rounding); other series share the total evenly, perturbed by a
    // telescoping (zero-sum) term.
    `CREATE MACRO pyr_w(n) AS ((1 - pow(0.25, n)) / 0.75)`,
    // Deep levels of long pyramids would round to nothing: a file is never smaller than 4 KB.
    `CREATE MACRO pyr_level(total, n, j) AS greatest(4096, floor(total * pow(0.25, j) / pyr_w(n)))::BIGINT`,
    `CREATE MACRO inst_size(k, j, n, total, pyramid) AS CASE
       WHEN pyramid AND j > 0 THEN pyr_level(total, n, j)
       WHEN pyramid THEN total - coalesce(list_sum(list_transform(range(1, n), lambda x: pyr_level(total, n, x))), 0)
       ELSE total // n + (j < total % n)::BIGINT
         + floor(0.02 * (total // n) * u2(k, j, 'isz'))::BIGINT - floor(0.02 * (total // n) * u2(k, (j + 1) % n, 'isz'))::BIGINT END`,
    // A PatientID from its template slots (see gen-dimensions.ts) and a number below the template's span.
    `CREATE MACRO pid_fmt(lits, divs, alphas, x) AS array_to_string(list_transform(range(len(lits)), lambda i:
       CASE WHEN alphas[i + 1] = '' THEN lits[i + 1] ELSE alphas[i + 1][1 + ((x // divs[i + 1]) % len(alphas[i + 1]))::INTEGER] END), '')`,
    `CREATE MACRO clampi(x, lo, hi) AS least(hi, greatest(lo, x))`,
    `CREATE MACRO ts_name(uids) AS array_to_string(list_sort(list_transform(string_split(uids, ','), lambda x: map_extract_value(${tsMap}, x))), ',')`,
  ];
}
