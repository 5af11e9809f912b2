// Writes every clinical table (clinical/<table>/*.parquet) and their dictionary
// (clinical_index): every table starts with dicom_patient_id and source_batch;
// its other columns come from nlst.ts, ea1141.ts, real-schema.ts or generic.ts.
// Values are keyed on the patient and the column, with a patient-level latent
// table (g_clin) keeping one patient consistent across tables and with the
// imaging, so the same seed and scale give byte-identical files.

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lit } from '../../core/data/sql.ts';
import { CODED_VALUE_STRUCT, TABLE_BY_NAME } from '../../core/registry/tables.ts';
import type { GenContext } from '../context.ts';
import { clinicalDataset, col, colCtx, type Codes, type ColumnSpec, type Slot, type TableSpec } from './columns.ts';
import { ea1141Tables } from './ea1141.ts';
import { genericTable } from './generic.ts';
import { createLatent } from './latent.ts';
import { nlstTables } from './nlst.ts';
import { clinicalSchema, realSchemaTable } from './real-schema.ts';
import { tcgaColumns } from './tcga.ts';



/**
 * Every clinical table of the plan, in a stable order: NLST and EA1141 as
 * their source files are laid out, the tables of the public clinical dataset
 * with their real columns, and a generic table for the other collections
 * that say they have clinical data.
 */
function tableSpecs(ctx: GenContext): TableSpec[] {
  const real = new Map<string, [string, [string, string][]][]>();
  for (const [short, t] of Object.entries(clinicalSchema().tables)) real.set(t.collection_id, [...(real.get(t.collection_id) ?? []), [short, t.columns]]);
  const specs: TableSpec[] = [];
  for (const c of ctx.plan.collections) {
    if (c.id === 'nlst') specs.push(...nlstTables(c));
    else if (c.id === 'ea1141') specs.push(...ea1141Tables(c));
    else if (real.has(c.id)) {
      const fixed = c.id.startsWith('tcga_') ? tcgaColumns(c) : {};
      for (const [short, columns] of real.get(c.id)!) specs.push(realSchemaTable(c, short, columns, fixed));
    } else if ((c.supporting_data ?? '').includes('Clinical')) specs.push(genericTable(c, `${c.id}_clinical`, ctx.seed));
  }
  return specs;
}

// ---------------------------------------------------------------------------

/** Descriptors of a table's slot columns (see Slot in columns.ts), as rows of the clin_slots table. */
function slotDescriptors(t: TableSpec, slots: Slot[]): object[] {
  return slots.map((sl, i) => ({ kind: sl.kind, codes: sl.codes ?? [], lo: sl.lo ?? 0, hi: sl.hi ?? 0, base: sl.base ?? 1, miss: sl.miss, s: hashOf(`${t.short}#${i}`) }));
}

/** The values of a table's slot columns, one VARCHAR list per row, from its descriptors in clin_slots (a table, not literals: they bind slowly); rk keys the draws. */
const SLOT_VALUES = `list_transform(d.descs, lambda x: CASE WHEN u(rk, x.s + 1) < x.miss THEN NULL ELSE CASE x.kind
    WHEN 'code' THEN x.codes[1 + floor(pow(u(rk, x.s), 1.4) * len(x.codes))::INTEGER]
    WHEN 'int' THEN floor(pow(u(rk, x.s), 1.3) * (x.hi + 1))::BIGINT::VARCHAR
    WHEN 'range' THEN (x.lo + floor(u(rk, x.s) * (x.hi - x.lo + 1)))::BIGINT::VARCHAR
    WHEN 'float' THEN round(x.base * exp(0.5 * sqrt(-2 * ln(1 - u(rk, x.s))) * cos(2 * pi() * u(rk, x.s + 2))), 2)::VARCHAR
    ELSE (u(rk, x.s) < 0.3)::VARCHAR END END)`;

function hashOf(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h % 1000000007;
}

/** Coded values of a column as clinical_index lists them: none when there are more than 20. */
function codeList(codes: Codes | undefined): { option_code: string; option_description: string | null }[] {
  if (!codes || codes.length > 20) return [];
  return codes.map(([k, v]) => ({ option_code: k, option_description: v }));
}

