// Citations of a cohort, produced offline from the bibliography stored with
// the dataset, else from the release's own citation texts (release-citations.ts):
// one citation per distinct source DOI of the matching series, plus the data
// platform's own paper. Formats: APA 7, BibTeX, RIS, CSL-JSON.
// A DOI without a stored record still gets a (DOI-only) citation and is
// reported in missing_metadata; nothing is dropped silently.

import type { AppContext } from '../context.ts';
import { memo } from '../context.ts';
import { PLATFORM_CITATION } from '../data/platform-citation.ts';
import type { BibRecord } from '../data/manifest.ts';
import { field, invalidQuery, msg } from '../errors.ts';
import { compileFilter, type CompiledFilter, type FilterObject } from '../filters/v3.ts';
import { releaseCitations } from './release-citations.ts';
import { asOfCohort } from './as-of.ts';
import { toNumber } from './numbers.ts';

export const CITATION_FORMATS = ['apa', 'bibtex', 'csl-json', 'ris'] as const;
export type CitationFormat = (typeof CITATION_FORMATS)[number];
export const DEFAULT_CITATION_FORMAT: CitationFormat = 'apa';
export const PLATFORM_DOI = PLATFORM_CITATION.doi;

type Author = BibRecord['authors'][number];
type Person = { family: string; given: string };

export type CslName = { family: string; given?: string } | { literal: string };

export interface CslItem {
  id: string;
  type: 'dataset' | 'article-journal';
  title?: string;
  author?: CslName[];
  issued?: { 'date-parts': number[][] };
  DOI: string;
  URL: string;
  publisher?: string;
  'container-title'?: string;
  volume?: string;
  issue?: string;
  page?: string;
  note?: string;
}

export type Citation = string | CslItem;

/** A DOI of the cohort and its stored record (null when neither the bibliography nor the release has one). */
export interface DoiRecord {
  doi: string;
  record: BibRecord | null;
  /** The release's own APA text (plain), when the record comes from it. */
  apa?: string;
}

export interface FormattedCitations {
  citations: Citation[];
  idc_acknowledgment: Citation;
}

export interface CitationsResult {
  format: CitationFormat;
  count: number;
  /** DOIs of the cohort, in the order of citations. */
  dois: string[];
  citations: Citation[];
  /** DOIs for which no bibliographic record is stored; their citations carry the DOI only. */
  missing_metadata: string[];
  idc_acknowledgment: Citation;
  recommendation: string;
  filters_applied: CompiledFilter['filters_applied'];
  warnings: string[];
  as_of?: string;
  computed_on?: string;
}

const MISSING_NOTE = 'Bibliographic metadata for this DOI is not available offline; resolve the DOI for authors, title and year.';

export function parseCitationFormat(raw: string | null | undefined): CitationFormat {
  if (raw === undefined || raw === null) return DEFAULT_CITATION_FORMAT;
  const f = raw.trim().toLowerCase();
  if ((CITATION_FORMATS as readonly string[]).includes(f)) return f as CitationFormat;
  throw invalidQuery(msg`Unknown ${field('citation_format')} ${JSON.stringify(raw)}. Choose one of: ${CITATION_FORMATS.join(', ')} (default ${DEFAULT_CITATION_FORMAT}).`);
}

// ---------------------------------------------------------------------------
// Helpers

function isPerson(a: Author): a is Person {
  return 'family' in a;
}

function doiUrl(doi: string): string {
  return `https://doi.org/${doi}`;
}

/** One line of text: no line breaks, single spaces. */
function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function hasYear(r: BibRecord): boolean {
  return Number.isInteger(r.year) && r.year > 0;
}

// ---------------------------------------------------------------------------
// APA 7

/** "William J. R." -> "W. J. R."; "Jean-Paul" -> "J.-P.". */
export function apaInitials(given: string): string {
  return given
    .split(/\s+/)
    .filter(Boolean)
    .map((word) =>
      word
        .split('-')
        .map((part) => {
          const m = /\p{L}/u.exec(part);
          return m ? `${m[0].toUpperCase()}.` : '';
        })
        .filter(Boolean)
        .join('-'),
    )
    .filter(Boolean)
    .join(' ');
}

function apaName(a: Author): string {
  if (!isPerson(a)) return oneLine(a.literal);
  const init = apaInitials(a.given ?? '');
  return init ? `${oneLine(a.family)}, ${init}` : oneLine(a.family);
}

/** APA 7 author list: up to 20 names with "&" before the last; 21 or more: first 19, ". . .", last. */
export function apaAuthors(authors: Author[]): string {
  const names = authors.map(apaName).filter(Boolean);
  if (names.length === 0) return '';
  if (names.length === 1) return names[0]!;
  if (names.length <= 20) return `${names.slice(0, -1).join(', ')}, & ${names[names.length - 1]}`;
  return `${names.slice(0, 19).join(', ')}, . . . ${names[names.length - 1]}`;
}

