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
import type { GenContext } from './generate.ts';
import { prng, type PlannedCollection } from './plan.ts';
import { lit, weightedCase } from '../core/data/sql.ts';
import { CODED_VALUE_STRUCT, TABLE_BY_NAME } from '../core/registry/tables.ts';

type SqlType = 'VARCHAR' | 'BIGINT' | 'DOUBLE';
/** (option_code, option_description) pairs of a coded column. */
type Codes = [string, string | null][];
type Out = string | number | null;

/** Row-keyed randomness for one column: the key is the row key `rk`, the salt is table.column[:tag]. */
interface ColCtx {
  u: (tag?: string) => string;
  ui: (tag: string, lo: number, hi: number) => string;
  gauss: (tag: string) => string;
}

interface ColumnSpec {
  name: string;
  label: string;
  type: SqlType;
  expr: (c: ColCtx) => string;
  codes?: Codes;
}

interface TableSpec {
  coll: PlannedCollection;
  short: string;
  /** SQL giving the rows: every g_clin column plus rk (unique row key) and r (row number within the patient). */
  rows: string;
  columns: ColumnSpec[];
}

const BATCH = 'bigquery-public-data.idc_v24_clinical';

// ---------------------------------------------------------------------------
// Patient-level latent variables, shared by every table of a collection.

const LUNG_SMOKERS = `CASE WHEN collection_id = 'nlst' THEN (CASE WHEN u(pkey, 'clin:smk') < 0.52 THEN 2 ELSE 3 END)
  WHEN kind IN ('lung', 'headneck') THEN (CASE WHEN u(pkey, 'clin:smk') < 0.12 THEN 1 WHEN u(pkey, 'clin:smk') < 0.62 THEN 2 WHEN u(pkey, 'clin:smk') < 0.95 THEN 3 ELSE 4 END)
  ELSE (CASE WHEN u(pkey, 'clin:smk') < 0.45 THEN 1 WHEN u(pkey, 'clin:smk') < 0.75 THEN 2 WHEN u(pkey, 'clin:smk') < 0.9 THEN 3 ELSE 4 END) END`;