export async function generateClinical(ctx: GenContext, out: string): Promise<{ name: string; rows: number }[]> {
  const def = TABLE_BY_NAME.get('clinical_index')!;
  await ctx.run(`CREATE TABLE t_clinical_index (${def.columns.map((c) => `"${c.name}" ${c.duckdb}`).join(', ')})`);
  await createLatent(ctx);
  const specs = tableSpecs(ctx);
  const written: { name: string; rows: number }[] = [];
  const dict: object[] = [];
  const slotRows: { t: number; descs: object[] }[] = [];
  const jobs = specs.map((t, ti) => {
    const columns: ColumnSpec[] = [
      col('dicom_patient_id', 'DICOM PatientID of the patient (joins to index.PatientID)', 'VARCHAR', 'PatientID'),
      col('source_batch', 'Source batch of the record', 'BIGINT', '0'),
      ...t.columns,
    ];
    const lower = new Set<string>();
    for (const cs of columns) {
      if (lower.has(cs.name.toLowerCase())) throw new Error(`duplicate column ${cs.name} in ${t.short}`);
      lower.add(cs.name.toLowerCase());
    }
    columns.forEach((cs, i) => {
      dict.push({
        collection_id: t.coll.id, table_name: `${clinicalDataset(ctx.plan.currentVersion)}.${t.short}`, short_table_name: t.short,
        column: cs.name, column_label: cs.label, values: codeList(cs.codes), pos: i,
      });
    });
    const slots = columns.filter((cs) => cs.slot).map((cs) => cs.slot!);
    let k = 0;
    const select = columns
      .map((cs) => (cs.slot ? `__v[${++k}]::${cs.type} AS "${cs.name}"` : `(${cs.expr(colCtx(`${t.short}.${cs.name}`))})::${cs.type} AS "${cs.name}"`))
      .join(',\n      ');
    if (slots.length) slotRows.push({ t: ti, descs: slotDescriptors(t, slots) });
    const from = slots.length ? `(SELECT r.*, ${SLOT_VALUES} AS __v FROM (${t.rows}) r, (SELECT descs FROM clin_slots WHERE t = ${ti}) d)` : `(${t.rows})`;
    return { ti, t, select, from };
  });
  const slotFile = join(out, 'clinical-slots.ndjson');
  await writeFile(slotFile, slotRows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  try {
    await ctx.run(`CREATE TEMP TABLE clin_slots AS SELECT * FROM read_json(${lit(slotFile)}, format = 'newline_delimited', columns = {t: 'INTEGER',
      descs: 'STRUCT(kind VARCHAR, codes VARCHAR[], lo BIGINT, hi BIGINT, base DOUBLE, miss DOUBLE, s BIGINT)[]'})`);
  } finally {
    await rm(slotFile, { force: true });
  }
  const counts: number[] = [];
  for (const { ti, t, select, from } of jobs) {
    const dir = join(out, 'clinical', t.short);
    await mkdir(dir, { recursive: true });
    const file = join(dir, '000000000000.parquet');
    const n = await ctx.conn.runAndReadAll(`COPY (SELECT ${select} FROM ${from} ORDER BY dicom_patient_id, rk) TO ${lit(file)} (FORMAT parquet, COMPRESSION zstd)`);
    counts[ti] = Number(n.getRows()[0]![0]);
  }
  specs.forEach((t, ti) => written.push({ name: t.short, rows: counts[ti]! }));
  // The dictionary goes through a JSON file: as SQL literals, thousands of structs bind slowly.
  const dictFile = join(out, 'clinical-dictionary.ndjson');
  await writeFile(dictFile, dict.map((d) => JSON.stringify(d)).join('\n') + '\n');
  try {
    await ctx.run(`INSERT INTO t_clinical_index SELECT collection_id, table_name, short_table_name, "column", column_label, "values"
      FROM read_json(${lit(dictFile)}, format = 'newline_delimited', columns = {collection_id: 'VARCHAR', table_name: 'VARCHAR',
        short_table_name: 'VARCHAR', "column": 'VARCHAR', column_label: 'VARCHAR', "values": '${CODED_VALUE_STRUCT}[]', pos: 'INTEGER'})
      ORDER BY collection_id, short_table_name, pos`);
  } finally {
    await rm(dictFile, { force: true });
  }
  return written;
}
