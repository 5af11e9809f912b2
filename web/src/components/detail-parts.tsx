// What the page of a collection and the page of an analysis result share: the
// Modality counts and the citations of the series they name (fetched together),
// and the end of the page (counts by modality, citation, description).

import { useEffect, useState } from 'preact/hooks';
import { post, type Citations, type CountMode, type Facets, type Filter, type TermFacet } from '../api.ts';
import { cap, count as fmtCount } from '../format.ts';

/** The text of the release's HTML description (parsed inertly: nothing of it runs or loads). */
export function plainText(html: string | null): string {
  if (!html) return '';
  return (new DOMParser().parseFromString(html, 'text/html').body.textContent ?? '').replace(/\s+\n/g, '\n').trim();
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
export function DetailTail(props: { facts: DetailFacts; mode: CountMode; description: string | null }) {
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
      {cite ? cite.map((c) => <p key={c} class="cite">{c}</p>) : <p class="muted">Loading…</p>}
      <h3>Description</h3>
      <p class="description">{plainText(props.description) || '—'}</p>
    </>
  );
}
