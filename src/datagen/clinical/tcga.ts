// TCGA clinical tables: the ISB-CGC style columns of the public tcga_*_clinical
// tables whose values follow conventions (barcodes, project codes, upper-case
// vocabularies), consistent with the /v2 TCGA tables and the imaging.

import { lit } from '../../core/data/sql.ts';
import type { PlannedCollection } from '../plan.ts';
import { codesOf, col, histIndex, lookup, type ColumnSpec } from './columns.ts';
import { HISTOLOGY, kindOf } from './kinds.ts';

/** Columns of a TCGA table rendered by convention rather than by concept, by column name. */
export function tcgaColumns(c: PlannedCollection): Record<string, ColumnSpec> {
  const code = c.id.slice(5).toUpperCase();
  const k = kindOf(c);
  const hist = HISTOLOGY[k].length ? HISTOLOGY[k] : HISTOLOGY.other;
  const specs: ColumnSpec[] = [
    col('case_barcode', 'TCGA case barcode', 'VARCHAR', 'PatientID'),
    col('case_gdc_id', 'GDC case identifier', 'VARCHAR', `uuid4(pkey, 'gdc_case')`),
    col('program_name', 'Program', 'VARCHAR', `'TCGA'`, [['TCGA', 'The Cancer Genome Atlas']]),
    col('disease_code', 'TCGA disease code', 'VARCHAR', lit(code), [[code, c.cancer_types]]),
    col('project_short_name', 'Project', 'VARCHAR', lit(`TCGA-${code}`), [[`TCGA-${code}`, c.name]]),
    col('gender', 'Gender', 'VARCHAR', lookup('sex_i', ['MALE', 'FEMALE', null, null]), codesOf(['MALE', 'FEMALE'])),
    col('race', 'Race', 'VARCHAR', lookup('race_i', ['WHITE', 'BLACK OR AFRICAN AMERICAN', 'ASIAN', 'AMERICAN INDIAN OR ALASKA NATIVE', 'NATIVE HAWAIIAN OR OTHER PACIFIC ISLANDER', null, null]),
      codesOf(['WHITE', 'BLACK OR AFRICAN AMERICAN', 'ASIAN', 'AMERICAN INDIAN OR ALASKA NATIVE', 'NATIVE HAWAIIAN OR OTHER PACIFIC ISLANDER'])),
    col('ethnicity', 'Ethnicity', 'VARCHAR', lookup('eth_i', ['NOT HISPANIC OR LATINO', 'HISPANIC OR LATINO', null]), codesOf(['NOT HISPANIC OR LATINO', 'HISPANIC OR LATINO'])),
    col('vital_status', 'Vital status', 'VARCHAR', lookup('vital_i', ['Alive', 'Dead']), codesOf(['Alive', 'Dead'])),
    col('age_at_diagnosis', 'Age at diagnosis (years)', 'BIGINT', 'age_dx::BIGINT'),
    col('days_to_birth', 'Days from birth to diagnosis (negative)', 'BIGINT', (x) => `-(age_dx * 365.25 + floor(${x.u()} * 365))::BIGINT`),
    col('days_to_death', 'Days from diagnosis to death', 'BIGINT', 'CASE WHEN vital_i = 2 THEN fu_days END'),
    col('days_to_last_followup', 'Days from diagnosis to last follow-up', 'BIGINT', 'CASE WHEN vital_i = 1 THEN fu_days END'),
    col('histological_type', 'Histological type', 'VARCHAR', lookup(histIndex(hist.length), hist.map((h) => h[1])), codesOf(hist.map((h) => h[1]))),
    col('icd_o_3_histology', 'ICD-O-3 histology', 'VARCHAR', lookup(histIndex(hist.length), hist.map((h) => h[0])), codesOf(hist.map((h) => h[0]), hist.map((h) => h[1]))),
    col('year_of_initial_pathologic_diagnosis', 'Year of initial pathologic diagnosis', 'BIGINT', 'dx_year::BIGINT'),
  ];
  return Object.fromEntries(specs.map((s) => [s.name, s]));
}
