// NLST: five tables shaped like the CDAS files (participant, screening,
// abnormalities, abnormality comparisons, cancers), with SAS-style missing codes.

import { weightedCase } from '../../core/data/sql.ts';
import type { PlannedCollection } from '../plan.ts';
import { col, histIndex, lookup, wcol, type Codes, type TableSpec } from './columns.ts';
import { HISTOLOGY } from './kinds.ts';


export const NLST_STAGE: Codes = [
  ['110', 'Stage IA'], ['120', 'Stage IB'], ['210', 'Stage IIA'], ['220', 'Stage IIB'], ['310', 'Stage IIIA'], ['320', 'Stage IIIB'],
  ['400', 'Stage IV'], ['900', 'Occult carcinoma'], ['994', 'Carcinoid, cannot be assessed'], ['.M', 'Missing'],
];
export const NLST_STAGE_BY_LATENT = ['110', '120', '210', '220', '310', '320', '400', '.M'];
export const pid = col('pid', 'Participant identifier', 'BIGINT', 'PatientID::BIGINT');

export function nlstTables(c: PlannedCollection): TableSpec[] {
  const base = `FROM g_clin p WHERE p.idx = ${c.idx}`;
  const yesNoCodes: Codes = [['0', 'No'], ['1', 'Yes']];
  const prsn: TableSpec = {
    coll: c,
    short: 'nlst_prsn',
    rows: `SELECT p.*, p.pkey AS rk, 0 AS r ${base}`,
    columns: [
      pid,
      col('race', 'Race', 'VARCHAR', lookup('race_i', ['1', '2', '3', '4', '5', '6', '99']), [
        ['1', 'White'], ['2', 'Black or African-American'], ['3', 'Asian'], ['4', 'American Indian or Alaskan Native'],
        ['5', 'Native Hawaiian or Other Pacific Islander'], ['6', 'More than one race'], ['7', 'Participant refused to answer'],
        ['95', 'Missing data form - form is not expected to ever be completed'], ['96', 'Missing - no response'], ['98', 'Missing - form was submitted and the answer was left blank'], ['99', 'Unknown/ decline to answer'],
      ]),
      col('ethnic', 'Ethnicity', 'VARCHAR', lookup('eth_i', ['2', '1', '99']), [
        ['1', 'Hispanic or Latino'], ['2', 'Neither Hispanic nor Latino'], ['7', 'Participant refused to answer'], ['95', 'Missing data form'], ['98', 'Missing'], ['99', 'Unknown/ decline to answer'],
      ]),
      col('gender', 'Gender', 'VARCHAR', lookup('sex_i', ['1', '2', '.M', '.M']), [['1', 'Male'], ['2', 'Female'], ['.M', 'Missing']]),
      col('age', 'Age at randomization (in years)', 'BIGINT', 'age_base::BIGINT'),
      wcol('educat', 'Education', [
        ['1', '8th grade or less', 5], ['2', '9th-11th grade', 8], ['3', 'High school graduate/GED', 24], ['4', 'Post high school training, excluding college', 12],
        ['5', 'Associate degree/ some college', 22], ['6', 'Bachelors Degree', 15], ['7', 'Graduate School', 11], ['8', 'Other', 1], ['95', 'Missing data form', 0.5], ['98', 'Missing', 1], ['99', 'Unknown/ decline to answer', 0.5],
      ]),
      col('height', 'Height (inches)', 'BIGINT', 'round(height_cm / 2.54)::BIGINT'),
      col('weight', 'Weight (pounds)', 'BIGINT', 'round(weight_kg * 2.2046)::BIGINT'),
      col('cigsmok', 'Smoking status at T0', 'VARCHAR', `CASE WHEN smoke_i = 3 THEN '1' ELSE '0' END`, [['0', 'Former'], ['1', 'Current']]),
      col('smokeage', 'Age at smoking onset (years)', 'BIGINT', 'smoke_age::BIGINT'),
      col('smokeday', 'Average number of cigarettes per day', 'BIGINT', (x) => `(10 + 10 * ${x.ui('n', 0, 4)})::BIGINT`),
      col('smokeyr', 'Total years of smoking', 'BIGINT', `greatest(1, age_base - smoke_age - CASE WHEN smoke_i = 3 THEN 0 ELSE ui(pkey, 'clin:quit', 1, 14) END)::BIGINT`),
      col('pkyr', 'Pack years', 'DOUBLE', 'pack_years'),
      col('rndgroup', 'Randomization group', 'VARCHAR', `'1'`, [['1', 'Spiral CT'], ['2', 'Chest X-ray']]),
      col('conflc', 'Confirmed lung cancer', 'VARCHAR', `CASE WHEN canc THEN '1' ELSE '0' END`, [['0', 'No confirmed lung cancer'], ['1', 'Confirmed lung cancer']]),
      col('can_scr', 'Result of screen associated with the first confirmed lung cancer diagnosis', 'VARCHAR',
        (x) => `CASE WHEN NOT canc THEN '0' ELSE ${weightedCase([['1', 60], ['2', 10], ['3', 5], ['4', 25]], x.u())} END`,
        [['0', 'No Cancer'], ['1', 'Positive Screen'], ['2', 'Negative Screen'], ['3', 'Missed Screen'], ['4', 'Post Screening']]),
      ...[0, 1, 2].map((y) =>
        col(`scr_res${y}`, `Results of screen at T${y}`, 'VARCHAR',
          (x) => `CASE WHEN canc AND ${x.u('pos')} < 0.6 THEN ${weightedCase([['4', 6], ['5', 3], ['6', 2]], x.u('p'))} ELSE ${weightedCase([['1', 55], ['2', 20], ['3', 10], ['4', 10], ['5', 3], ['13', 1], ['95', 1]], x.u())} END`,
          [
            ['1', 'Negative screen, no significant abnormalities'], ['2', 'Negative screen, minor abnormalities not suspicious for lung cancer'],
            ['3', 'Negative screen, significant abnormalities not suspicious for lung cancer'], ['4', 'Positive, change unspecified, nodule(s) >= 4 mm or enlarging nodule(s), mass(es), other non-specific abnormalities suspicious for lung cancer'],
            ['5', 'Positive, no significant change, stable abnormalities potentially related to lung cancer, no significant change since baseline'],
            ['6', 'Positive, change, abnormalities potentially related to lung cancer, significant change since baseline'], ['13', 'Inadequate Image'], ['95', 'Missing data form'],
          ]),
      ),
      col('fup_days', 'Days from randomization to last known follow-up', 'BIGINT', 'fu_days::BIGINT'),
      col('deathstat', 'Death status', 'VARCHAR', `CASE WHEN vital_i = 2 THEN '1' ELSE '.N' END`, [['1', 'Death certificate received'], ['.N', 'Not applicable (no death)']]),
      col('death_days', 'Days from randomization to death', 'BIGINT', 'CASE WHEN vital_i = 2 THEN fu_days END'),
      col('finaldeathlc', 'Final determination of lung cancer as cause of death', 'VARCHAR', `CASE WHEN vital_i = 2 AND canc AND coalesce(stage_n, 4) >= 3 THEN '1' WHEN vital_i = 2 THEN '0' ELSE '.N' END`,
        [...yesNoCodes, ['.N', 'Not applicable']]),
    ],
  };
  const screen: TableSpec = {
    coll: c,
    short: 'nlst_screen',
    rows: `SELECT p.*, p.pkey * 8 + yr AS rk, yr AS r ${base.replace('FROM g_clin p', 'FROM g_clin p CROSS JOIN range(3) t(yr)')}
      AND (yr = 0 OR u(p.pkey * 8 + yr, 'nlst_screen:drop') > 0.04)`,
    columns: [
      pid,
      col('study_yr', 'Study year of screen (0 = T0)', 'BIGINT', 'r::BIGINT'),
      wcol('ctdxqual', 'CT diagnostic quality', [['1', 'Diagnostic CT', 90], ['2', 'Limited CT, but interpretable', 8], ['3', 'Poor quality, not interpretable', 2]]),
      wcol('ctdxqual_breath', 'Quality issue: breathing artifact', [['0', 'No', 92], ['1', 'Yes', 8]]),
      col('techpara_kvp', 'Technical parameters: kVp', 'DOUBLE', (x) => weightedCase([[120, 80], [140, 12], [130, 5], [100, 3]], x.u())),
      col('techpara_ma', 'Technical parameters: mA', 'DOUBLE', (x) => `(20 + 10 * ${x.ui('v', 0, 8)})::DOUBLE`),
      col('techpara_effmas', 'Technical parameters: effective mAs', 'DOUBLE', (x) => `round(15 + 30 * ${x.u()}, 1)`),
      col('techpara_fov', 'Technical parameters: field of view (cm)', 'DOUBLE', (x) => `round(30 + 15 * ${x.u()}, 1)`),
      col('techpara_pitch', 'Technical parameters: pitch', 'DOUBLE', (x) => weightedCase([[1.5, 40], [1.375, 30], [1.0, 20], [2.0, 10]], x.u())),
      wcol('ct_recon_filter1', 'Reconstruction filter 1', [
        ['1', 'GE Bone', 10], ['2', 'GE Lung', 15], ['3', 'GE Standard', 20], ['4', 'Philips C', 8], ['5', 'Philips D', 5], ['6', 'Siemens B30f', 15],
        ['7', 'Siemens B50f', 10], ['8', 'Toshiba FC10', 7], ['9', 'Toshiba FC51', 5], ['99', 'Other', 5],
      ]),
    ],
  };
  const AB_DESC: [string, string, number][] = [
    ['51', 'Non-calcified nodule or mass (opacity >= 4 mm diameter)', 35], ['52', 'Non-calcified micronodule(s) (opacity < 4 mm diameter)', 12],
    ['53', 'Benign lung nodule(s) (benign calcification, fat, or other benign features)', 10], ['54', 'Atelectasis, segmental or greater', 3],
    ['55', 'Pleural thickening or effusion', 4], ['56', 'Non-calcified hilar/mediastinal adenopathy or mass (>= 10 mm on short axis)', 3],
    ['57', 'Chest wall abnormality (bone destruction, metastasis, etc.)', 1], ['58', 'Consolidation', 3], ['59', 'Emphysema', 12],
    ['60', 'Significant cardiovascular abnormality', 5], ['61', 'Reticular/reticulonodular opacities, honeycombing, fibrosis, scar', 4],
    ['62', 'Other potentially significant abnormality above the diaphragm', 3], ['63', 'Other potentially significant abnormality below the diaphragm', 2],
    ['64', 'Other minor abnormality noted', 3],
  ];
  const nodule = `sct_ab_desc_v IN ('51', '52')`;
  const ctab: TableSpec = {
    coll: c,
    short: 'nlst_ctab',
    rows: `SELECT *, (pkey * 8 + yr) * 16 + ab AS rk, ab AS r, ${weightedCase(AB_DESC.map((x) => [x[0], x[2]]), `u((pkey * 8 + yr) * 16 + ab, 'nlst_ctab.sct_ab_desc')`)} AS sct_ab_desc_v FROM (
        SELECT p.*, yr, unnest(range(1, 1 + CASE WHEN p.prank = 1 AND yr = 0 THEN greatest(1, n) ELSE n END)) AS ab FROM (
          SELECT p.*, yr, CASE WHEN u(p.pkey * 8 + yr, 'nlst_ctab:none') < 0.45 THEN 0 ELSE ui(p.pkey * 8 + yr, 'nlst_ctab:n', 1, 4) END AS n
          ${base.replace('FROM g_clin p', 'FROM g_clin p CROSS JOIN range(3) t(yr)')}) p)`,
    columns: [
      pid,
      col('study_yr', 'Study year of screen', 'BIGINT', 'yr::BIGINT'),
      col('sct_ab_num', 'Abnormality number (unique within a screen)', 'BIGINT', 'r::BIGINT'),
      col('sct_ab_desc', 'Abnormality description', 'VARCHAR', 'sct_ab_desc_v', AB_DESC.map((x) => [x[0], x[1]])),
      col('sct_epi_loc', 'Location of abnormality (epicenter)', 'VARCHAR', (x) => `CASE WHEN ${nodule} THEN ${weightedCase([['1', 30], ['2', 8], ['3', 20], ['4', 22], ['5', 5], ['6', 13], ['8', 2]], x.u())} ELSE '.N' END`, [
        ['1', 'Right Upper Lobe'], ['2', 'Right Middle Lobe'], ['3', 'Right Lower Lobe'], ['4', 'Left Upper Lobe'], ['5', 'Lingula'], ['6', 'Left Lower Lobe'], ['8', 'Other (specify in comments)'], ['.N', 'Not applicable'],
      ]),
      col('sct_long_dia', 'Longest diameter (mm)', 'BIGINT', (x) => `CASE WHEN sct_ab_desc_v = '51' THEN (4 + floor(26 * pow(${x.u()}, 2.5)))::BIGINT WHEN sct_ab_desc_v = '52' THEN ${x.ui('m', 1, 3)} END`),
      col('sct_perp_dia', 'Longest perpendicular diameter (mm)', 'BIGINT', (x) => `CASE WHEN sct_ab_desc_v = '51' THEN (3 + floor(18 * pow(${x.u()}, 2.5)))::BIGINT WHEN sct_ab_desc_v = '52' THEN ${x.ui('m', 1, 3)} END`),
      col('sct_margins', 'Margins', 'VARCHAR', (x) => `CASE WHEN ${nodule} THEN ${weightedCase([['1', 12], ['2', 60], ['3', 20], ['9', 8]], x.u())} ELSE '.N' END`, [
        ['1', 'Spiculated (Stellate)'], ['2', 'Smooth'], ['3', 'Poorly defined'], ['9', 'Unable to determine'], ['.N', 'Not applicable'],
      ]),
      col('sct_pre_att', 'Predominant attenuation', 'VARCHAR', (x) => `CASE WHEN ${nodule} THEN ${weightedCase([['1', 70], ['2', 15], ['3', 8], ['4', 1], ['6', 1], ['7', 2], ['9', 3]], x.u())} ELSE '.N' END`, [
        ['1', 'Soft Tissue'], ['2', 'Ground glass'], ['3', 'Mixed'], ['4', 'Fluid/water'], ['6', 'Fat'], ['7', 'Other'], ['9', 'Unable to determine'], ['.N', 'Not applicable'],
      ]),
      col('sct_slice_num', 'Slice number of the abnormality', 'BIGINT', (x) => `CASE WHEN ${nodule} THEN ${x.ui('s', 10, 280)} END`),
    ],
  };
  const ctabc: TableSpec = {
    coll: c,
    short: 'nlst_ctabc',
    rows: `SELECT p.*, (p.pkey * 8 + yr) * 16 + ab AS rk, ab AS r FROM (
        SELECT p.*, yr, unnest(range(1, 1 + CASE WHEN u(p.pkey * 8 + yr, 'nlst_ctabc:none') < 0.55 THEN 0 ELSE ui(p.pkey * 8 + yr, 'nlst_ctabc:n', 1, 3) END)) AS ab
        ${base.replace('FROM g_clin p', 'FROM g_clin p CROSS JOIN range(1, 3) t(yr)')}) p`,
    columns: [
      pid,
      col('study_yr', 'Study year of screen', 'BIGINT', 'yr::BIGINT'),
      col('sct_ab_num', 'Abnormality number (unique within a screen)', 'BIGINT', 'r::BIGINT'),
      wcol('sct_ab_preexist', 'Abnormality pre-existed at a prior screen', [['1', 'Yes', 70], ['2', 'No', 25], ['9', 'Unable to determine', 5]]),
      wcol('sct_ab_gwth', 'Abnormality growth since prior screen', [['1', 'Yes', 12], ['2', 'No', 80], ['9', 'Unable to determine', 8]]),
      wcol('sct_ab_attn', 'Change in attenuation since prior screen', [['1', 'Yes', 8], ['2', 'No', 85], ['9', 'Unable to determine', 7]]),
      wcol('sct_ab_invg', 'Abnormality recommended for further work-up', [['1', 'Yes', 15], ['2', 'No', 85]]),
      col('visible_days', 'Days since the abnormality was first visible', 'BIGINT', (x) => `(365 * (yr - (${x.u()} < 0.5)::INTEGER) + ${x.ui('d', 0, 40)})::BIGINT`),
    ],
  };
  const canc: TableSpec = {
    coll: c,
    short: 'nlst_canc',
    rows: `SELECT p.*, p.pkey AS rk, 0 AS r ${base} AND p.canc`,
    columns: [
      pid,
      col('study_yr', 'Study year of diagnosis', 'BIGINT', (x) => `CASE WHEN prank = 1 THEN 0 ELSE ${x.ui('y', 0, 6)} END`),
      col('candx_days', 'Days from randomization to diagnosis of lung cancer', 'BIGINT', (x) => `least(fu_days, ${x.ui('d', 30, 2400)})::BIGINT`),
      col('clinical_stag', 'Clinical stage', 'VARCHAR',
        (x) => `CASE WHEN prank = 1 THEN '400' WHEN ${x.u('oc')} < 0.015 THEN '900' WHEN ${x.u('oc')} < 0.03 THEN '994' ELSE ${lookup('stage_i', NLST_STAGE_BY_LATENT)} END`,
        NLST_STAGE),
      col('path_stag', 'Pathologic stage', 'VARCHAR',
        (x) => `CASE WHEN stage_i = 7 OR ${x.u()} < 0.25 THEN '.N' WHEN ${x.u('up')} < 0.2 THEN ${lookup('least(stage_i + 1, 7)', NLST_STAGE_BY_LATENT)} ELSE ${lookup('stage_i', NLST_STAGE_BY_LATENT)} END`,
        [...NLST_STAGE.filter((x) => x[0] !== '900' && x[0] !== '994'), ['.N', 'Not applicable (no surgery)']]),
      col('de_stag', 'Best stage (AJCC 6th edition)', 'VARCHAR', lookup('stage_i', NLST_STAGE_BY_LATENT), NLST_STAGE),
      col('de_type', 'Histology (ICD-O-3 morphology)', 'VARCHAR', lookup(histIndex(HISTOLOGY.lung.length), HISTOLOGY.lung.map((x) => x[0].slice(0, 4))),
        HISTOLOGY.lung.map((x) => [x[0].slice(0, 4), x[1]])),
      col('de_grade', 'Grade', 'VARCHAR', lookup('grade_i', ['1', '2', '3', '9']), [
        ['1', 'Grade Cell Type: Well Differentiated; Grade I'], ['2', 'Grade Cell Type: Moderately Differentiated; Grade II'],
        ['3', 'Grade Cell Type: Poorly Differentiated; Grade III'], ['4', 'Grade Cell Type: Undifferentiated; Grade IV'], ['9', 'Grade Cell Type: Unknown or not stated'],
      ]),
      col('lesionsize', 'Pathologic lesion size (mm)', 'BIGINT', 'tumor_mm::BIGINT'),
      col('lc_topog', 'Topography of the primary tumor (ICD-O-3)', 'VARCHAR', (x) => weightedCase([['C34.1', 55], ['C34.2', 5], ['C34.3', 30], ['C34.0', 3], ['C34.9', 7]], x.u()), [
        ['C34.0', 'Main bronchus'], ['C34.1', 'Upper lobe, lung'], ['C34.2', 'Middle lobe, lung'], ['C34.3', 'Lower lobe, lung'], ['C34.9', 'Lung, NOS'],
      ]),
    ],
  };
  return [canc, ctab, ctabc, prsn, screen];
}