async function createLatent(ctx: GenContext): Promise<void> {
  const kinds = ctx.plan.collections.map((c) => [c.idx, kindOf(c)] as const);
  await ctx.run(`CREATE OR REPLACE TABLE g_clin_kind AS SELECT * FROM (VALUES ${kinds.map(([i, k]) => `(${i}, ${lit(k)})`).join(', ')}) t(idx, kind)`);
  await ctx.run(`CREATE TABLE IF NOT EXISTS g_clin AS
    WITH b AS (
      SELECT p.pkey, p.idx, p.collection_id, p.PatientID, p.sex, p.age_base, p.base_date, p.species, p.cancer, p.location, k.kind,
        row_number() OVER (PARTITION BY p.idx ORDER BY u(p.pkey, 'clin:rank'), p.pkey) AS prank
      FROM g_patient p JOIN g_clin_kind k USING (idx)),
    c AS (
      SELECT *,
        CASE WHEN collection_id = 'nlst' THEN (prank = 1 OR u(pkey, 'clin:canc') < 0.07) ELSE TRUE END AS canc,
        CASE sex WHEN 'M' THEN 1 WHEN 'F' THEN 2 WHEN 'O' THEN 3 ELSE 4 END AS sex_i,
        (age_base - (u(pkey, 'clin:agelag') < 0.35)::INTEGER)::BIGINT AS age_dx,
        CASE WHEN u(pkey, 'clin:race') < 0.72 THEN 1 WHEN u(pkey, 'clin:race') < 0.83 THEN 2 WHEN u(pkey, 'clin:race') < 0.91 THEN 3
             WHEN u(pkey, 'clin:race') < 0.92 THEN 4 WHEN u(pkey, 'clin:race') < 0.925 THEN 5 WHEN u(pkey, 'clin:race') < 0.94 THEN 6 ELSE 7 END AS race_i,
        CASE WHEN u(pkey, 'clin:eth') < 0.85 THEN 1 WHEN u(pkey, 'clin:eth') < 0.92 THEN 2 ELSE 3 END AS eth_i,
        CASE WHEN collection_id = 'nlst' AND prank = 1 THEN 7
             WHEN u(pkey, 'clin:stage') < 0.18 THEN 1 WHEN u(pkey, 'clin:stage') < 0.30 THEN 2 WHEN u(pkey, 'clin:stage') < 0.40 THEN 3
             WHEN u(pkey, 'clin:stage') < 0.50 THEN 4 WHEN u(pkey, 'clin:stage') < 0.62 THEN 5 WHEN u(pkey, 'clin:stage') < 0.70 THEN 6
             WHEN u(pkey, 'clin:stage') < 0.95 THEN 7 ELSE 8 END AS stage_i,
        ${LUNG_SMOKERS} AS smoke_i,
        ui(pkey, 'clin:fu', 90, 4200) AS fu_days,
        clampi(round(CASE WHEN sex = 'F' THEN 162 ELSE 176 END + 7 * gauss(pkey, 'clin:h')), 140, 205)::BIGINT AS height_cm,
        round(clampi(27 + 5.5 * gauss(pkey, 'clin:bmi'), 15.5, 55), 1) AS bmi,
        CASE WHEN u(pkey, 'clin:grade') < 0.2 THEN 1 WHEN u(pkey, 'clin:grade') < 0.6 THEN 2 WHEN u(pkey, 'clin:grade') < 0.9 THEN 3 ELSE 4 END AS grade_i,
        u(pkey, 'clin:hist') AS hist_u,
        year(base_date) - (u(pkey, 'clin:dxy') < 0.3)::INTEGER AS dx_year,
        ui(pkey, 'clin:smkage', 13, 25) AS smoke_age,
        CASE WHEN u(pkey, 'clin:lat') < 0.48 THEN 1 WHEN u(pkey, 'clin:lat') < 0.97 THEN 2 ELSE 3 END AS lat_i,
        CASE WHEN u(pkey, 'clin:alc') < 0.55 THEN 1 WHEN u(pkey, 'clin:alc') < 0.9 THEN 2 ELSE 3 END AS alc_i,
        CASE WHEN u(pkey, 'clin:prior') < 0.12 THEN 1 ELSE 2 END AS prior_i,
        CASE WHEN u(pkey, 'clin:er') < 0.75 THEN 1 WHEN u(pkey, 'clin:er') < 0.97 THEN 2 ELSE 3 END AS er_i,
        CASE WHEN u(pkey, 'clin:her2') < 0.15 THEN 1 WHEN u(pkey, 'clin:her2') < 0.95 THEN 2 ELSE 3 END AS her2_i,
        CASE WHEN u(pkey, 'clin:gl') < 0.3 THEN 1 WHEN u(pkey, 'clin:gl') < 0.75 THEN 2 WHEN u(pkey, 'clin:gl') < 0.87 THEN 3 WHEN u(pkey, 'clin:gl') < 0.98 THEN 4 ELSE 5 END AS gleason_i,
        CASE WHEN u(pkey, 'clin:idh') < 0.35 THEN 1 WHEN u(pkey, 'clin:idh') < 0.9 THEN 2 ELSE 3 END AS idh_i,
        CASE WHEN u(pkey, 'clin:mgmt') < 0.4 THEN 1 WHEN u(pkey, 'clin:mgmt') < 0.85 THEN 2 ELSE 3 END AS mgmt_i,
        CASE WHEN u(pkey, 'clin:hpv') < 0.55 THEN 1 WHEN u(pkey, 'clin:hpv') < 0.85 THEN 2 ELSE 3 END AS hpv_i,
        1 + floor(u(pkey, 'clin:site') * 5)::INTEGER AS site_i,
        1 + floor(u(pkey, 'clin:breed') * 8)::INTEGER AS breed_i,
        round(exp(1.8 + 0.8 * gauss(pkey, 'clin:psa')), 2) AS psa,
        round(exp(2.5 + 1.8 * gauss(pkey, 'clin:afp')), 1) AS afp
      FROM b),
    d AS (
      SELECT *,
        [1, 1, 2, 2, 3, 3, 4, NULL][stage_i] AS stage_n,
        round(bmi * height_cm * height_cm / 10000.0, 1) AS weight_kg,
        CASE WHEN smoke_i IN (2, 3) THEN round(CASE WHEN collection_id = 'nlst' THEN 30 + 25 * abs(gauss(pkey, 'clin:pky')) ELSE 8 + 30 * exp(0.5 * gauss(pkey, 'clin:pky')) END, 1) END AS pack_years,
        CASE WHEN u(pkey, 'clin:pr') < CASE WHEN er_i = 1 THEN 0.85 ELSE 0.1 END THEN 1 WHEN u(pkey, 'clin:pr2') < 0.97 THEN 2 ELSE 3 END AS pr_i,
        CASE WHEN age_dx >= 53 THEN 3 WHEN age_dx >= 48 THEN 2 ELSE 1 END AS meno_i
      FROM c)
    SELECT *,
      CASE WHEN u(pkey, 'clin:dead') < CASE WHEN NOT canc THEN 0.06 ELSE 0.08 + 0.12 * coalesce(stage_n, 2) END THEN 2 ELSE 1 END AS vital_i,
      CASE WHEN u(pkey, 'clin:rec') < 0.1 + 0.07 * coalesce(stage_n, 2) THEN 2 ELSE 1 END AS recur_i,
      floor(fu_days * (0.15 + 0.6 * u(pkey, 'clin:recd')))::BIGINT AS recur_days,
      CASE stage_n WHEN 1 THEN 1 + (u(pkey, 'clin:t') < 0.4)::INTEGER WHEN 2 THEN 2 + (u(pkey, 'clin:t') < 0.4)::INTEGER
        WHEN 3 THEN 1 + floor(u(pkey, 'clin:t') * 4)::INTEGER WHEN 4 THEN 1 + floor(u(pkey, 'clin:t') * 4)::INTEGER ELSE 5 END AS t_i,
      CASE stage_n WHEN 1 THEN 1 WHEN 2 THEN 1 + (u(pkey, 'clin:n') < 0.5)::INTEGER WHEN 3 THEN 2 + floor(u(pkey, 'clin:n') * 3)::INTEGER
        WHEN 4 THEN 1 + floor(u(pkey, 'clin:n') * 4)::INTEGER ELSE 5 END AS n_i,
      CASE WHEN stage_n = 4 THEN 2 WHEN stage_n IS NULL THEN 3 ELSE 1 END AS m_i,
      least(3, floor(2.2 * pow(u(pkey, 'clin:ecog'), 1.3) + 0.3 * (coalesce(stage_n, 2) - 1)))::INTEGER + 1 AS ecog_i,
      round(6 + 9 * coalesce(stage_n, 2) + 10 * abs(gauss(pkey, 'clin:tsz')), 0)::BIGINT AS tumor_mm,
      CASE WHEN coalesce(stage_n, 2) <= 1 THEN (CASE WHEN u(pkey, 'clin:tx') < 0.75 THEN 1 WHEN u(pkey, 'clin:tx') < 0.9 THEN 3 ELSE 7 END)
           WHEN stage_n = 2 THEN (CASE WHEN u(pkey, 'clin:tx') < 0.4 THEN 1 WHEN u(pkey, 'clin:tx') < 0.85 THEN 5 ELSE 4 END)
           WHEN stage_n = 3 THEN (CASE WHEN u(pkey, 'clin:tx') < 0.55 THEN 4 WHEN u(pkey, 'clin:tx') < 0.8 THEN 5 ELSE 2 END)
           ELSE (CASE WHEN u(pkey, 'clin:tx') < 0.5 THEN 2 WHEN u(pkey, 'clin:tx') < 0.85 THEN 6 ELSE 7 END) END AS treat_i
    FROM d`);
}

