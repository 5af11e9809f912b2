// Building blocks of clinical columns: row-keyed randomness, renderings of a
// latent variable (coded, yes/no, numeric), column and table specs, missing
// values and the rows of a table.

import { lit, weightedCase } from '../../core/data/sql.ts';
import type { PlannedCollection } from '../plan.ts';
import { HISTOLOGY, type Kind } from './kinds.ts';


export type SqlType = 'VARCHAR' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN';
/** (option_code, option_description) pairs of a coded column. */
export type Codes = [string, string | null][];
export type Out = string | number | null;

/** Row-keyed randomness for one column: the key is the row key `rk`, the salt is table.column[:tag]. */
export interface ColCtx {
  u: (tag?: string) => string;
  ui: (tag: string, lo: number, hi: number) => string;
  gauss: (tag: string) => string;
}

/**
 * A column whose values need nothing but its own draw, described by data
 * rather than SQL: the tables of one collection can have hundreds of them,
 * and one list expression over their descriptors binds far faster than as
 * many CASE expressions (see slotValues in generate-clinical.ts).
 */
export interface Slot {
  kind: 'code' | 'int' | 'range' | 'float' | 'bool';
  codes?: string[];
  lo?: number;
  hi?: number;
  base?: number;
  /** Share of NULL. */
  miss: number;
}

export interface ColumnSpec {
  name: string;
  label: string;
  type: SqlType;
  expr: (c: ColCtx) => string;
  codes?: Codes;
  slot?: Slot;
}

export interface TableSpec {
  coll: PlannedCollection;
  short: string;
  /** SQL giving the rows: every g_clin column plus rk (unique row key) and r (row number within the patient). */
  rows: string;
  columns: ColumnSpec[];
}

/** The public clinical dataset of a release, the prefix of clinical_index.table_name. */
export const clinicalDataset = (version: number) => `bigquery-public-data.idc_v${version}_clinical`;


/** A list lookup by a 1-based latent index: outs[latent]. */
export function lookup(latent: string, outs: Out[]): string {
  return `${lit(outs)}[${latent}]`;
}

export function codesOf(outs: Out[], descs?: (string | null)[]): Codes {
  const seen = new Map<string, string | null>();
  outs.forEach((o, i) => {
    if (o === null) return;
    const k = String(o);
    if (!seen.has(k)) seen.set(k, descs ? (descs[i] ?? null) : null);
  });
  return [...seen.entries()];
}

export interface Rendering {
  type: SqlType;
  expr: (c: ColCtx) => string;
  codes?: Codes;
  /** Names specific to this rendering (e.g. a unit in the name); else the concept's. */
  names?: string[];
  /** Label specific to this rendering; else the concept's. */
  label?: string;
}

/** A categorical rendering of a latent index: outs[latent], with optional meanings of the codes. */
export function coded(latent: string, outs: Out[], descs?: (string | null)[], extra: Partial<Rendering> = {}): Rendering {
  const type: SqlType = outs.some((o) => typeof o === 'number') ? 'BIGINT' : 'VARCHAR';
  return { type, expr: () => lookup(latent, outs), codes: codesOf(outs, descs), ...extra };
}

export function yesNo(cond: string, yes: Out, no: Out, descs?: [string, string], extra: Partial<Rendering> = {}): Rendering {
  const type: SqlType = typeof yes === 'number' ? 'BIGINT' : 'VARCHAR';
  return { type, expr: () => `CASE WHEN ${cond} THEN ${lit(yes)} ELSE ${lit(no)} END`, codes: codesOf([yes, no], descs), ...extra };
}

export function num(type: SqlType, expr: string | ((c: ColCtx) => string), extra: Partial<Rendering> = {}): Rendering {
  return { type, expr: typeof expr === 'string' ? () => expr : expr, ...extra };
}

export interface Concept {
  key: string;
  label: string;
  names: string[];
  renderings: Rendering[];
  /** Applicability by collection kind and species. */
  when?: (k: Kind, human: boolean) => boolean;
  /** Chance of being chosen when applicable. */
  p: number;
}


/** 1-based index into a histology list of length n, skewed to the first (most common) entries. */
export function histIndex(n: number): string {
  return `(1 + floor(pow(hist_u, 1.6) * ${n})::INTEGER)`;
}

/** Histology of a kind as text (variant 0) or as ICD-O-3 morphology codes with their meanings (variant 1). */
export function histRendering(k: Kind, variant: number): Rendering {
  const h = HISTOLOGY[k];
  const text = h.map((x) => x[1]);
  if (variant === 1) return coded(histIndex(h.length), h.map((x) => x[0]), text, { label: 'Histology (ICD-O-3 morphology code)' });
  return coded(histIndex(h.length), text);
}

// ---------------------------------------------------------------------------
// Table layouts.

export function colCtx(salt: string): ColCtx {
  return {
    u: (tag = '') => `u(rk, ${lit(tag ? `${salt}:${tag}` : salt)})`,
    ui: (tag, lo, hi) => `ui(rk, ${lit(`${salt}:${tag}`)}, ${lo}, ${hi})`,
    gauss: (tag) => `gauss(rk, ${lit(`${salt}:${tag}`)})`,
  };
}

/** Wraps a column with a share of missing (NULL) values. */
export function withMissing(col: ColumnSpec, rate: number): ColumnSpec {
  if (rate <= 0) return col;
  return { ...col, expr: (c) => `CASE WHEN ${c.u('na')} < ${lit(rate)} THEN NULL ELSE (${col.expr(c)}) END` };
}

export function patientRows(c: PlannedCollection, short: string, coverage: number): string {
  return `SELECT p.*, p.pkey AS rk, 0 AS r FROM g_clin p WHERE p.idx = ${c.idx} AND (p.prank = 1 OR u(p.pkey, ${lit(`${short}:incl`)}) < ${lit(coverage)})`;
}

export function col(name: string, label: string, type: SqlType, expr: string | ((c: ColCtx) => string), codes?: Codes): ColumnSpec {
  return { name, label, type, expr: typeof expr === 'string' ? () => expr : expr, codes };
}

/** A coded VARCHAR column picking among codes with weights. */
export function wcol(name: string, label: string, codes: [string, string, number][]): ColumnSpec {
  return col(name, label, 'VARCHAR', (c) => weightedCase(codes.map((x) => [x[0], x[2]]), c.u()), codes.map((x) => [x[0], x[1]]));
}
