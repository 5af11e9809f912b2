// The pool of clinical concepts generic clinical tables draw their columns
// from, each with real-world naming variants, types and code lists, and the
// kinds of collection it applies to.

import { coded, num, yesNo, type Concept } from './columns.ts';
import { HISTOLOGY, type Kind } from './kinds.ts';


export const SEX_DESC = ['Male', 'Female', 'Other', 'Unknown'];
export const RACE = ['White', 'Black or African American', 'Asian', 'American Indian or Alaska Native', 'Native Hawaiian or Other Pacific Islander', 'More than one race', 'Unknown'];
export const ETH = ['Not Hispanic or Latino', 'Hispanic or Latino', 'Unknown'];
export const STAGES = ['Stage IA', 'Stage IB', 'Stage IIA', 'Stage IIB', 'Stage IIIA', 'Stage IIIB', 'Stage IV', null];
export const TREAT = ['Surgery', 'Chemotherapy', 'Radiation therapy', 'Chemoradiation', 'Surgery and adjuvant chemotherapy', 'Immunotherapy', 'None'];
export const ECOG = ['Fully active', 'Restricted in physically strenuous activity', 'Ambulatory and capable of all self-care', 'Capable of only limited self-care'];
export const RECEPTOR = ['Positive', 'Negative', 'Indeterminate'];
export const BREEDS = ['Boxer', 'Boston Terrier', 'English Bulldog', 'Mixed breed', 'Golden Retriever', 'Labrador Retriever', 'French Bulldog', 'Pit Bull'];

export const human = (_k: Kind, h: boolean) => h;
export const cancerKind = (k: Kind) => k !== 'covid' && k !== 'phantom';
export const staged = (k: Kind) => cancerKind(k) && k !== 'brain' && k !== 'heme';

