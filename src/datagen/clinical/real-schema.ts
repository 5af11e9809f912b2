// Clinical tables with the real names and columns of the public clinical
// dataset (data/synth/clinical-tables.json): a column whose name says what it
// holds (age, sex, stage, vital status, ...) renders the matching clinical
// concept in the column's real type; any other column gets plausible values of
// its type (identifiers, day counts, small codes, measurements, flags).

import { readFileSync } from 'node:fs';
import type { PlannedCollection } from '../plan.ts';
import { histRendering, patientRows, withMissing, type Codes, type ColumnSpec, type Rendering, type Slot, type SqlType, type TableSpec } from './columns.ts';
import { CONCEPTS } from './concepts.ts';
import { kindOf } from './kinds.ts';

export interface ClinicalSchema {
  provenance: Record<string, string>;
  tables: Record<string, { collection_id: string; columns: [string, string][] }>;
}

let cached: ClinicalSchema | undefined;

/** Real clinical table layouts, by short table name. */
export function clinicalSchema(): ClinicalSchema {
  cached ??= JSON.parse(readFileSync(new URL('../../../data/synth/clinical-tables.json', import.meta.url), 'utf8')) as ClinicalSchema;
  return cached;
}

const SQL_TYPE: Record<string, SqlType> = { STRING: 'VARCHAR', INTEGER: 'BIGINT', FLOAT: 'DOUBLE', BOOLEAN: 'BOOLEAN', TIMESTAMP: 'VARCHAR' };

/** Column name (lower case) -> concept of concepts.ts; first match wins. */
const CONCEPT_BY_NAME: [RegExp, string][] = [
  [/days_to_death|death_days/, 'death'],
  [/last_?follow|last_known|last_contact|fup_days/, 'lfu'],
  [/days_to_recur|recurrence_days|progression_free|pfs/, 'recur_days'],
  [/(^|_)age(_|$)|^age|entryage|ageatdx/, 'age'],
  [/gender|(^|_)sex(_|$)/, 'sex'],
  [/race/, 'race'],
  [/ethnic/, 'ethnicity'],
  [/vital|alive|deceased|death_1/, 'vital'],
  [/(^|_)(clinical|pathologic|ajcc)_?t(_|$)|t_stage|t_category/, 't'],
  [/(^|_)(clinical|pathologic|ajcc)_?n(_|$)|n_stage|n_category/, 'n'],
  [/(^|_)(clinical|pathologic|ajcc)_?m(_|$)|m_stage|m_category/, 'm'],
  [/stage|tnm/, 'stage'],
  [/histolog|primary_diagnosis|(^|_)pathology$|morphology/, 'hist'],
  [/grade/, 'grade'],
  [/pack_?y/, 'pky'],
  [/smok|tobacco|cigar/, 'smoke'],
  [/bmi|body_mass/, 'bmi'],
  [/height/, 'height'],
  [/weight/, 'weight'],
  [/tumor_size|tr_size|lesion_size|longest_diam|tumour_size/, 'tsize'],
  [/chemo/, 'chemo'],
  [/radiation|radiother/, 'radiation'],
  [/surg|resection/, 'surgery'],
  [/ecog|performance_status/, 'ecog'],
  [/karnofsky|(^|_)kps/, 'kps'],
  [/recur|progress/, 'recur'],
  [/year_of|_year$|dx_year|diagnosis_year/, 'dx_year'],
  [/laterality|(^|_)side$/, 'lat'],
  [/alcohol/, 'alcohol'],
  [/^er$|er_status|estrogen/, 'er'],
  [/^pr$|pr_status|progest/, 'pr'],
  [/her2|hrher/, 'her2'],
  [/menopaus/, 'meno'],
  [/(^|_)psa/, 'psa'],
  [/gleason/, 'gleason'],
  [/(^|_)idh/, 'idh'],
  [/mgmt/, 'mgmt'],
  [/(^|_)hpv/, 'hpv'],
  [/(^|_)afp/, 'afp'],
  [/institution|inst_no|(^|_)site$|center|centre/, 'site'],
];

/** Value pools of coded text columns nothing else describes. */
const TEXT_CODES: string[][] = [
  ['Yes', 'No', 'Unknown'], ['0', '1'], ['1', '2', '3', '9'], ['Positive', 'Negative', 'Not done'], ['A', 'B', 'C', 'D'],
  ['Low', 'Intermediate', 'High'], ['Y', 'N'], ['Present', 'Absent', 'Not assessed'],
];

