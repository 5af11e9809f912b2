// Citations the release itself carries: collections_index.sources[].citation
// and analysis_results_index.citation, APA text with <i> markup and HTML
// entities ("Team. (2013). <i>Data from ...</i> (Version 3) [Data set]. The
// Cancer Imaging Archive. https://doi.org/..."). The APA text is kept as the
// release writes it (entities decoded, markup dropped); the other formats are
// built from a record parsed from that text and the source's own columns
// (title, DOI, URL), so no network is ever needed for a full citation.

import { decodeHTML } from 'entities';
import { memo, type AppContext } from '../context.ts';
import type { BibRecord } from '../data/manifest.ts';
import { presentColumns } from './present-columns.ts';

/** A DOI's citation from the release: the APA text and the record parsed from it. */
export interface ReleaseCitation {
  apa: string;
  record: BibRecord;
}

/** Plain text of the release's APA: entities decoded, tags dropped, one line. */
export function plainCitation(html: string): string {
  return decodeHTML(html.replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/** "J.", "G. K.", "P.-H.", "V. K": APA initials. */
const INITIALS = /^(\p{Lu}\.?(-\p{Lu}\.?)?\s*)+$/u;

/** APA author list to names: "Family, I." pairs; anything else (a group, a full name) is a literal. */
export function parseApaAuthors(text: string): BibRecord['authors'] {
  const parts = text
    .replace(/,?\s*&\s*/g, ', ')
    .split(/\s*,\s*/)
    .filter(Boolean);
  const out: BibRecord['authors'] = [];
  for (let i = 0; i < parts.length; i++) {
    const next = parts[i + 1];
    if (next !== undefined && INITIALS.test(next.replace(/\.\.\.$/, ''))) {
      out.push({ family: parts[i]!, given: next.replace(/\s+$/, '') });
      i++;
    } else out.push({ literal: parts[i]!.replace(/\.$/, '').trim() });
  }
  return out;
}

interface SourceColumns {
  doi: string;
  citation: string;
  title: string | null;
  url: string | null;
}

/** The record of one release citation; the source's title and URL win over what the text says. */
export function parseReleaseCitation(src: SourceColumns): ReleaseCitation {
  const decoded = decodeHTML(src.citation).replace(/\s+/g, ' ').trim();
  const apa = plainCitation(src.citation);
  // Authors. (Year[, ...]). <i>Title</i> (Version X) [Data set]. Publisher. URL — the period after
  // the year, the italics and the [Data set] marker are missing from a few.
  const head = /^(.*?)\s*\((\d{4})[^)]*\)\.?\s*(.*)$/.exec(decoded);
  const authors = head ? parseApaAuthors(head[1]!) : [];
  const rest = head ? head[3]! : decoded;
  const italic = /<i>(.*?)<\/i>/.exec(rest);
  const version = /\(Version ([^)]+)\)/.exec(rest)?.[1];
  // The publisher: the last sentence before the URL, after the title's closing ")" or "]".
  const publisher = /[\])]\.?\s*([^.[\]()]+?)\.?\s*(?:https?:\/\/\S+)?\s*$/.exec(rest.replace(/<[^>]*>/g, ''))?.[1]?.trim();
  const title = (src.title ?? (italic ? italic[1]!.trim() : '')).replace(/<[^>]*>/g, '');
  const record: BibRecord = {
    doi: src.doi,
    title: version && !title.includes(version) ? `${title} (Version ${version})` : title,
    authors,
    year: head ? Number(head[2]) : 0,
    publisher: publisher ?? '',
    url: src.url ?? `https://doi.org/${src.doi}`,
    type: 'dataset',
  };
  return { apa, record };
}

/** Every DOI of the release that has a citation, by lower-case DOI (computed once). */
export function releaseCitations(ctx: AppContext): Promise<Map<string, ReleaseCitation>> {
  return memo(ctx, 'citations:release', async () => {
    const out = new Map<string, ReleaseCitation>();
    const add = (r: Record<string, unknown>) => {
      if (typeof r.doi !== 'string' || typeof r.citation !== 'string' || !r.doi.trim() || !r.citation.trim()) return;
      const doi = r.doi.trim();
      if (out.has(doi.toLowerCase())) return;
      out.set(doi.toLowerCase(), parseReleaseCitation({ doi, citation: r.citation, title: (r.title as string | null) ?? null, url: (r.url as string | null) ?? null }));
    };
    const coll = ctx.catalog.columns.get('collections_index') ?? [];
    const sources = coll.find((c) => c.name === 'sources');
    // Only releases whose sources[] carry citations (v21 and later).
    if (sources && /\bcitation VARCHAR\b/.test(sources.type)) {
      const rows = await ctx.engine.rows(
        `SELECT s.source_doi AS doi, s.citation, s.source_title AS title, s.source_url AS url FROM (SELECT unnest(sources) AS s FROM collections_index)`,
      );
      rows.forEach(add);
    }
    if (presentColumns(ctx, 'analysis_results_index', ['citation', 'source_DOI']).size === 2) {
      const hasTitle = presentColumns(ctx, 'analysis_results_index', ['analysis_result_title', 'source_url']);
      const rows = await ctx.engine.rows(
        `SELECT source_DOI AS doi, citation, ${hasTitle.has('analysis_result_title') ? 'analysis_result_title' : 'NULL'} AS title, ${hasTitle.has('source_url') ? 'source_url' : 'NULL'} AS url FROM analysis_results_index`,
      );
      rows.forEach(add);
    }
    return out;
  });
}