/** Patient latent table, for the /v2 TCGA tables too. */
export async function ensureClinicalLatent(ctx: GenContext): Promise<void> {
  await createLatent(ctx);
}

// ---------------------------------------------------------------------------
// Kinds of collections and their histologies.

type Kind =
  | 'lung' | 'breast' | 'prostate' | 'brain' | 'headneck' | 'liver' | 'kidney' | 'colon' | 'gyn' | 'pancreas'
  | 'sarcoma' | 'heme' | 'skin' | 'covid' | 'phantom' | 'other';

export function kindOf(c: { cancer: string; location: string }): Kind {
  const s = `${c.cancer} ${c.location}`.toLowerCase();
  if (s.includes('covid')) return 'covid';
  if (s.includes('phantom')) return 'phantom';
  if (s.includes('breast')) return 'breast';
  if (s.includes('prostate')) return 'prostate';
  if (/glio|astro|brain|schwannoma|mening/.test(s)) return 'brain';
  if (s.includes('head')) return 'headneck';
  if (/liver|hepat/.test(s)) return 'liver';
  if (/kidney|renal/.test(s)) return 'kidney';
  if (/colon|colorect|rect/.test(s)) return 'colon';
  if (/ovar|uter|endomet|cervi/.test(s)) return 'gyn';
  if (s.includes('pancrea')) return 'pancreas';
  if (s.includes('sarcoma')) return 'sarcoma';
  if (/lymphoma|myeloma|leuk|marrow/.test(s)) return 'heme';
  if (s.includes('melanoma') || s.includes('skin')) return 'skin';
  if (s.includes('lung') || s.includes('chest')) return 'lung';
  return 'other';
}

