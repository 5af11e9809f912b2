// What the page of a collection and the page of an analysis result share: the
// Modality counts and the citations of the series they name (fetched together),
// and the end of the page (counts by modality, citation, description).

import { useEffect, useState } from 'preact/hooks';
import { post, type Citations, type CountMode, type Facets, type Filter, type TermFacet } from '../api.ts';
import { cap, count as fmtCount } from '../format.ts';

/**
 * The paragraphs of the release's HTML description (parsed inertly): one per block element or
 * blank line of the source, each reflowed (the source's own line breaks, often one word a line,
 * become spaces).
 */
export function paragraphs(html: string | null): string[] {
  if (!html) return [];
  const body = new DOMParser().parseFromString(html, 'text/html').body;
  for (const el of body.querySelectorAll('p, div, li, tr, h1, h2, h3, h4, h5, h6, br, blockquote')) el.after('\u2029');
  return (body.textContent ?? '')
    .replace(/\n[ \t]*\n/g, '\u2029')
    .split('\u2029')
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p !== '');
}

/** A citation with what it cites: the page's own subject first, analysis results after under their names. */
export interface CitationOwner {
  /** The page's subject, e.g. the collection's name. */
  own: string;
  /** Analysis results that may be cited, matched by DOI in the citation's text. */
  others: { doi: string; title: string }[];
}

function labelled(cites: string[], owner: CitationOwner | undefined): { text: string; label: string | null }[] {
  if (!owner) return cites.map((text) => ({ text, label: null }));
  const out = cites.map((text) => {
    const lower = text.toLowerCase();
    const other = owner.others.find((o) => lower.includes(o.doi.toLowerCase()));
    return { text, label: other ? `Analysis result: ${other.title}` : owner.own, rank: other ? 1 : 0 };
  });
  return out.sort((a, b) => a.rank - b.rank).map(({ text, label }) => ({ text, label }));
}

export interface DetailFacts {
  mods: TermFacet | null;
  totals: Facets['totals'] | null;
  cite: string[] | null;
}

/** Modality counts (and totals) and APA citations of the series `filters` selects; refetched when it or the count mode changes. */
export function useDetailFacts(filters: Filter['terms'], mode: CountMode): DetailFacts {
  const [facts, setFacts] = useState<DetailFacts>({ mods: null, totals: null, cite: null });
  const key = JSON.stringify(filters);
  useEffect(() => {
    const ac = new AbortController();
    const body = { terms: filters };
    post<Facets>('/v3/cohort/facets', { filters: body, attributes: ['Modality'], count: mode, limit: 100 }, ac.signal)
      .then((f) => setFacts((s) => ({ ...s, mods: f.facets.Modality as TermFacet, totals: f.totals })))
      .catch(() => {});
    post<Citations>('/v3/citations', { filters: body, citation_format: 'apa' }, ac.signal)
      .then((c) => setFacts((s) => ({ ...s, cite: c.citations.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) })))
      .catch(() => {});
    return () => ac.abort();
    // `key` is the filter's content: a new object with the same terms fetches nothing again.
  }, [key, mode]);
  return facts;
}

/** The end of a detail page: counts by modality, the citation, the description. */
export function DetailTail(props: { facts: DetailFacts; mode: CountMode; description: string | null; owner?: CitationOwner }) {
  const { mods, cite } = props.facts;
  return (
    <>
      {mods ? (
        <>
          <h3>{cap(props.mode)} by modality</h3>
          <table class="data narrow-table">
            <tbody>
              {mods.values
                .filter((v) => v.count > 0)
                .map((v) => (
                  <tr key={v.value} data-modality={v.value}>
                    <th scope="row">{v.value}</th>
                    <td class="num" data-count={v.count}>
                      {fmtCount(v.count)}
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        </>
      ) : null}
      <h3>Citation</h3>
      {cite ? (
        labelled(cite, props.owner).map((c) => (
          <div key={c.text} class="cite-item" data-cite-label={c.label ?? ''}>
            {c.label ? <div class="small muted cite-label">{c.label}</div> : null}
            <p class="cite">{c.text}</p>
          </div>
        ))
      ) : (
        <p class="muted">Loading…</p>
      )}
      <h3>Description</h3>
      <div class="description" data-paragraphs={paragraphs(props.description).length}>
        {paragraphs(props.description).map((p, i) => (
          <p key={i}>{p}</p>
        ))}
        {props.description ? null : <p>—</p>}
      </div>
    </>
  );
}
