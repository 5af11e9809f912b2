// The /v2 filter set: {attribute: [values], <ranged>_<suffix>: [bounds]}
// compiled to parameterized conditions on the tables behind /v2. Names are
// matched case-insensitively and, as in JSON, a later occurrence of the same
// attribute replaces an earlier one. Values of one filter are ORed; filters
// are ANDed, including two suffixes of the same ranged attribute (the spec's
// rule; the public service ORed them). Strings match case-insensitively with
// '%' as a wildcard in any value. Filters on the TCGA tables select patients
// through case_barcode = PatientID: a patient without a TCGA row satisfies no
// TCGA filter, so non-TCGA patients are excluded by them.

import { invalidQuery } from '../errors.ts';
import type { Param } from '../engine/engine.ts';
import { RANGE_ARITY, lookupFilter, type RangeSuffix, type V2FilterName } from '../registry/v2-api.ts';
import { qi } from '../registry/tables.ts';
import { PER_INSTANCE_COLUMNS } from '../registry/v2.ts';
import { pyRepr } from './pyrepr.ts';
import { beyondInt64, int64Param } from './v3.ts';

/** A piece of SQL with the values it binds, in order. */
export interface Sql {
  text: string;
  params: Param[];
}

export interface CompiledV2Filter {
  /** The filter set as applied: canonical names, collection_id values normalized, others as sent. */
  echo: Record<string, (string | number)[]>;
  /** Conditions on dicom_series (alias `s`). */
  series: Sql[];
  /** Conditions on dicom_instances (alias `i`). */
  instance: Sql[];
  /** Conditions on tcga_clinical_rel9 / tcga_biospecimen_rel9 rows (alias `t`), ANDed within a table. */
  clinical: Sql[];
  biospecimen: Sql[];
}

/** Filters on per-instance columns read dicom_instances; every other dicom_pivot filter is per series. */
const INSTANCE_FILTER_COLUMNS = new Set(PER_INSTANCE_COLUMNS);

/** dicom_pivot filters over non-text columns compare their text form. */
const NON_TEXT_COLUMNS = new Set(['SamplesPerPixel']);

/** collection_id values are normalized as the public service does: lower case, '-' and ' ' become '_'. */
export function normalizeCollectionId(v: string): string {
  return v.toLowerCase().replace(/[- ]/g, '_');
}

function schemaError(value: unknown, message: string, keyword: string, schemaPath: string[], instancePath: (string | number)[]): never {
  const path = (p: (string | number)[]) => p.map((x) => `[${pyRepr(x)}]`).join(',');
  throw invalidQuery(`${pyRepr(value)} ${message}; Failed validating ${keyword} in schema ${path(schemaPath)} on instance ${path(instancePath)}`);
}

/** Check a filter's value list against its type (the public interface's JSON schema, same wording). */
function checkValues(f: V2FilterName, values: unknown): (string | number)[] {
  const schema = ['properties', f.name];
  if (!Array.isArray(values)) schemaError(values, "is not of type 'array'", 'type', schema, [f.name]);
  const t = f.attribute.type;
  const ranged = f.suffix !== null;
  const exact = ranged ? RANGE_ARITY[f.suffix!] : t === 'Categorical Numeric' ? 1 : null;
  if (values.length < (exact ?? 1)) schemaError(values, 'is too short', 'minItems', schema, [f.name]);
  if (exact !== null && values.length > exact) schemaError(values, 'is too long', 'maxItems', schema, [f.name]);
  const itemType = t === 'Ranged Integer' ? 'integer' : t === 'Ranged Number' || t === 'Categorical Numeric' ? 'number' : 'string';
  values.forEach((v, i) => {
    const ok =
      itemType === 'string' ? typeof v === 'string' : typeof v === 'number' && Number.isFinite(v) && (itemType === 'number' || Number.isInteger(v));
    if (!ok) schemaError(v, `is not of type '${itemType}'`, 'type', [...schema, 'items'], [f.name, i]);
    // Numbers are bound as the engine's 64-bit integers when whole: beyond them nothing can be compared.
    if (typeof v === 'number' && beyondInt64(v)) {
      schemaError(v, `is out of range (bounds must lie between -9223372036854775808 and 9223372036854775807)`, 'maximum', [...schema, 'items'], [f.name, i]);
    }
  });
  return values as (string | number)[];
}