const HISTOLOGY: Record<Kind, [string, string][]> = {
  lung: [['8140/3', 'Adenocarcinoma'], ['8070/3', 'Squamous cell carcinoma'], ['8046/3', 'Non-small cell carcinoma, NOS'], ['8012/3', 'Large cell carcinoma'], ['8041/3', 'Small cell carcinoma'], ['8560/3', 'Adenosquamous carcinoma']],
  breast: [['8500/3', 'Infiltrating duct carcinoma'], ['8520/3', 'Lobular carcinoma'], ['8522/3', 'Infiltrating duct and lobular carcinoma'], ['8500/2', 'Ductal carcinoma in situ'], ['8480/3', 'Mucinous adenocarcinoma']],
  prostate: [['8550/3', 'Acinar cell carcinoma'], ['8140/3', 'Adenocarcinoma, NOS'], ['8500/3', 'Ductal adenocarcinoma']],
  brain: [['9440/3', 'Glioblastoma'], ['9400/3', 'Astrocytoma, NOS'], ['9450/3', 'Oligodendroglioma, NOS'], ['9401/3', 'Astrocytoma, anaplastic'], ['9382/3', 'Mixed glioma']],
  headneck: [['8070/3', 'Squamous cell carcinoma, NOS'], ['8071/3', 'Squamous cell carcinoma, keratinizing'], ['8083/3', 'Basaloid squamous cell carcinoma'], ['8052/3', 'Papillary squamous cell carcinoma']],
  liver: [['8170/3', 'Hepatocellular carcinoma, NOS'], ['8160/3', 'Cholangiocarcinoma'], ['8171/3', 'Hepatocellular carcinoma, fibrolamellar']],
  kidney: [['8310/3', 'Clear cell adenocarcinoma, NOS'], ['8260/3', 'Papillary adenocarcinoma, NOS'], ['8317/3', 'Renal cell carcinoma, chromophobe type'], ['8290/0', 'Oncocytoma']],
  colon: [['8140/3', 'Adenocarcinoma, NOS'], ['8480/3', 'Mucinous adenocarcinoma'], ['8490/3', 'Signet ring cell carcinoma']],
  gyn: [['8441/3', 'Serous cystadenocarcinoma, NOS'], ['8380/3', 'Endometrioid adenocarcinoma, NOS'], ['8310/3', 'Clear cell adenocarcinoma, NOS'], ['8980/3', 'Carcinosarcoma, NOS']],
  pancreas: [['8500/3', 'Infiltrating duct carcinoma, NOS'], ['8246/3', 'Neuroendocrine carcinoma, NOS'], ['8470/3', 'Mucinous cystadenocarcinoma, NOS']],
  sarcoma: [['8890/3', 'Leiomyosarcoma, NOS'], ['8850/3', 'Liposarcoma, NOS'], ['8802/3', 'Giant cell sarcoma'], ['9040/3', 'Synovial sarcoma, NOS'], ['8811/3', 'Myxofibrosarcoma']],
  heme: [['9680/3', 'Diffuse large B-cell lymphoma'], ['9690/3', 'Follicular lymphoma, NOS'], ['9650/3', 'Hodgkin lymphoma, NOS'], ['9732/3', 'Plasma cell myeloma']],
  skin: [['8743/3', 'Superficial spreading melanoma'], ['8721/3', 'Nodular melanoma'], ['8744/3', 'Acral lentiginous melanoma'], ['8742/3', 'Lentigo maligna melanoma']],
  covid: [],
  phantom: [],
  other: [['8140/3', 'Adenocarcinoma, NOS'], ['8070/3', 'Squamous cell carcinoma, NOS'], ['8010/3', 'Carcinoma, NOS'], ['8246/3', 'Neuroendocrine carcinoma, NOS']],
};