export const CONCEPTS: Concept[] = [
  {
    key: 'age', label: 'Age at diagnosis', p: 1, when: (k) => k !== 'phantom',
    names: ['age_at_diagnosis', 'AgeAtDx', 'age', 'patient_age', 'Age_at_Diagnosis_years', 'Age', 'age_at_dx', 'AGE_DX', 'Age_at_Enrollment', 'age_years'],
    renderings: [
      num('BIGINT', 'age_dx', { label: 'Age at diagnosis (years)' }),
      num('DOUBLE', (c) => `round(age_dx + ${c.u('frac')}, 1)`, { label: 'Age at diagnosis (years)' }),
      num('VARCHAR', `CASE WHEN age_dx >= 89 THEN '>89' ELSE age_dx::VARCHAR END`, { label: 'Age (years; 90 and over reported as >89)' }),
      num('BIGINT', (c) => `(age_dx * 365.25 + floor(${c.u('d')} * 365))::BIGINT`, { names: ['age_at_diagnosis_days', 'AgeInDays', 'age_days'], label: 'Age at diagnosis (days)' }),
    ],
  },
  {
    key: 'sex', label: 'Sex', p: 0.92, when: (k) => k !== 'phantom',
    names: ['gender', 'sex', 'Sex', 'Gender', 'GENDER', 'patient_sex', 'SEX', 'Patient_Sex'],
    renderings: [
      coded('sex_i', ['Male', 'Female', 'Other', null]),
      coded('sex_i', ['M', 'F', 'O', 'U'], SEX_DESC),
      coded('sex_i', ['1', '2', '3', '9'], SEX_DESC),
      coded('sex_i', [1, 2, 3, null], SEX_DESC),
      coded('sex_i', ['MALE', 'FEMALE', null, null]),
    ],
  },
  {
    key: 'race', label: 'Race', p: 0.6, when: human,
    names: ['race', 'Race', 'RACE', 'race_category', 'patient_race', 'Race_Ethnicity'],
    renderings: [
      coded('race_i', RACE),
      coded('race_i', ['1', '2', '3', '4', '5', '6', '99'], RACE),
      coded('race_i', ['W', 'B', 'A', 'AI', 'PI', 'M', 'U'], RACE),
      coded('race_i', ['WHITE', 'BLACK OR AFRICAN AMERICAN', 'ASIAN', 'AMERICAN INDIAN OR ALASKA NATIVE', 'NATIVE HAWAIIAN OR OTHER PACIFIC ISLANDER', null, null]),
    ],
  },
  {
    key: 'ethnicity', label: 'Ethnicity', p: 0.4, when: human,
    names: ['ethnicity', 'Ethnicity', 'ethnic_group', 'hispanic_latino', 'ETHNICITY'],
    renderings: [coded('eth_i', ETH), coded('eth_i', ['2', '1', '9'], ETH), coded('eth_i', ['N', 'Y', 'U'], ETH)],
  },
  {
    key: 'vital', label: 'Vital status', p: 0.55, when: (k) => k !== 'phantom',
    names: ['vital_status', 'VitalStatus', 'Vital_Status', 'alive_or_dead', 'Status', 'survival_status', 'Deceased'],
    renderings: [
      coded('vital_i', ['Alive', 'Dead']),
      coded('vital_i', ['0', '1'], ['Alive', 'Dead']),
      coded('vital_i', ['Living', 'Deceased']),
      coded('vital_i', [0, 1], ['Alive', 'Dead']),
    ],
  },
  {
    key: 'os', label: 'Overall survival', p: 0.35, when: cancerKind,
    names: ['overall_survival_days', 'OS_days', 'Survival_days', 'os_time'],
    renderings: [
      num('BIGINT', 'fu_days', { label: 'Overall survival or time to last follow-up (days)' }),
      num('DOUBLE', 'round(fu_days / 30.44, 1)', { names: ['OS_months', 'overall_survival_months', 'Survival_months', 'os_mo'], label: 'Overall survival (months)' }),
    ],
  },
  {
    key: 'death', label: 'Days to death', p: 0.35, when: (k) => k !== 'phantom',
    names: ['days_to_death', 'DaysToDeath', 'death_days', 'Days_to_Death', 'time_to_death_days'],
    renderings: [num('BIGINT', 'CASE WHEN vital_i = 2 THEN fu_days END')],
  },
  {
    key: 'lfu', label: 'Days to last follow-up', p: 0.4, when: (k) => k !== 'phantom',
    names: ['days_to_last_followup', 'last_fu_days', 'Days_to_Last_Follow_Up', 'followup_days', 'time_to_last_contact_days', 'FU_days'],
    renderings: [num('BIGINT', 'CASE WHEN vital_i = 1 THEN fu_days END'), num('BIGINT', 'fu_days', { label: 'Days from diagnosis to last contact or death' })],
  },
  {
    key: 'stage', label: 'Overall stage', p: 0.6, when: staged,
    names: ['overall_stage', 'Stage', 'clinical_stage', 'Overall_Stage', 'ajcc_stage', 'tumor_stage', 'StageGroup', 'stage_at_diagnosis'],
    renderings: [
      coded('stage_i', STAGES),
      coded('stage_i', ['I', 'I', 'II', 'II', 'III', 'III', 'IV', 'Unknown']),
      coded('stage_i', ['IA', 'IB', 'IIA', 'IIB', 'IIIA', 'IIIB', 'IV', 'NA'], [...STAGES.slice(0, 7), 'Not available']),
      coded('stage_i', ['1', '1', '2', '2', '3', '3', '4', '9'], ['Stage I', 'Stage I', 'Stage II', 'Stage II', 'Stage III', 'Stage III', 'Stage IV', 'Unknown']),
      coded('stage_i', [1, 1, 2, 2, 3, 3, 4, null], ['Stage I', 'Stage I', 'Stage II', 'Stage II', 'Stage III', 'Stage III', 'Stage IV']),
    ],
  },
  {
    key: 't', label: 'T stage', p: 0.45, when: staged,
    names: ['T_stage', 't_stage', 'clinical_T', 'ajcc_t', 'Tstage', 'pathologic_T', 'Clinical_T_Stage', 't_category'],
    renderings: [
      coded('t_i', ['T1', 'T2', 'T3', 'T4', 'TX']),
      coded('t_i', ['1', '2', '3', '4', 'X'], ['T1', 'T2', 'T3', 'T4', 'TX']),
      coded('t_i', ['cT1', 'cT2', 'cT3', 'cT4', 'cTX']),
      coded('t_i', ['pT1', 'pT2', 'pT3', 'pT4', 'pTX']),
    ],
  },
  {
    key: 'n', label: 'N stage', p: 0.45, when: staged,
    names: ['N_stage', 'n_stage', 'clinical_N', 'ajcc_n', 'Nstage', 'pathologic_N', 'Clinical_N_Stage', 'n_category'],
    renderings: [
      coded('n_i', ['N0', 'N1', 'N2', 'N3', 'NX']),
      coded('n_i', ['0', '1', '2', '3', 'X'], ['N0', 'N1', 'N2', 'N3', 'NX']),
      coded('n_i', ['cN0', 'cN1', 'cN2', 'cN3', 'cNX']),
    ],
  },
  {
    key: 'm', label: 'M stage', p: 0.45, when: staged,
    names: ['M_stage', 'm_stage', 'clinical_M', 'ajcc_m', 'Mstage', 'pathologic_M', 'Clinical_M_Stage', 'm_category'],
    renderings: [
      coded('m_i', ['M0', 'M1', 'MX']),
      coded('m_i', ['0', '1', 'X'], ['M0', 'M1', 'MX']),
      coded('m_i', ['cM0', 'cM1', 'cMX']),
    ],
  },
  {
    key: 'hist', label: 'Histology', p: 0.6, when: (k) => HISTOLOGY[k].length > 0,
    names: ['histology', 'Histology', 'histological_type', 'hist_type', 'primary_diagnosis', 'tumor_histology', 'Histologic_Subtype', 'pathology'],
    // Filled per collection (the list depends on the kind): see histRendering().
    renderings: [],
  },
  {
    key: 'grade', label: 'Tumor grade', p: 0.4, when: (k) => cancerKind(k) && k !== 'brain',
    names: ['grade', 'tumor_grade', 'Grade', 'histologic_grade', 'Tumor_Grade', 'differentiation'],
    renderings: [
      coded('grade_i', ['G1', 'G2', 'G3', 'GX']),
      coded('grade_i', ['1', '2', '3', '9'], ['Well differentiated', 'Moderately differentiated', 'Poorly differentiated', 'Unknown']),
      coded('grade_i', ['Low', 'Intermediate', 'High', 'Unknown']),
      coded('grade_i', [1, 2, 3, null], ['Well differentiated', 'Moderately differentiated', 'Poorly differentiated']),
    ],
  },
  {
    key: 'smoke', label: 'Smoking status', p: 0.5, when: (k, h) => h && (k === 'lung' || k === 'headneck' || k === 'covid' || k === 'other' || k === 'kidney'),
    names: ['smoking_status', 'SmokingStatus', 'Smoking_History', 'smoker', 'tobacco_use', 'cigarette_smoking', 'Smoking'],
    renderings: [
      coded('smoke_i', ['Never', 'Former', 'Current', 'Unknown']),
      coded('smoke_i', ['Never smoker', 'Former smoker', 'Current smoker', 'Unknown']),
      coded('smoke_i', ['0', '1', '2', '9'], ['Never', 'Former', 'Current', 'Unknown']),
      coded('smoke_i', [0, 1, 2, null], ['Never', 'Former', 'Current']),
    ],
  },
  {
    key: 'pky', label: 'Pack years', p: 0.35, when: (k, h) => h && (k === 'lung' || k === 'headneck'),
    names: ['pack_years', 'PackYears', 'pack_years_smoked', 'Pack_Years', 'pkyrs', 'smoking_pack_years'],
    renderings: [num('DOUBLE', 'pack_years'), num('BIGINT', 'round(pack_years)::BIGINT')],
  },
  {
    key: 'bmi', label: 'Body mass index', p: 0.3, when: human,
    names: ['bmi', 'BMI', 'body_mass_index', 'BMI_kg_m2', 'bmi_at_diagnosis'],
    renderings: [
      num('DOUBLE', 'bmi', { label: 'Body mass index (kg/m2)' }),
      coded('(CASE WHEN bmi < 18.5 THEN 1 WHEN bmi < 25 THEN 2 WHEN bmi < 30 THEN 3 ELSE 4 END)', ['Underweight', 'Normal', 'Overweight', 'Obese'], undefined, { names: ['bmi_category', 'BMI_Category', 'bmi_class'], label: 'Body mass index category' }),
    ],
  },
  {
    key: 'height', label: 'Height', p: 0.2, when: human,
    names: ['height_cm', 'Height_cm', 'height'],
    renderings: [
      num('BIGINT', 'height_cm', { label: 'Height (cm)' }),
      num('DOUBLE', 'round(height_cm / 2.54, 1)', { names: ['height_in', 'Height_inches', 'HEIGHT_IN'], label: 'Height (inches)' }),
    ],
  },
  {
    key: 'weight', label: 'Weight', p: 0.2, when: (k) => k !== 'phantom',
    names: ['weight_kg', 'Weight_kg', 'weight', 'body_weight'],
    renderings: [
      num('DOUBLE', `CASE WHEN species = 'Human' THEN weight_kg ELSE round(weight_kg / 3, 1) END`, { label: 'Weight (kg)' }),
      num('BIGINT', 'round(weight_kg * 2.2046)::BIGINT', { names: ['weight_lb', 'Weight_lbs', 'WEIGHT_LB'], label: 'Weight (pounds)' }),
    ],
  },
  {
    key: 'tsize', label: 'Tumor size', p: 0.35, when: (k) => cancerKind(k) && k !== 'heme',
    names: ['tumor_size_mm', 'TumorSize_mm', 'largest_diameter_mm', 'lesion_size_mm'],
    renderings: [
      num('DOUBLE', (c) => `round(tumor_mm + ${c.u('f')}, 1)`, { label: 'Largest tumor diameter (mm)' }),
      num('DOUBLE', 'round(tumor_mm / 10.0, 1)', { names: ['tumor_size_cm', 'Tumor_Size_cm', 'tumor_size', 'TumorSize'], label: 'Tumor size (cm)' }),
      num('BIGINT', 'tumor_mm', { label: 'Largest tumor diameter (mm)' }),
    ],
  },
  {
    key: 'treat', label: 'Primary treatment', p: 0.45, when: cancerKind,
    names: ['treatment', 'primary_treatment', 'Treatment_Type', 'therapy', 'treatment_type', 'first_line_therapy', 'Treatment'],
    renderings: [coded('treat_i', TREAT), coded('treat_i', ['1', '2', '3', '4', '5', '6', '7'], TREAT), coded('treat_i', [1, 2, 3, 4, 5, 6, 7], TREAT)],
  },
  {
    key: 'surgery', label: 'Surgery', p: 0.3, when: cancerKind,
    names: ['surgery', 'Surgery', 'surgical_resection', 'had_surgery', 'Resection'],
    renderings: [yesNo('treat_i IN (1, 5)', 'Yes', 'No'), yesNo('treat_i IN (1, 5)', '1', '0', ['Yes', 'No']), yesNo('treat_i IN (1, 5)', 1, 0, ['Yes', 'No'])],
  },
  {
    key: 'chemo', label: 'Chemotherapy', p: 0.3, when: cancerKind,
    names: ['chemotherapy', 'Chemotherapy', 'chemo', 'received_chemo', 'Chemo_YN'],
    renderings: [yesNo('treat_i IN (2, 4, 5)', 'Yes', 'No'), yesNo('treat_i IN (2, 4, 5)', 'Y', 'N', ['Yes', 'No']), yesNo('treat_i IN (2, 4, 5)', 1, 0, ['Yes', 'No'])],
  },
  {
    key: 'radiation', label: 'Radiation therapy', p: 0.3, when: cancerKind,
    names: ['radiation', 'radiotherapy', 'Radiation_Therapy', 'received_rt', 'RT'],
    renderings: [yesNo('treat_i IN (3, 4)', 'Yes', 'No'), yesNo('treat_i IN (3, 4)', 'Y', 'N', ['Yes', 'No']), yesNo('treat_i IN (3, 4)', 1, 0, ['Yes', 'No'])],
  },
  {
    key: 'ecog', label: 'ECOG performance status', p: 0.3, when: (k, h) => h && cancerKind(k),
    names: ['ecog', 'ECOG', 'ECOG_PS', 'performance_status', 'ecog_performance_status', 'ECOG_score'],
    renderings: [coded('ecog_i', ['0', '1', '2', '3'], ECOG), coded('ecog_i', [0, 1, 2, 3], ECOG)],
  },
  {
    key: 'kps', label: 'Karnofsky performance score', p: 0.5, when: (k, h) => h && k === 'brain',
    names: ['kps', 'KPS', 'karnofsky_score', 'Karnofsky_Performance_Score'],
    renderings: [num('BIGINT', (c) => `(100 - 10 * (2 * (ecog_i - 1) + (${c.u()} < 0.5)::INTEGER))::BIGINT`)],
  },
  {
    key: 'recur', label: 'Recurrence', p: 0.35, when: cancerKind,
    names: ['recurrence', 'Recurrence', 'progression_or_recurrence', 'recurrence_status', 'Local_Recurrence', 'relapse'],
    renderings: [coded('recur_i', ['No', 'Yes']), coded('recur_i', ['0', '1'], ['No recurrence', 'Recurrence']), coded('recur_i', [0, 1], ['No', 'Yes'])],
  },
  {
    key: 'recur_days', label: 'Days to recurrence', p: 0.25, when: cancerKind,
    names: ['days_to_recurrence', 'recurrence_days', 'DaysToRecurrence', 'time_to_progression_days', 'PFS_days'],
    renderings: [num('BIGINT', 'CASE WHEN recur_i = 2 THEN recur_days END')],
  },
  {
    key: 'dx_year', label: 'Year of diagnosis', p: 0.25, when: (k) => k !== 'phantom',
    names: ['year_of_diagnosis', 'Year_of_Dx', 'diagnosis_year', 'YearOfDiagnosis', 'dx_year'],
    renderings: [num('BIGINT', 'dx_year'), num('VARCHAR', 'dx_year::VARCHAR')],
  },
  {
    key: 'lat', label: 'Laterality', p: 0.4, when: (k) => ['breast', 'kidney', 'lung', 'sarcoma'].includes(k),
    names: ['laterality', 'Laterality', 'side', 'tumor_side', 'Side'],
    renderings: [coded('lat_i', ['Left', 'Right', 'Bilateral']), coded('lat_i', ['L', 'R', 'B'], ['Left', 'Right', 'Bilateral'])],
  },
  {
    key: 'alcohol', label: 'Alcohol use', p: 0.2, when: human,
    names: ['alcohol_history', 'Alcohol', 'alcohol_use', 'AlcoholUse', 'drinker'],
    renderings: [coded('alc_i', ['Yes', 'No', 'Not Reported']), coded('alc_i', ['1', '0', '9'], ['Yes', 'No', 'Unknown'])],
  },
  {
    key: 'prior', label: 'Prior malignancy', p: 0.2, when: cancerKind,
    names: ['prior_malignancy', 'PriorCancer', 'history_of_other_malignancy', 'prior_cancer'],
    renderings: [coded('prior_i', ['yes', 'no']), coded('prior_i', ['Y', 'N'], ['Yes', 'No'])],
  },
  {
    key: 'site', label: 'Enrolling site', p: 0.2, when: () => true,
    names: ['site', 'institution', 'Institution', 'enrolling_site', 'SiteID', 'center'],
    renderings: [
      coded('site_i', ['MDA', 'UCSF', 'MSKCC', 'MAYO', 'EMORY'], ['MD Anderson Cancer Center', 'University of California San Francisco', 'Memorial Sloan Kettering Cancer Center', 'Mayo Clinic', 'Emory University']),
      coded('site_i', [1, 2, 3, 4, 5]),
      coded('site_i', ['Site A', 'Site B', 'Site C', 'Site D', 'Site E']),
    ],
  },
  {
    key: 'er', label: 'Estrogen receptor status', p: 0.8, when: (k) => k === 'breast',
    names: ['er_status', 'ER', 'ER_status', 'estrogen_receptor', 'ERstatus'],
    renderings: [coded('er_i', RECEPTOR), coded('er_i', ['POS', 'NEG', 'IND'], RECEPTOR), coded('er_i', ['1', '0', '9'], RECEPTOR)],
  },
  {
    key: 'pr', label: 'Progesterone receptor status', p: 0.7, when: (k) => k === 'breast',
    names: ['pr_status', 'PR', 'PR_status', 'progesterone_receptor', 'PRstatus'],
    renderings: [coded('pr_i', RECEPTOR), coded('pr_i', ['POS', 'NEG', 'IND'], RECEPTOR), coded('pr_i', ['1', '0', '9'], RECEPTOR)],
  },
  {
    key: 'her2', label: 'HER2 status', p: 0.7, when: (k) => k === 'breast',
    names: ['her2_status', 'HER2', 'HER2_status', 'her2_ihc', 'HER2neu'],
    renderings: [coded('her2_i', ['Positive', 'Negative', 'Equivocal']), coded('her2_i', ['POS', 'NEG', 'EQV'], ['Positive', 'Negative', 'Equivocal'])],
  },
  {
    key: 'meno', label: 'Menopausal status', p: 0.5, when: (k, h) => h && (k === 'breast' || k === 'gyn'),
    names: ['menopausal_status', 'Menopause', 'menopause_status', 'MenopausalStatus'],
    renderings: [coded('meno_i', ['Pre', 'Peri', 'Post']), coded('meno_i', ['1', '2', '3'], ['Premenopausal', 'Perimenopausal', 'Postmenopausal'])],
  },
  {
    key: 'psa', label: 'PSA', p: 0.8, when: (k) => k === 'prostate',
    names: ['psa', 'PSA', 'psa_ng_ml', 'PSA_at_diagnosis', 'preop_psa'],
    renderings: [num('DOUBLE', 'psa', { label: 'Prostate-specific antigen (ng/mL)' })],
  },
  {
    key: 'gleason', label: 'Gleason score', p: 0.8, when: (k) => k === 'prostate',
    names: ['gleason_score', 'Gleason', 'GleasonScore', 'gleason_sum'],
    renderings: [
      coded('gleason_i', ['6', '7', '8', '9', '10'], ['Gleason 6 (3+3)', 'Gleason 7 (3+4 or 4+3)', 'Gleason 8', 'Gleason 9', 'Gleason 10']),
      coded('gleason_i', [6, 7, 8, 9, 10]),
      coded('gleason_i', ['3+3', '3+4', '4+4', '4+5', '5+5']),
    ],
  },
  {
    key: 'idh', label: 'IDH mutation status', p: 0.6, when: (k) => k === 'brain',
    names: ['idh_status', 'IDH', 'IDH1_mutation', 'idh'],
    renderings: [coded('idh_i', ['Mutant', 'Wildtype', 'Unknown']), coded('idh_i', ['MUT', 'WT', 'NA'], ['Mutant', 'Wildtype', 'Not assessed'])],
  },
  {
    key: 'mgmt', label: 'MGMT promoter methylation', p: 0.5, when: (k) => k === 'brain',
    names: ['mgmt_status', 'MGMT', 'MGMT_promoter_methylation', 'mgmt'],
    renderings: [coded('mgmt_i', ['Methylated', 'Unmethylated', 'Unknown']), coded('mgmt_i', ['1', '0', '9'], ['Methylated', 'Unmethylated', 'Unknown'])],
  },
  {
    key: 'hpv', label: 'HPV status', p: 0.7, when: (k) => k === 'headneck',
    names: ['hpv_status', 'HPV', 'p16_status', 'HPV_Status'],
    renderings: [coded('hpv_i', ['Positive', 'Negative', 'Unknown']), coded('hpv_i', ['+', '-', 'NA'], ['Positive', 'Negative', 'Not assessed'])],
  },
  {
    key: 'afp', label: 'Alpha-fetoprotein', p: 0.6, when: (k) => k === 'liver',
    names: ['afp', 'AFP', 'AFP_ng_ml', 'alpha_fetoprotein'],
    renderings: [num('DOUBLE', 'afp', { label: 'Alpha-fetoprotein (ng/mL)' })],
  },
  {
    key: 'breed', label: 'Breed', p: 1, when: (_k, h) => !h,
    names: ['breed', 'Breed', 'dog_breed'],
    renderings: [coded('breed_i', BREEDS)],
  },
  {
    key: 'icu', label: 'ICU admission', p: 0.8, when: (k) => k === 'covid',
    names: ['icu_admission', 'ICU', 'admitted_to_icu', 'ICU_Admit'],
    renderings: [yesNo(`u(pkey, 'clin:icu') < 0.25`, 'Yes', 'No'), yesNo(`u(pkey, 'clin:icu') < 0.25`, 1, 0, ['Yes', 'No'])],
  },
  {
    key: 'covid', label: 'COVID-19 test result', p: 0.8, when: (k) => k === 'covid',
    names: ['covid19_positive', 'COVID_status', 'rt_pcr_result', 'covid_test'],
    renderings: [yesNo(`u(pkey, 'clin:cov') < 0.8`, 'Positive', 'Negative')],
  },
  {
    key: 'phantom', label: 'Phantom model', p: 1, when: (k) => k === 'phantom',
    names: ['phantom_model', 'Phantom', 'phantom_type'],
    renderings: [coded('site_i', ['ACR CT 464', 'CIRS 062M', 'Catphan 600', 'Lungman', 'QIBA DWI phantom'])],
  },
];