function hashOf(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

function humanize(name: string): string {
  const s = name.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim();
  return s ? s[0]!.toUpperCase() + s.slice(1) : name;
}

const slotted = (type: SqlType, slot: Slot, codes?: Codes): Omit<ColumnSpec, 'name' | 'label'> => ({
  type,
  expr: () => {
    throw new Error('slot columns are rendered by slotValues');
  },
  slot,
  codes,
});

/** A column by its type alone, keyed by its name so the same column renders the same way. */
function byType(name: string, type: SqlType, realType: string, miss: number): Omit<ColumnSpec, 'name' | 'label'> {
  const n = name.toLowerCase();
  const h = hashOf(n);
  if (realType === 'TIMESTAMP') return { type, expr: (c) => `strftime(base_date::TIMESTAMP + to_seconds(${c.ui('t', 0, 86400 * 900)}), '%Y-%m-%d %H:%M:%S')` };
  if (type === 'BOOLEAN') return slotted(type, { kind: 'bool', miss });
  if (type === 'VARCHAR' && /(^|_)(id|uid|barcode|mrn)$|_id_|patientid|subject|participant|case_|tcia/.test(n)) {
    return { type, expr: () => (/patient|subject|participant|case|tcia/.test(n) ? 'PatientID' : `'ID-' || (100000 + pkey % 900000)::VARCHAR`) };
  }
  if (type === 'BIGINT') {
    if (/day|interval|time|dur|fu$|follow|week/.test(n)) return slotted(type, { kind: 'range', lo: 0, hi: 3000, miss });
    if (/year|yr$/.test(n)) return { type, expr: () => `dx_year::BIGINT` };
    if (/month/.test(n)) return slotted(type, { kind: 'range', lo: 0, hi: 96, miss });
    const k = 1 + (h % 4);
    return slotted(type, { kind: 'int', hi: k, miss }, Array.from({ length: k + 1 }, (_, i) => [String(i), null]));
  }
  if (type === 'DOUBLE') return slotted(type, { kind: 'float', base: [1, 5, 10, 50, 100][h % 5]!, miss });
  const codes = TEXT_CODES[h % TEXT_CODES.length]!;
  return slotted(type, { kind: 'code', codes, miss }, codes.map((x) => [x, null]));
}

/** The rendering of a concept in a column of the given type, if the concept has one. */
function conceptRendering(key: string, type: SqlType, name: string, c: PlannedCollection): Rendering | null {
  if (key === 'hist') {
    const r = histRendering(kindOf(c), /code|icd|morph/.test(name) ? 1 : 0);
    return r.type === type ? r : null;
  }
  const concept = CONCEPTS.find((x) => x.key === key);
  const fits = (concept?.renderings ?? []).filter((r) => r.type === type);
  return fits.length ? fits[hashOf(name) % fits.length]! : null;
}

/** A clinical table with the real name and columns of `short`; `fixed` renders some columns by convention (type permitting). */
export function realSchemaTable(c: PlannedCollection, short: string, columns: [string, string][], fixed: Record<string, ColumnSpec> = {}): TableSpec {
  const out: ColumnSpec[] = [];
  for (const [name, realType] of columns) {
    const type = SQL_TYPE[realType] ?? 'VARCHAR';
    const f = fixed[name];
    if (f && f.type === type) {
      out.push(f);
      continue;
    }
    const lower = name.toLowerCase();
    const key = CONCEPT_BY_NAME.find(([re]) => re.test(lower))?.[1];
    const r = key && realType !== 'TIMESTAMP' ? conceptRendering(key, type, lower, c) : null;
    const h = hashOf(`${short}.${lower}`);
    const miss = h % 3 === 0 ? 0 : (h % 120) / 1000;
    const spec: ColumnSpec = r
      ? { name, label: r.label ?? CONCEPTS.find((x) => x.key === key)?.label ?? humanize(name), type, expr: r.expr, codes: r.codes }
      : { name, label: humanize(name), ...byType(name, type, realType, miss) };
    out.push(spec.slot ? spec : withMissing(spec, miss));
  }
  return { coll: c, short, rows: patientRows(c, short, 0.9 + (hashOf(short) % 10) / 100), columns: out };
}