// ---------------------------------------------------------------------------
// Column building blocks.

/** A list lookup by a 1-based latent index: outs[latent]. */
function lookup(latent: string, outs: Out[]): string {
  return `${lit(outs)}[${latent}]`;
}

function codesOf(outs: Out[], descs?: (string | null)[]): Codes {
  const seen = new Map<string, string | null>();
  outs.forEach((o, i) => {
    if (o === null) return;
    const k = String(o);
    if (!seen.has(k)) seen.set(k, descs ? (descs[i] ?? null) : null);
  });
  return [...seen.entries()];
}

interface Rendering {
  type: SqlType;
  expr: (c: ColCtx) => string;
  codes?: Codes;
  /** Names specific to this rendering (e.g. a unit in the name); else the concept's. */
  names?: string[];
  /** Label specific to this rendering; else the concept's. */
  label?: string;
}

/** A categorical rendering of a latent index: outs[latent], with optional meanings of the codes. */
function coded(latent: string, outs: Out[], descs?: (string | null)[], extra: Partial<Rendering> = {}): Rendering {
  const type: SqlType = outs.some((o) => typeof o === 'number') ? 'BIGINT' : 'VARCHAR';
  return { type, expr: () => lookup(latent, outs), codes: codesOf(outs, descs), ...extra };
}

function yesNo(cond: string, yes: Out, no: Out, descs?: [string, string], extra: Partial<Rendering> = {}): Rendering {
  const type: SqlType = typeof yes === 'number' ? 'BIGINT' : 'VARCHAR';
  return { type, expr: () => `CASE WHEN ${cond} THEN ${lit(yes)} ELSE ${lit(no)} END`, codes: codesOf([yes, no], descs), ...extra };
}

function num(type: SqlType, expr: string | ((c: ColCtx) => string), extra: Partial<Rendering> = {}): Rendering {
  return { type, expr: typeof expr === 'string' ? () => expr : expr, ...extra };
}

interface Concept {
  key: string;
  label: string;
  names: string[];
  renderings: Rendering[];
  /** Applicability by collection kind and species. */
  when?: (k: Kind, human: boolean) => boolean;
  /** Chance of being chosen when applicable. */
  p: number;
}

