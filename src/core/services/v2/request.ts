// The manifest preview body of /v2, checked in the order and with the words
// of the public interface, so clients written against it see the same 400s.

import { invalidQuery } from '../../errors.ts';
import { compileV2Filter } from '../../filters/v2.ts';
import { pyRepr } from '../../filters/pyrepr.ts';
import { lookupField } from '../../registry/v2-api.ts';
import type { ManifestQuery } from './token.ts';

export interface PreviewRequest {
  name: JsonLike;
  description: JsonLike;
  query: ManifestQuery;
  sql: boolean;
  /** As sent (checked to be a positive integer); null = the default. */
  pageSize: number | null;
}

type JsonLike = unknown;

const COHORT_DEF_KEYS = new Set(['name', 'description', 'filters']);
const BODY_KEYS = new Set(['cohort_def', 'fields', 'counts', 'group_size', 'page_size', 'sql']);

/** Python's str() of a JSON value, as the public interface's messages print values. */
function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** A body boolean: true/false, or the strings "True"/"true"/"False"/"false". */
export function parseBoolean(key: string, v: unknown): boolean {
  if (v === undefined) return false;
  if (v === true || v === 'True' || v === 'true') return true;
  if (v === false || v === 'False' || v === 'false') return false;
  throw invalidQuery(`${pyStr(v)} is an invalid value for ${key}`);
}

export function parsePreviewBody(body: unknown): PreviewRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidQuery('The request body must be a JSON object with cohort_def and fields, e.g. {"cohort_def": {"name": "c", "filters": {"Modality": ["CT"]}}, "fields": ["SeriesInstanceUID"]}.');
  }
  const b = body as Record<string, unknown>;
  if (!('cohort_def' in b)) throw invalidQuery("'cohort_def' is required in the body");
  const def = b.cohort_def;
  if (def === null || typeof def !== 'object' || Array.isArray(def)) {
    throw invalidQuery(`${pyRepr(def)} is not of type 'object'; cohort_def must be an object with name, description and filters`);
  }
  for (const k of Object.keys(def)) if (!COHORT_DEF_KEYS.has(k)) throw invalidQuery(`'${k}' is an invalid cohort_def key`);
  const d = def as Record<string, unknown>;
  const compiled = compileV2Filter(d.filters);
  for (const k of Object.keys(b)) if (!BODY_KEYS.has(k)) throw invalidQuery(`${k} is an invalid body key`);
  if (!('fields' in b)) throw invalidQuery('fields is required in the body');
  const counts = parseBoolean('counts', b.counts);
  const groupSize = parseBoolean('group_size', b.group_size);
  const sql = parseBoolean('sql', b.sql);
  let pageSize: number | null = null;
  if (b.page_size !== undefined && b.page_size !== null) {
    if (typeof b.page_size !== 'number' || !Number.isInteger(b.page_size)) throw invalidQuery('page_size value must be an integer');
    if (b.page_size < 1) throw invalidQuery(`page_size must be at least 1; got ${b.page_size}`);
    pageSize = b.page_size;
  }
  if (!Array.isArray(b.fields)) throw invalidQuery(`${pyRepr(b.fields)} is not of type 'array'; fields is a list of field names (GET /v2/fields)`);
  const fields: string[] = [];
  const seen = new Set<string>();
  for (const f of b.fields as unknown[]) {
    const hit = typeof f === 'string' ? lookupField(f) : undefined;
    if (!hit) throw invalidQuery(`${pyStr(f)} is not a valid field.`);
    // The same name twice (in any casing) is one column.
    if (seen.has(hit.key)) continue;
    seen.add(hit.key);
    fields.push(hit.key);
  }
  if (fields.length === 0 && !counts && !groupSize) {
    throw invalidQuery("If 'fields' is empty, then one or both of 'counts' and 'group_size' must be True");
  }
  return {
    name: d.name ?? '',
    description: d.description ?? '',
    query: { filters: compiled.echo, fields, counts, group_size: groupSize },
    sql,
    pageSize,
  };
}
