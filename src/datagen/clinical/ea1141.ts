// EA1141 (abbreviated breast MRI vs tomosynthesis screening trial): seven tables,
// per patient or per screening round, as the trial's data files are laid out.

import { lit, weightedCase } from '../../core/data/sql.ts';
import type { PlannedCollection } from '../plan.ts';
import { col, lookup, patientRows, wcol, type ColCtx, type Codes, type TableSpec } from './columns.ts';


export function ea1141Tables(c: PlannedCollection): TableSpec[] {
  const base = `FROM g_clin p WHERE p.idx = ${c.idx}`;
  const rounds = (short: string) =>
    `SELECT p.*, p.pkey * 4 + rd AS rk, rd AS r ${base.replace('FROM g_clin p', 'FROM g_clin p CROSS JOIN range(1, 3) t(rd)')}
      AND (rd = 1 OR p.prank = 1 OR u(p.pkey * 4 + rd, ${lit(`${short}:drop`)}) > 0.15)`;
  const BIRADS: Codes = [['0', 'Incomplete - need additional imaging evaluation'], ['1', 'Negative'], ['2', 'Benign'], ['3', 'Probably benign'], ['4', 'Suspicious'], ['5', 'Highly suggestive of malignancy']];
  const birads = (x: ColCtx) => weightedCase([['1', 62], ['2', 22], ['3', 7], ['4', 5], ['0', 3], ['5', 1]], x.u());
  const YNU: Codes = [['Y', 'Yes'], ['N', 'No'], ['U', 'Unknown']];
  const daysCol = col('days_from_registration', 'Days from registration to the exam', 'BIGINT', (x) => `(365 * (r - 1) + ${x.ui('d', 0, 60)})::BIGINT`);
  const status = (short: string, months: number): TableSpec => ({
    coll: c,
    short,
    rows: patientRows(c, short, months === 6 ? 0.93 : 0.88),
    columns: [
      col('days_from_registration', 'Days from registration to the status report', 'BIGINT', (x) => `(${months * 30} + ${x.ui('d', 0, 45)})::BIGINT`),
      col('vital_status', 'Vital status', 'VARCHAR', `CASE WHEN vital_i = 2 AND fu_days < ${months * 30} THEN '2' ELSE '1' END`, [['1', 'Alive'], ['2', 'Dead']]),
      col('breast_cancer_dx', 'Breast cancer diagnosed since registration', 'VARCHAR', (x) => weightedCase([['N', 96], ['Y', 2], ['U', 2]], x.u()), YNU),
      wcol('off_study', 'Off study', [['N', 'No', 94], ['Y', 'Yes', 6]]),
      col('off_study_reason', 'Reason off study', 'VARCHAR', (x) => `CASE WHEN ${x.u()} < 0.06 THEN ${weightedCase([['2', 40], ['3', 40], ['4', 20]], x.u('r'))} ELSE '.N' END`, [
        ['1', 'Completed study'], ['2', 'Withdrew consent'], ['3', 'Lost to follow-up'], ['4', 'Other'], ['.N', 'Not applicable'],
      ]),
    ],
  });
  return [
    {
      coll: c,
      short: 'ea1141_demographics',
      rows: patientRows(c, 'ea1141_demographics', 1),
      columns: [
        col('age_at_registration', 'Age at registration (years)', 'BIGINT', 'age_base::BIGINT'),
        col('race', 'Race', 'VARCHAR', lookup('race_i', ['01', '03', '05', '06', '04', '98', '99']), [
          ['01', 'White'], ['03', 'Black or African American'], ['04', 'Native Hawaiian or Other Pacific Islander'], ['05', 'Asian'],
          ['06', 'American Indian or Alaska Native'], ['98', 'More than one race'], ['99', 'Unknown'],
        ]),
        col('ethnicity', 'Ethnicity', 'VARCHAR', lookup('eth_i', ['2', '1', '9']), [['1', 'Hispanic or Latino'], ['2', 'Not Hispanic or Latino'], ['9', 'Unknown']]),
        col('menopausal_status', 'Menopausal status', 'VARCHAR', lookup('meno_i', ['1', '3', '2']), [['1', 'Pre-menopausal'], ['2', 'Post-menopausal'], ['3', 'Peri-menopausal'], ['9', 'Unknown']]),
        col('bmi', 'Body mass index (kg/m2)', 'DOUBLE', 'bmi'),
        wcol('education', 'Highest level of education', [['1', 'Less than high school', 4], ['2', 'High school graduate', 18], ['3', 'Some college', 25], ['4', 'College graduate', 30], ['5', 'Post-graduate', 20], ['9', 'Unknown', 3]]),
        wcol('family_hx_breast_cancer', 'Family history of breast cancer', [['Y', 'Yes', 30], ['N', 'No', 65], ['U', 'Unknown', 5]]),
        wcol('prior_breast_biopsy', 'Prior breast biopsy', [['Y', 'Yes', 20], ['N', 'No', 80]]),
        wcol('breast_density', 'Breast density at enrollment (BI-RADS)', [['C', 'Heterogeneously dense', 80], ['D', 'Extremely dense', 20]]),
      ],
    },
    {
      coll: c,
      short: 'ea1141_mri',
      rows: rounds('ea1141_mri'),
      columns: [
        col('exam_round', 'Screening round', 'BIGINT', 'r::BIGINT'),
        daysCol,
        col('mri_birads', 'Abbreviated MRI BI-RADS assessment', 'VARCHAR', birads, BIRADS),
        wcol('bpe', 'Background parenchymal enhancement', [['1', 'Minimal', 45], ['2', 'Mild', 35], ['3', 'Moderate', 15], ['4', 'Marked', 5]]),
        wcol('fgt', 'Amount of fibroglandular tissue', [['A', 'Almost entirely fat', 2], ['B', 'Scattered fibroglandular tissue', 13], ['C', 'Heterogeneous fibroglandular tissue', 65], ['D', 'Extreme fibroglandular tissue', 20]]),
        col('lesion_count', 'Number of reported lesions', 'BIGINT', (x) => `floor(pow(${x.u()}, 3) * 4)::BIGINT`),
        col('exam_minutes', 'Table time of the abbreviated protocol (minutes)', 'DOUBLE', (x) => `round(7 + 6 * ${x.u()}, 1)`),
        col('reader_experience_years', 'Years of experience of the interpreting radiologist', 'BIGINT', (x) => x.ui('y', 2, 35)),
      ],
    },
    {
      coll: c,
      short: 'ea1141_risk_model',
      rows: patientRows(c, 'ea1141_risk_model', 0.95),
      columns: [
        col('tc_lifetime_risk', 'Tyrer-Cuzick lifetime risk (%)', 'DOUBLE', `round(6 + 22 * pow(u(pkey, 'clin:tcr'), 2), 1)`),
        col('gail_5yr_risk', 'Gail model 5-year risk (%)', 'DOUBLE', (x) => `round(0.8 + 3.5 * pow(u(pkey, 'clin:tcr'), 2) + 0.4 * ${x.u()}, 2)`),
        col('bcsc_5yr_risk', 'BCSC model 5-year risk (%)', 'DOUBLE', (x) => `round(0.6 + 3.0 * pow(u(pkey, 'clin:tcr'), 2) + 0.5 * ${x.u()}, 2)`),
        col('risk_category', 'Lifetime risk category', 'VARCHAR', `CASE WHEN 6 + 22 * pow(u(pkey, 'clin:tcr'), 2) >= 20 THEN '3' WHEN 6 + 22 * pow(u(pkey, 'clin:tcr'), 2) >= 15 THEN '2' ELSE '1' END`,
          [['1', 'Average risk (< 15%)'], ['2', 'Intermediate risk (15-20%)'], ['3', 'High risk (>= 20%)']]),
      ],
    },
    {
      coll: c,
      short: 'ea1141_screening',
      rows: rounds('ea1141_screening'),
      columns: [
        col('exam_round', 'Screening round', 'BIGINT', 'r::BIGINT'),
        daysCol,
        wcol('exam_order', 'Order of the screening exams', [['1', 'MRI first', 50], ['2', 'DBT first', 50]]),
        wcol('recall', 'Recalled for additional imaging', [['N', 'No', 88], ['Y', 'Yes', 12]]),
        wcol('biopsy_performed', 'Biopsy performed', [['N', 'No', 95], ['Y', 'Yes', 5]]),
        col('biopsy_result', 'Biopsy result', 'VARCHAR', (x) => `CASE WHEN ${x.u()} < 0.05 THEN ${weightedCase([['1', 60], ['2', 15], ['3', 10], ['4', 15]], x.u('r'))} ELSE '.N' END`, [
          ['1', 'Benign'], ['2', 'High-risk lesion'], ['3', 'Ductal carcinoma in situ'], ['4', 'Invasive cancer'], ['.N', 'Not applicable'],
        ]),
      ],
    },
    status('ea1141_status_12mo', 12),
    status('ea1141_status_6mo', 6),
    {
      coll: c,
      short: 'ea1141_tomosynthesis',
      rows: rounds('ea1141_tomosynthesis'),
      columns: [
        col('exam_round', 'Screening round', 'BIGINT', 'r::BIGINT'),
        daysCol,
        col('dbt_birads', 'DBT BI-RADS assessment', 'VARCHAR', birads, BIRADS),
        wcol('dbt_density', 'Breast density (BI-RADS)', [['A', 'Almost entirely fatty', 1], ['B', 'Scattered areas of fibroglandular density', 9], ['C', 'Heterogeneously dense', 72], ['D', 'Extremely dense', 18]]),
        wcol('vendor', 'DBT system vendor', [['1', 'Hologic', 70], ['2', 'GE Healthcare', 15], ['3', 'Siemens Healthineers', 15]]),
        wcol('calcifications', 'Calcifications reported', [['N', 'No', 85], ['Y', 'Yes', 15]]),
        col('findings_count', 'Number of reported findings', 'BIGINT', (x) => `floor(pow(${x.u()}, 3) * 4)::BIGINT`),
      ],
    },
  ];
}
