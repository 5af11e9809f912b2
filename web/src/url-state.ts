// The whole cohort lives in the URL, in the portal's own filter-link syntax
// (/explore/filters/?Modality=CT&collection_id=nlst&instanceCount_gte=50):
// repeated `<attr>=<value>` for terms and `<attr>_gte` / `_lte` (also the
// portal's `_gt`, `_lt` and `_[e]btw[e]`) for ranges, `<attr>_op=AND` for
// the portal's ALL (a study must have every value), `<attr>_none=1` for the
// None bucket, plus the explorer's own `count` and `tab`. Anything that
// cannot be honoured becomes a note.

import { currentRelease, type AttributeInfo, type Bound, type CountMode, type Filter } from './api.ts';

export const TABS = ['charts', 'collections', 'patients', 'studies', 'series', 'export', 'sql', 'cart', 'changes'] as const;
export type Tab = (typeof TABS)[number];

export interface ViewState {
  filter: Filter;
  count: CountMode;
  tab: Tab;
}

const COUNTS: CountMode[] = ['patients', 'studies', 'series'];
const SUFFIX = /^(.+)_(gte|lte|gt|lt|btw|ebtw|btwe|ebtwe|op|none)$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function emptyFilter(): Filter {
  return { terms: {}, ranges: {} };
}