const SEX_DESC = ['Male', 'Female', 'Other', 'Unknown'];
const RACE = ['White', 'Black or African American', 'Asian', 'American Indian or Alaska Native', 'Native Hawaiian or Other Pacific Islander', 'More than one race', 'Unknown'];
const ETH = ['Not Hispanic or Latino', 'Hispanic or Latino', 'Unknown'];
const STAGES = ['Stage IA', 'Stage IB', 'Stage IIA', 'Stage IIB', 'Stage IIIA', 'Stage IIIB', 'Stage IV', null];
const TREAT = ['Surgery', 'Chemotherapy', 'Radiation therapy', 'Chemoradiation', 'Surgery and adjuvant chemotherapy', 'Immunotherapy', 'None'];
const ECOG = ['Fully active', 'Restricted in physically strenuous activity', 'Ambulatory and capable of all self-care', 'Capable of only limited self-care'];
const RECEPTOR = ['Positive', 'Negative', 'Indeterminate'];
const BREEDS = ['Boxer', 'Boston Terrier', 'English Bulldog', 'Mixed breed', 'Golden Retriever', 'Labrador Retriever', 'French Bulldog', 'Pit Bull'];

const human = (_k: Kind, h: boolean) => h;
const cancerKind = (k: Kind) => k !== 'covid' && k !== 'phantom';
const staged = (k: Kind) => cancerKind(k) && k !== 'brain' && k !== 'heme';

