// Placeholder until the clinical generator lands: an empty dictionary.
import type { GenContext } from './generate.ts';
import { TABLE_BY_NAME } from '../registry/tables.ts';

export async function generateClinical(ctx: GenContext, _out: string): Promise<{ name: string; rows: number }[]> {
  const cols = TABLE_BY_NAME.get('clinical_index')!.columns.map((c) => `"${c.name}" ${c.duckdb}`).join(', ');
  await ctx.run(`CREATE TABLE t_clinical_index (${cols})`);
  return [];
}