/** A bound typed for its attribute: a YYYY-MM-DD string for dates, else a finite number; null when it is neither. */
export function parseBound(a: AttributeInfo, raw: string): Bound | null {
  const v = raw.trim();
  if (a.value_format === 'YYYY-MM-DD') {
    const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(v);
    const d = compact ? `${compact[1]}-${compact[2]}-${compact[3]}` : v;
    return DATE.test(d) ? d : null;
  }
  if (v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Two values of a _btw parameter: repeated, "a,b" or "[a,b]". */
function pair(values: string[]): string[] {
  if (values.length >= 2) return values.slice(0, 2);
  return (values[0] ?? '').replace(/^\[|\]$/g, '').split(',');
}

export function parseQuery(search: string, attributes: AttributeInfo[]): { state: ViewState; notes: string[] } {
  const byName = new Map(attributes.map((a) => [a.name, a]));
  const params = new URLSearchParams(search);
  const filter = emptyFilter();
  const notes: string[] = [];
  let count: CountMode = 'patients';
  let tab: Tab = 'charts';
  const keys = [...new Set(params.keys())];
  const allOf: string[] = [];
  for (const key of keys) {
    const values = params.getAll(key).filter((v) => v !== '');
    if (key === 'count') {
      const c = values[0] as CountMode | undefined;
      if (c && COUNTS.includes(c)) count = c;
      else notes.push(`count=${values[0] ?? ''} is not one of ${COUNTS.join(', ')}; counting patients.`);
      continue;
    }
    if (key === 'release') continue; // the release shown (api.ts chooseRelease)
    if (key === 'tab') {
      const t = values[0] as Tab | undefined;
      if (t && (TABS as readonly string[]).includes(t)) tab = t;
      continue;
    }
    const direct = byName.get(key);
    if (direct?.kind === 'term') {
      if (values.length > 0) filter.terms[key] = [...new Set([...(filter.terms[key] ?? []), ...values])];
      continue;
    }
    const m = SUFFIX.exec(key);
    const attr = m ? byName.get(m[1]!) : undefined;
    if (!m || !attr) {
      notes.push(`The link names an attribute this release does not have: ${key}. It was ignored.`);
      continue;
    }
    const op = m[2]!;
    if (op === 'op') {
      if ((values[0] ?? 'OR').toUpperCase() === 'AND') {
        if (attr.kind === 'term' && attr.categorical) allOf.push(attr.name);
        else notes.push(`${key}=AND: only categorical attributes take ALL; the values of ${attr.name} are combined with OR.`);
      }
      continue;
    }
    if (op === 'none') {
      if (attr.kind === 'term' && attr.categorical) filter.terms[attr.name] = [...(filter.terms[attr.name] ?? []), null];
      else notes.push(`${key}: ${attr.name} always has a value; ignored.`);
      continue;
    }
    if (attr.kind !== 'range') {
      notes.push(`${key}: ${attr.name} is not a range attribute; ignored.`);
      continue;
    }
    const r = { ...(filter.ranges[attr.name] ?? {}) };
    const integer = attr.data_type === 'INTEGER';
    const set = (side: 'gte' | 'lte', raw: string | undefined, strict: boolean) => {
      const b = raw === undefined ? null : parseBound(attr, raw);
      if (b === null) {
        notes.push(`${key}=${raw ?? ''} is not a valid ${attr.value_format ?? 'number'}; ignored.`);
        return;
      }
      if (strict && integer && typeof b === 'number') r[side] = side === 'gte' ? Math.floor(b) + 1 : Math.ceil(b) - 1;
      else {
        if (strict) notes.push(`${key}: strict bounds are applied as inclusive (${side === 'gte' ? '>=' : '<='} ${b}).`);
        r[side] = b;
      }
    };
    if (op === 'gte' || op === 'gt') set('gte', values[0], op === 'gt');
    else if (op === 'lte' || op === 'lt') set('lte', values[0], op === 'lt');
    else {
      const [lo, hi] = pair(values);
      set('gte', lo, !op.startsWith('e'));
      set('lte', hi, !op.endsWith('e'));
    }
    if (r.gte !== undefined || r.lte !== undefined) filter.ranges[attr.name] = r;
  }
  for (const name of allOf) {
    const vs = filter.terms[name] ?? [];
    if (vs.includes(null)) notes.push(`${name}_op=AND with ${name}_none: ALL takes values only; the values are combined with OR.`);
    else if (vs.length > 0) {
      filter.all_terms = { ...filter.all_terms, [name]: vs as string[] };
      delete filter.terms[name];
    }
  }
  return { state: { filter, count, tab }, notes };
}

export function toQuery(state: ViewState): string {
  const p = new URLSearchParams();
  // With several releases served, a link names the one it was made on.
  const release = currentRelease();
  if (release !== null) p.set('release', release);
  for (const [name, values] of Object.entries(state.filter.terms)) for (const v of values) p.append(v === null ? `${name}_none` : name, v ?? '1');
  for (const [name, values] of Object.entries(state.filter.all_terms ?? {})) {
    for (const v of values) p.append(name, v);
    p.append(`${name}_op`, 'AND');
  }
  for (const [name, r] of Object.entries(state.filter.ranges)) {
    if (r.gte !== undefined) p.append(`${name}_gte`, String(r.gte));
    if (r.lte !== undefined) p.append(`${name}_lte`, String(r.lte));
  }
  if (state.count !== 'patients') p.set('count', state.count);
  if (state.tab !== 'charts') p.set('tab', state.tab);
  const q = p.toString();
  return q ? `?${q}` : '';
}

/** A copy of the filter with one attribute's term values replaced (removed when empty); `all`: a study must have every value. */
export function withTerms(f: Filter, name: string, values: (string | null)[], all = false): Filter {
  const terms = { ...f.terms };
  const allTerms = { ...f.all_terms };
  delete terms[name];
  delete allTerms[name];
  // ALL is about values: with the None bucket in the selection the values are combined with OR.
  if (all && values.length > 0 && !values.includes(null)) allTerms[name] = values as string[];
  else if (values.length > 0) terms[name] = values;
  return { terms, ranges: f.ranges, ...(Object.keys(allTerms).length > 0 ? { all_terms: allTerms } : {}) };
}

/** A copy of the filter with one attribute's range replaced (removed when it has no bound). */
export function withRange(f: Filter, name: string, r: { gte?: Bound; lte?: Bound } | null): Filter {
  const ranges = { ...f.ranges };
  if (r && (r.gte !== undefined || r.lte !== undefined)) ranges[name] = r;
  else delete ranges[name];
  return { ...f, ranges };
}