function endWithPeriod(s: string): string {
  return /[.?!]$/.test(s) ? s : `${s}.`;
}

export function formatApa(r: BibRecord): string {
  const year = hasYear(r) ? String(r.year) : 'n.d.';
  const title = oneLine(r.title ?? '');
  const authors = apaAuthors(r.authors ?? []);
  const url = r.doi ? doiUrl(r.doi) : r.url;
  let work: string;
  let source: string;
  if (r.type === 'article') {
    work = endWithPeriod(title);
    const journal = oneLine(r.container_title ?? '');
    let issue = r.volume ? `, ${r.volume}${r.issue ? `(${r.issue})` : ''}` : '';
    if (r.pages) issue += `, ${r.pages}`;
    source = journal ? `${journal}${issue}.` : '';
  } else {
    work = `${title.replace(/\.$/, '')} [Data set].`;
    const publisher = oneLine(r.publisher ?? '');
    // APA omits the publisher when it is also the (group) author.
    const sameAsAuthor = (r.authors ?? []).length === 1 && !isPerson(r.authors[0]!) && oneLine(r.authors[0]!.literal) === publisher;
    source = publisher && !sameAsAuthor ? endWithPeriod(publisher) : '';
  }
  const parts = authors ? [endWithPeriod(authors), `(${year}).`, work] : [work, `(${year}).`];
  if (source) parts.push(source);
  if (url) parts.push(url);
  return parts.join(' ');
}

function apaMissing(doi: string): string {
  return `${doiUrl(doi)} [${MISSING_NOTE}]`;
}

// ---------------------------------------------------------------------------
// BibTeX

const BIB_ESCAPES: Record<string, string> = {
  '\\': '\\textbackslash{}',
  '{': '\\{',
  '}': '\\}',
  '&': '\\&',
  '%': '\\%',
  $: '\\$',
  '#': '\\#',
  _: '\\_',
  '~': '\\textasciitilde{}',
  '^': '\\textasciicircum{}',
};

