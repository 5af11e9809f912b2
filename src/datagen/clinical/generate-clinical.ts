// Per-collection clinical tables, shaped like the public ones: every table has
// dicom_patient_id (the DICOM PatientID of a patient of that collection) and
// source_batch, the other columns are collection-specific and unharmonised,
// drawn from a pool of clinical concepts with real-world naming variants,
// types and code lists. A patient-level latent table (g_clin) keeps the values
// of one patient consistent across tables and with the imaging (sex, age).
// Row values are hash-based (SQL macros keyed on patient key and column name);
// table layouts are chosen in JS with a PRNG seeded from the plan seed, so the
// same seed and scale give byte-identical files.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { lit } from '../../core/data/sql.ts';
import { CODED_VALUE_STRUCT, TABLE_BY_NAME } from '../../core/registry/tables.ts';
import type { GenContext } from '../context.ts';
import { clinicalDataset, col, colCtx, type Codes, type ColumnSpec, type TableSpec } from './columns.ts';
import { ea1141Tables } from './ea1141.ts';
import { genericTable } from './generic.ts';
import { createLatent } from './latent.ts';
import { nlstTables } from './nlst.ts';
import { tcgaTable } from './tcga.ts';



function tableSpecs(ctx: GenContext): TableSpec[] {
  const specs: TableSpec[] = [];
  for (const c of ctx.plan.collections) {
    if (!(c.supporting_data ?? '').includes('Clinical')) continue;
    if (c.id === 'nlst') specs.push(...nlstTables(c));
    else if (c.id === 'ea1141') specs.push(...ea1141Tables(c));
    else specs.push(c.id.startsWith('tcga_') ? tcgaTable(c, `${c.id}_clinical`) : genericTable(c, `${c.id}_clinical`, ctx.seed));
  }
  return specs;
}

// ---------------------------------------------------------------------------

function structList(codes: Codes | undefined): string {
  if (!codes || codes.length === 0 || codes.length > 20) return `[]::${CODED_VALUE_STRUCT}[]`;
  return `[${codes.map(([k, v]) => `{'option_code': ${lit(k)}, 'option_description': ${lit(v)}::VARCHAR}`).join(', ')}]::${CODED_VALUE_STRUCT}[]`;
}

export async function generateClinical(ctx: GenContext, out: string): Promise<{ name: string; rows: number }[]> {
  const def = TABLE_BY_NAME.get('clinical_index')!;
  await ctx.run(`CREATE TABLE t_clinical_index (${def.columns.map((c) => `"${c.name}" ${c.duckdb}`).join(', ')})`);
  await createLatent(ctx);
  const specs = tableSpecs(ctx);
  const written: { name: string; rows: number }[] = [];
  const dict: string[] = [];
  for (const t of specs) {
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
    const select = columns.map((cs) => `(${cs.expr(colCtx(`${t.short}.${cs.name}`))})::${cs.type} AS "${cs.name}"`).join(',\n      ');
    const dir = join(out, 'clinical', t.short);
    await mkdir(dir, { recursive: true });
    const file = join(dir, '000000000000.parquet');
    await ctx.run(`COPY (SELECT ${select} FROM (${t.rows}) ORDER BY dicom_patient_id, rk) TO ${lit(file)} (FORMAT parquet, COMPRESSION zstd)`);
    const n = await ctx.conn.runAndReadAll(`SELECT count(*) FROM read_parquet(${lit(file)})`);
    written.push({ name: t.short, rows: Number(n.getRows()[0]![0]) });
    columns.forEach((cs, i) => {
      dict.push(`(${lit(t.coll.id)}, ${lit(`${clinicalDataset(ctx.plan.currentVersion)}.${t.short}`)}, ${lit(t.short)}, ${lit(cs.name)}, ${lit(cs.label)}, ${structList(cs.codes)}, ${i})`);
    });
  }
  if (dict.length) {
    await ctx.run(`INSERT INTO t_clinical_index
      SELECT collection_id, table_name, short_table_name, "column", column_label, "values" FROM (VALUES ${dict.join(',\n')})
        t(collection_id, table_name, short_table_name, "column", column_label, "values", pos)
      ORDER BY collection_id, short_table_name, pos`);
  }
  return written;
}