const CONCEPTS: Concept[] = [
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

/** 1-based index into a histology list of length n, skewed to the first (most common) entries. */
function histIndex(n: number): string {
  return `(1 + floor(pow(hist_u, 1.6) * ${n})::INTEGER)`;
}

/** Histology of a kind as text (variant 0) or as ICD-O-3 morphology codes with their meanings (variant 1). */
function histRendering(k: Kind, variant: number): Rendering {
  const h = HISTOLOGY[k];
  const text = h.map((x) => x[1]);
  if (variant === 1) return coded(histIndex(h.length), h.map((x) => x[0]), text, { label: 'Histology (ICD-O-3 morphology code)' });
  return coded(histIndex(h.length), text);
}

// ---------------------------------------------------------------------------
// Table layouts.

function colCtx(salt: string): ColCtx {
  return {
    u: (tag = '') => `u(rk, ${lit(tag ? `${salt}:${tag}` : salt)})`,
    ui: (tag, lo, hi) => `ui(rk, ${lit(`${salt}:${tag}`)}, ${lo}, ${hi})`,
    gauss: (tag) => `gauss(rk, ${lit(`${salt}:${tag}`)})`,
  };
}

/** Wraps a column with a share of missing (NULL) values. */
function withMissing(col: ColumnSpec, rate: number): ColumnSpec {
  if (rate <= 0) return col;
  return { ...col, expr: (c) => `CASE WHEN ${c.u('na')} < ${lit(rate)} THEN NULL ELSE (${col.expr(c)}) END` };
}

function patientRows(c: PlannedCollection, short: string, coverage: number): string {
  return `SELECT p.*, p.pkey AS rk, 0 AS r FROM g_clin p WHERE p.idx = ${c.idx} AND (p.prank = 1 OR u(p.pkey, ${lit(`${short}:incl`)}) < ${lit(coverage)})`;
}

function col(name: string, label: string, type: SqlType, expr: string | ((c: ColCtx) => string), codes?: Codes): ColumnSpec {
  return { name, label, type, expr: typeof expr === 'string' ? () => expr : expr, codes };
}

/** A coded VARCHAR column picking among codes with weights. */
function wcol(name: string, label: string, codes: [string, string, number][]): ColumnSpec {
  return col(name, label, 'VARCHAR', (c) => weightedCase(codes.map((x) => [x[0], x[2]]), c.u()), codes.map((x) => [x[0], x[1]]));
}


function genericTable(c: PlannedCollection, short: string, seed: number): TableSpec {
  const rnd = prng(`clinical:${seed}:${short}`);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const k = kindOf(c);
  const isHuman = c.species === 'Human';
  const used = new Set<string>(['dicom_patient_id', 'source_batch']);
  const columns: ColumnSpec[] = [];
  const take = (names: string[]): string | null => {
    const free = names.filter((n) => !used.has(n.toLowerCase()));
    if (free.length === 0) return null;
    const n = pick(free);
    used.add(n.toLowerCase());
    return n;
  };
  if (rnd() < 0.4) {
    const n = take(['Case_ID', 'PatientID', 'subject_id', 'record_id', 'Patient_ID', 'case_submitter_id', 'Subject'])!;
    columns.push(col(n, 'Patient identifier in the source data', 'VARCHAR', 'PatientID'));
  }
  const applicable = CONCEPTS.filter((x) => (x.when ? x.when(k, isHuman) : true));
  const head = applicable.filter((x) => x.key === 'age' || x.key === 'sex');
  const rest = applicable.filter((x) => x.key !== 'age' && x.key !== 'sex');
  // Shuffle the rest deterministically, then keep each with its chance.
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  const maxCols = 4 + Math.floor(rnd() * 14);
  const chosen = [...head.filter((x) => rnd() < (x.key === 'sex' && c.sex ? 0.6 : x.p)), ...rest.filter((x) => rnd() < x.p).slice(0, maxCols)];
  for (const concept of chosen) {
    const rendering = concept.key === 'hist' ? histRendering(k, rnd() < 0.3 ? 1 : 0) : pick(concept.renderings);
    const name = take(rendering.names ?? concept.names);
    if (!name) continue;
    const spec: ColumnSpec = { name, label: rendering.label ?? concept.label, type: rendering.type, expr: rendering.expr, codes: rendering.codes };
    const miss = rnd() < 0.5 ? 0 : Math.round(rnd() * 80) / 1000;
    columns.push(withMissing(spec, miss));
  }
  const coverage = 0.85 + Math.round(rnd() * 15) / 100;
  return { coll: c, short, rows: patientRows(c, short, coverage), columns };
}

// NLST: five tables shaped like the CDAS files (participant, screening,
// abnormalities, abnormality comparisons, cancers), with SAS-style missing codes.

const NLST_STAGE: Codes = [
  ['110', 'Stage IA'], ['120', 'Stage IB'], ['210', 'Stage IIA'], ['220', 'Stage IIB'], ['310', 'Stage IIIA'], ['320', 'Stage IIIB'],
  ['400', 'Stage IV'], ['900', 'Occult carcinoma'], ['994', 'Carcinoid, cannot be assessed'], ['.M', 'Missing'],
];
const NLST_STAGE_BY_LATENT = ['110', '120', '210', '220', '310', '320', '400', '.M'];
const pid = col('pid', 'Participant identifier', 'BIGINT', 'PatientID::BIGINT');

function nlstTables(c: PlannedCollection): TableSpec[] {
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

// EA1141 (abbreviated breast MRI vs tomosynthesis screening trial): seven tables.

function ea1141Tables(c: PlannedCollection): TableSpec[] {
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

// TCGA collections: GDC-style clinical tables.

function tcgaTable(c: PlannedCollection, short: string): TableSpec {
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
    col('tissue_or_organ_of_origin', 'Tissue or organ of origin', 'VARCHAR', lit(`${c.location}, NOS`)),
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
function tableSpecs(ctx: GenContext): TableSpec[] {
  const specs: TableSpec[] = [];
  for (const c of ctx.plan.collections) {
    if (!(c.supporting ?? '').includes('Clinical')) continue;
    if (c.id === 'nlst') specs.push(...nlstTables(c));
    else if (c.id === 'ea1141') specs.push(...ea1141Tables(c));
    else {
      const names = c.clinicalTables ?? [`${c.id}_clinical`];
      for (const n of names) specs.push(c.program === 'TCGA' ? tcgaTable(c, n) : genericTable(c, n, ctx.seed));
    }
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
      dict.push(`(${lit(t.coll.id)}, ${lit(`${BATCH}.${t.short}`)}, ${lit(t.short)}, ${lit(cs.name)}, ${lit(cs.label)}, ${structList(cs.codes)}, ${i})`);
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