const LIKE_ESCAPE = /[\\_]/g;
/** Only digits and separators: lower() cannot change either side, so plain equality is exact (and faster). */
const CASELESS = /^[0-9.\-: /]*$/;

function stringCondition(column: string, values: string[]): Sql {
  const likes = values.filter((v) => v.includes('%')).map((v) => v.replace(LIKE_ESCAPE, (c) => `\\${c}`));
  const plain = values.filter((v) => !v.includes('%') && CASELESS.test(v));
  const folded = values.filter((v) => !v.includes('%') && !CASELESS.test(v)).map((v) => v.toLowerCase());
  const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
  const ors: string[] = [];
  // The public interface's special value: "None" also matches a missing value.
  if (values.includes('None')) ors.push(`${column} IS NULL`);
  for (let k = 0; k < likes.length; k++) ors.push(`lower(${column}) LIKE lower(?) ESCAPE '\\'`);
  if (plain.length) ors.push(plain.length === 1 ? `${column} = ?` : `${column} IN (${marks(plain.length)})`);
  if (folded.length) ors.push(folded.length === 1 ? `lower(${column}) = ?` : `lower(${column}) IN (${marks(folded.length)})`);
  return { text: ors.length === 1 ? ors[0]! : `(${ors.join(' OR ')})`, params: [...likes, ...plain, ...folded] };
}

const RANGE_SQL: Record<RangeSuffix, [string, string?]> = {
  eq: ['='],
  gt: ['>'],
  gte: ['>='],
  lt: ['<'],
  lte: ['<='],
  btw: ['>', '<'],
  ebtw: ['>=', '<'],
  btwe: ['>', '<='],
  ebtwe: ['>=', '<='],
};

function rangeCondition(column: string, f: V2FilterName, values: number[]): Sql {
  const [lo, hi] = RANGE_SQL[f.suffix!];
  if (!hi) return { text: `${column} ${lo} ?`, params: [int64Param(values[0]!)] };
  if (values[0]! > values[1]!) {
    throw invalidQuery(`${f.name} takes its two values least first; got ${pyRepr(values)}. Send [${values[1]}, ${values[0]}].`);
  }
  return { text: `(${column} ${lo} ? AND ${column} ${hi} ?)`, params: [int64Param(values[0]!), int64Param(values[1]!)] };
}

/** Compile a filter set (the `filters` member of cohort_def); an absent or empty set selects everything. */
export function compileV2Filter(filters: unknown): CompiledV2Filter {
  const out: CompiledV2Filter = { echo: {}, series: [], instance: [], clinical: [], biospecimen: [] };
  if (filters === undefined || filters === null) return out;
  if (typeof filters !== 'object' || Array.isArray(filters)) {
    throw invalidQuery(`${pyRepr(filters)} is not of type 'object'; Failed validating type in schema ['properties'],['filters'] on instance ['filters']`);
  }
  // Names first (all of them), then values: the order the public interface reports errors in.
  const named = new Map<string, { f: V2FilterName; raw: unknown }>();
  for (const [name, raw] of Object.entries(filters)) {
    const f = lookupFilter(name);
    if (!f) throw invalidQuery(`${name} is not a valid filter.`);
    named.delete(f.name); // a later occurrence replaces an earlier one, and takes its place
    named.set(f.name, { f, raw });
  }
  for (const { f, raw } of named.values()) {
    let values = checkValues(f, raw);
    if (f.attribute.name === 'collection_id') values = (values as string[]).map(normalizeCollectionId);
    out.echo[f.name] = values;
    const a = f.attribute;
    const alias = a.source === 'dicom_pivot' ? (INSTANCE_FILTER_COLUMNS.has(a.name) ? 'i' : 's') : 't';
    const column = NON_TEXT_COLUMNS.has(a.name) ? `CAST(${alias}.${qi(a.name)} AS VARCHAR)` : `${alias}.${qi(a.name)}`;
    const cond =
      f.suffix !== null
        ? rangeCondition(column, f, values as number[])
        : a.type === 'Categorical Numeric'
          ? { text: `${column} = ?`, params: [values[0]!] }
          : stringCondition(column, values as string[]);
    if (a.source === 'tcga_clinical_rel9') out.clinical.push(cond);
    else if (a.source === 'tcga_biospecimen_rel9') out.biospecimen.push(cond);
    else if (alias === 'i') out.instance.push(cond);
    else out.series.push(cond);
  }
  return out;
}
