// TCGA collections: GDC-style clinical tables.

import { lit } from '../../core/data/sql.ts';
import type { PlannedCollection } from '../plan.ts';
import { codesOf, col, histIndex, lookup, patientRows, type ColumnSpec, type TableSpec } from './columns.ts';
import { staged } from './concepts.ts';
import { HISTOLOGY, kindOf } from './kinds.ts';


export function tcgaTable(c: PlannedCollection, short: string): TableSpec {
  const k = kindOf(c);
  const project = `TCGA-${c.id.slice(5).toUpperCase()}`;
  const hist = HISTOLOGY[k].length ? HISTOLOGY[k] : HISTOLOGY.other;
  const columns: ColumnSpec[] = [
    col('case_submitter_id', 'Case submitter identifier', 'VARCHAR', 'PatientID'),
    col('project_id', 'GDC project', 'VARCHAR', lit(project), [[project, c.name]]),
    col('age_at_index', 'Age at index date (years)', 'BIGINT', 'age_dx'),
    col('days_to_birth', 'Days from birth to the index date (negative)', 'BIGINT', (x) => `-(age_dx * 365.25 + floor(${x.u()} * 365))::BIGINT`),
    col('gender', 'Gender', 'VARCHAR', lookup('sex_i', ['male', 'female', 'unknown', 'not reported']), codesOf(['male', 'female', 'unknown', 'not reported'])),
    col('race', 'Race', 'VARCHAR', lookup('race_i', ['white', 'black or african american', 'asian', 'american indian or alaska native', 'native hawaiian or other pacific islander', 'not reported', 'not reported']),
      codesOf(['white', 'black or african american', 'asian', 'american indian or alaska native', 'native hawaiian or other pacific islander', 'not reported'])),
    col('ethnicity', 'Ethnicity', 'VARCHAR', lookup('eth_i', ['not hispanic or latino', 'hispanic or latino', 'not reported']), codesOf(['not hispanic or latino', 'hispanic or latino', 'not reported'])),
    col('vital_status', 'Vital status', 'VARCHAR', lookup('vital_i', ['Alive', 'Dead']), codesOf(['Alive', 'Dead'])),
    col('days_to_death', 'Days from diagnosis to death', 'BIGINT', 'CASE WHEN vital_i = 2 THEN fu_days END'),
    col('days_to_last_follow_up', 'Days from diagnosis to last follow-up', 'BIGINT', 'CASE WHEN vital_i = 1 THEN fu_days END'),
    col('year_of_diagnosis', 'Year of diagnosis', 'BIGINT', 'dx_year::BIGINT'),
    col('primary_diagnosis', 'Primary diagnosis', 'VARCHAR', lookup(histIndex(hist.length), hist.map((h) => h[1])), codesOf(hist.map((h) => h[1]))),
    col('morphology', 'Morphology (ICD-O-3)', 'VARCHAR', lookup(histIndex(hist.length), hist.map((h) => h[0])), codesOf(hist.map((h) => h[0]), hist.map((h) => h[1]))),
    col('tissue_or_organ_of_origin', 'Tissue or organ of origin', 'VARCHAR', lit(`${c.tumor_locations ?? 'Other'}, NOS`)),
  ];
  if (staged(k) && k !== 'prostate' && k !== 'gyn') {
    const st = ['Stage IA', 'Stage IB', 'Stage IIA', 'Stage IIB', 'Stage IIIA', 'Stage IIIB', 'Stage IV', null];
    columns.push(
      col('ajcc_pathologic_stage', 'AJCC pathologic stage', 'VARCHAR', lookup('stage_i', st), codesOf(st)),
      col('ajcc_pathologic_t', 'AJCC pathologic T', 'VARCHAR', lookup('t_i', ['T1', 'T2', 'T3', 'T4', 'TX']), codesOf(['T1', 'T2', 'T3', 'T4', 'TX'])),
      col('ajcc_pathologic_n', 'AJCC pathologic N', 'VARCHAR', lookup('n_i', ['N0', 'N1', 'N2', 'N3', 'NX']), codesOf(['N0', 'N1', 'N2', 'N3', 'NX'])),
      col('ajcc_pathologic_m', 'AJCC pathologic M', 'VARCHAR', lookup('m_i', ['M0', 'M1', 'MX']), codesOf(['M0', 'M1', 'MX'])),
    );
  }
  if (k === 'lung' || k === 'headneck') {
    const tob = ['Lifelong Non-Smoker', 'Current Reformed Smoker for > 15 yrs', 'Current Smoker', 'Unknown'];
    columns.push(
      col('tobacco_smoking_status', 'Tobacco smoking status', 'VARCHAR', lookup('smoke_i', tob), codesOf(tob)),
      col('pack_years_smoked', 'Pack years smoked', 'DOUBLE', 'pack_years'),
    );
  }
  columns.push(col('prior_malignancy', 'Prior malignancy', 'VARCHAR', lookup('prior_i', ['yes', 'no']), codesOf(['yes', 'no'])));
  return { coll: c, short, rows: patientRows(c, short, 0.97), columns };
}

/** Every clinical table of the plan, in a stable order. */
