// SQL text helpers for the generator and the loader. These build literals from
// our own constants (catalog, plan), never from request input; request values
// are always bound as parameters by the engine.

export type Lit = string | number | boolean | null | undefined | Lit[];

export function lit(v: Lit): string {
  if (v === null || v === undefined) return 'NULL';
  if (Array.isArray(v)) return `[${v.map(lit).join(', ')}]`;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`non-finite literal ${v}`);
    return Number.isInteger(v) ? String(v) : v.toExponential(12).replace('e+', 'e');
  }
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  return `'${v.replaceAll("'", "''")}'`;
}

/** A typed VALUES table: CREATE TABLE name AS SELECT * FROM (VALUES ...) t(cols). */
export function valuesTable(name: string, columns: [string, string][], rows: Lit[][]): string {
  if (rows.length === 0) {
    return `CREATE OR REPLACE TABLE ${name} (${columns.map(([c, t]) => `${c} ${t}`).join(', ')})`;
  }
  const body = rows.map((r) => `(${r.map((v, i) => `${lit(v)}::${columns[i]![1]}`).join(', ')})`).join(',\n');
  return `CREATE OR REPLACE TABLE ${name} AS SELECT * FROM (VALUES ${body}) t(${columns.map(([c]) => c).join(', ')})`;
}

/** CASE expression choosing among values with weights, given a uniform draw expression in [0, 1). */
export function weightedCase(opts: [Lit, number][], uexpr: string): string {
  const total = opts.reduce((s, o) => s + o[1], 0);
  let acc = 0;
  const whens = opts.slice(0, -1).map(([v, w]) => {
    acc += w / total;
    return `WHEN ${uexpr} < ${lit(Math.round(acc * 1e6) / 1e6)} THEN ${lit(v)}`;
  });
  return `CASE ${whens.join(' ')} ELSE ${lit(opts[opts.length - 1]![0])} END`;
}