/** Escape text for a BibTeX field so braces always balance and LaTeX specials print as themselves. */
export function bibEscape(s: string): string {
  return oneLine(s).replace(/[\\{}&%$#_~^]/g, (c) => BIB_ESCAPES[c]!);
}

/** DOI and URL fields are taken verbatim by biblatex/url; only characters that would break the field are encoded. */
function bibVerbatim(s: string): string {
  return oneLine(s).replace(/[{}\\]/g, (c) => encodeURIComponent(c));
}

function asciiWord(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

const TITLE_STOPWORDS = new Set(['a', 'an', 'the', 'of', 'and', 'for', 'from', 'in', 'on', 'to', 'with', 'data', 'dataset']);

function bibKeyBase(r: BibRecord): string {
  const first = r.authors?.[0];
  const who = first ? asciiWord(isPerson(first) ? first.family : (first.literal.split(/\s+/)[0] ?? '')) : '';
  const word = (r.title ?? '').split(/\s+/).map(asciiWord).find((w) => w.length > 2 && !TITLE_STOPWORDS.has(w)) ?? '';
  const base = `${who || 'anon'}${hasYear(r) ? r.year : ''}${word}`;
  return base || 'ref';
}

/** Citation keys unique within one response: a, b, c... appended on collisions. */
export class KeyRegistry {
  private readonly used = new Set<string>();
  take(base: string): string {
    let key = base;
    for (let i = 0; this.used.has(key); i++) key = `${base}${suffix(i)}`;
    this.used.add(key);
    return key;
  }
}

function suffix(i: number): string {
  let s = '';
  let n = i;
  do {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return s;
}

function bibEntry(type: string, key: string, fields: [string, string | undefined][]): string {
  const body = fields.filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => `  ${k} = {${v}}`);
  return `@${type}{${key},\n${body.join(',\n')}\n}`;
}

export function formatBibtex(r: BibRecord, keys: KeyRegistry = new KeyRegistry()): string {
  const authors = (r.authors ?? []).map((a) => (isPerson(a) ? `${bibEscape(a.family)}, ${bibEscape(a.given ?? '')}`.replace(/, $/, '') : `{${bibEscape(a.literal)}}`));
  const common: [string, string | undefined][] = [
    ['author', authors.length ? authors.join(' and ') : undefined],
    ['title', r.title ? `{${bibEscape(r.title)}}` : undefined],
    ['year', hasYear(r) ? String(r.year) : undefined],
  ];
  const tail: [string, string | undefined][] = [
    ['doi', r.doi ? bibVerbatim(r.doi) : undefined],
    ['url', bibVerbatim(r.doi ? doiUrl(r.doi) : r.url)],
  ];
  const key = keys.take(bibKeyBase(r));
  if (r.type === 'article') {
    return bibEntry('article', key, [
      ...common,
      ['journal', r.container_title ? bibEscape(r.container_title) : undefined],
      ['volume', r.volume ? bibEscape(r.volume) : undefined],
      ['number', r.issue ? bibEscape(r.issue) : undefined],
      ['pages', r.pages ? bibEscape(r.pages).replace(/(\d)-(\d)/, '$1--$2') : undefined],
      ['publisher', r.publisher ? bibEscape(r.publisher) : undefined],
      ...tail,
    ]);
  }
  return bibEntry('misc', key, [...common, ['publisher', r.publisher ? bibEscape(r.publisher) : undefined], ['howpublished', 'Data set'], ...tail]);
}

function bibtexMissing(doi: string, keys: KeyRegistry): string {
  const key = keys.take(`doi${asciiWord(doi.replace(/[./]/g, ' ').replace(/\s+/g, '')).slice(0, 40)}`);
  return bibEntry('misc', key, [
    ['doi', bibVerbatim(doi)],
    ['url', bibVerbatim(doiUrl(doi))],
    ['note', bibEscape(MISSING_NOTE)],
  ]);
}

// ---------------------------------------------------------------------------
// RIS

function risLines(pairs: [string, string | undefined][]): string {
  const lines = pairs.filter(([, v]) => v !== undefined && v !== '').map(([tag, v]) => `${tag}  - ${oneLine(v!)}`);
  return [...lines, 'ER  - '].join('\n');
}

export function formatRis(r: BibRecord): string {
  const pairs: [string, string | undefined][] = [['TY', r.type === 'article' ? 'JOUR' : 'DATA']];
  for (const a of r.authors ?? []) pairs.push(['AU', isPerson(a) ? (a.given ? `${a.family}, ${a.given}` : a.family) : a.literal]);
  pairs.push(['TI', r.title], ['PY', hasYear(r) ? String(r.year) : undefined]);
  if (r.type === 'article') {
    const [sp, ep] = (r.pages ?? '').split(/\s*[-–]+\s*/);
    pairs.push(['T2', r.container_title], ['VL', r.volume], ['IS', r.issue], ['SP', sp || undefined], ['EP', ep || undefined]);
  }
  pairs.push(['PB', r.publisher], ['DO', r.doi], ['UR', r.doi ? doiUrl(r.doi) : r.url]);
  return risLines(pairs);
}

function risMissing(doi: string): string {
  return risLines([
    ['TY', 'DATA'],
    ['DO', doi],
    ['UR', doiUrl(doi)],
    ['N1', MISSING_NOTE],
  ]);
}

// ---------------------------------------------------------------------------
// CSL-JSON

export function formatCsl(r: BibRecord): CslItem {
  const item: CslItem = {
    id: r.doi,
    type: r.type === 'article' ? 'article-journal' : 'dataset',
    title: r.title,
    author: (r.authors ?? []).map((a): CslName => (isPerson(a) ? (a.given ? { family: a.family, given: a.given } : { family: a.family }) : { literal: a.literal })),
    DOI: r.doi,
    URL: r.doi ? doiUrl(r.doi) : r.url,
  };
  if (hasYear(r)) item.issued = { 'date-parts': [[r.year]] };
  if (r.publisher) item.publisher = r.publisher;
  if (r.type === 'article') {
    if (r.container_title) item['container-title'] = r.container_title;
    if (r.volume) item.volume = r.volume;
    if (r.issue) item.issue = r.issue;
    if (r.pages) item.page = r.pages;
  }
  return item;
}

function cslMissing(doi: string): CslItem {
  return { id: doi, type: 'dataset', DOI: doi, URL: doiUrl(doi), note: MISSING_NOTE };
}

// ---------------------------------------------------------------------------
// Formatting a set of records

/** Format the cohort's citations and the platform acknowledgment (BibTeX keys unique across both). */
export function formatCitations(items: DoiRecord[], platform: BibRecord, format: CitationFormat): FormattedCitations {
  const keys = new KeyRegistry();
  const one = (d: DoiRecord): Citation => {
    const r = d.record;
    switch (format) {
      case 'apa':
        return d.apa ?? (r ? formatApa(r) : apaMissing(d.doi));
      case 'bibtex':
        return r ? formatBibtex(r, keys) : bibtexMissing(d.doi, keys);
      case 'ris':
        return r ? formatRis(r) : risMissing(d.doi);
      case 'csl-json':
        return r ? formatCsl(r) : cslMissing(d.doi);
    }
  };
  const citations = items.map(one);
  return { citations, idc_acknowledgment: one({ doi: platform.doi, record: platform }) };
}

export function recommendation(platform: BibRecord): string {
  const first = platform.authors?.[0];
  const who = first ? `${isPerson(first) ? first.family : first.literal}${(platform.authors?.length ?? 0) > 1 ? ' et al.' : ''}` : 'the platform paper';
  const year = hasYear(platform) ? ` (${platform.year})` : '';
  return (
    `Cite every dataset in citations and, in addition, acknowledge the Imaging Data Commons by citing ${who}${year}, ` +
    `${doiUrl(platform.doi)} (given in idc_acknowledgment in the same format).`
  );
}

// ---------------------------------------------------------------------------
// The service

function parseRecord(raw: unknown): BibRecord | null {
  if (typeof raw !== 'string') return null;
  try {
    const r = JSON.parse(raw) as BibRecord;
    if (!r || typeof r !== 'object' || typeof r.title !== 'string' || typeof r.doi !== 'string' || !Array.isArray(r.authors)) return null;
    return r;
  } catch {
    return null;
  }
}

/** The platform paper's record: from the dataset's bibliography, else the built-in one. */
export function platformRecord(ctx: AppContext): Promise<BibRecord> {
  return memo(ctx, 'citations:platform', async () => {
    const row = await ctx.engine.one(`SELECT record FROM idqs_meta.bibliography WHERE doi = ?`, [PLATFORM_DOI.toLowerCase()]);
    return parseRecord(row?.record) ?? PLATFORM_CITATION;
  });
}

/** Distinct source DOIs (case-insensitively) of the series matching the filter, with their stored records, ordered by DOI. */
export async function cohortDois(ctx: AppContext, compiled: Pick<CompiledFilter, 'where' | 'params'>, from = '"index"'): Promise<DoiRecord[]> {
  const rows = await ctx.engine.rows(
    `WITH d AS (
       SELECT lower(trim(source_DOI)) AS k, min(trim(source_DOI)) AS doi
       FROM ${from}
       WHERE (${compiled.where}) AND source_DOI IS NOT NULL AND trim(source_DOI) <> '' AND lower(trim(source_DOI)) <> ?
       GROUP BY 1
     )
     SELECT d.doi, b.record FROM d LEFT JOIN idqs_meta.bibliography b ON b.doi = d.k ORDER BY d.k`,
    [...compiled.params, PLATFORM_DOI.toLowerCase()],
  );
  const release = rows.some((r) => parseRecord(r.record) === null) ? await releaseCitations(ctx) : null;
  return rows.map((r) => {
    const doi = String(r.doi);
    const record = parseRecord(r.record);
    if (record) return { doi: record.doi, record };
    // No stored record: the release's own citation of the DOI, if it has one.
    const own = release?.get(doi.toLowerCase());
    return own ? { doi, record: own.record, apa: own.apa } : { doi, record: null };
  });
}

/** The source DOIs of the versions a past release served: a series' DOI is that of its row in the served release. */
async function asOfDois(ctx: AppContext, filters: FilterObject | undefined, asOf: string | number) {
  const c = await asOfCohort(ctx, filters, asOf);
  const [items, gone] = await Promise.all([
    cohortDois(ctx, { where: 'TRUE', params: c.params }, c.from),
    ctx.engine.one(`SELECT count(*) FILTER (WHERE NOT in_served) AS n FROM ${c.from}`, c.params),
  ]);
  const warnings = [...c.warnings];
  const n = toNumber(gone?.n);
  if (n > 0) warnings.push(`${n} series of ${c.as_of} are not in ${c.computed_on}, which alone records source DOIs: their datasets may be missing from these citations.`);
  if (c.empty) warnings.push(`No filter: these are the citations of the whole ${c.as_of} release.`);
  return { items, filters_applied: c.filters_applied as CompiledFilter['filters_applied'], warnings, names: { as_of: c.as_of, computed_on: c.computed_on } };
}

export async function citations(
  ctx: AppContext,
  req: { filters?: FilterObject | null; citation_format?: string | null; as_of?: string | number },
): Promise<CitationsResult> {
  const format = parseCitationFormat(req.citation_format);
  const compiled = req.as_of === undefined ? await compileFilter(ctx, req.filters ?? undefined) : await asOfDois(ctx, req.filters ?? undefined, req.as_of);
  const [items, platform] = await Promise.all(['items' in compiled ? compiled.items : cohortDois(ctx, compiled), platformRecord(ctx)]);
  const formatted = formatCitations(items, platform, format);
  return {
    format,
    count: formatted.citations.length,
    dois: items.map((d) => d.doi),
    citations: formatted.citations,
    missing_metadata: items.filter((d) => d.record === null).map((d) => d.doi),
    idc_acknowledgment: formatted.idc_acknowledgment,
    recommendation: recommendation(platform),
    filters_applied: compiled.filters_applied,
    warnings: compiled.warnings,
    ...('names' in compiled ? compiled.names : {}),
  };
}
