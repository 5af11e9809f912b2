// Collections as the portal lists them: a searchable, sortable table with
// the portal's columns (name, cancer type, tumor location, species,
// subjects, program, licenses, supporting data) plus patients in the cohort
// and in the release, and a page per collection (description, DOI,
// citation, license, modalities, counts by modality, a button that opens it
// as the cohort). The page is addressed by the URL's hash (#collection=<id>),
// so the cohort's own query string is left as it is.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { allCollections, post, get, type Citations, type CollectionInfo, type CountMode, type Facets, type Filter, type TermFacet } from '../api.ts';
import { count as fmtCount, size } from '../format.ts';
import { CartToggle, ErrorBox } from './common.tsx';

type SortKey = 'name' | 'cancer' | 'location' | 'species' | 'subjects' | 'program' | 'cohort' | 'total';

interface ListProps {
  release: string;
  facets: Facets | null;
  mode: CountMode;
  onOpen: (id: string) => void;
}

/** Patients (or the count mode) per collection in the whole release: one facets request, cached by the server. */
function useReleaseCounts(mode: CountMode): Map<string, number> | null {
  const [counts, setCounts] = useState<Map<string, number> | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    post<Facets>('/v3/cohort/facets', { filters: {}, attributes: ['collection_id'], count: mode, limit: 10000 }, ac.signal)
      .then((f) => setCounts(new Map((f.facets.collection_id as TermFacet).values.map((v) => [v.value, v.count]))))
      .catch(() => {});
    return () => ac.abort();
  }, [mode]);
  return counts;
}

function licensesOf(c: CollectionInfo): string {
  return [...new Set(c.sources.map((s) => s.license_short_name).filter((x): x is string => !!x))].join(', ');
}

export function CollectionsList(props: ListProps) {
  const [all, setAll] = useState<CollectionInfo[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'cohort', desc: true });
  const [onlyCohort, setOnlyCohort] = useState(true);
  const total = useReleaseCounts(props.mode);
  useEffect(() => {
    allCollections().then(setAll).catch(setError);
  }, []);
  const inCohort = useMemo(() => {
    const f = props.facets?.facets.collection_id as TermFacet | undefined;
    return new Map((f?.values ?? []).map((v) => [v.value, v.filtered_count]));
  }, [props.facets]);
  if (error) return <ErrorBox error={error} title="Collections failed" />;
  if (!all) return <div class="muted">Loading collections…</div>;
  const q = query.trim().toLowerCase();
  const key = (c: CollectionInfo): string | number => {
    switch (sort.key) {
      case 'name':
        return (c.collection_name ?? c.collection_id).toLowerCase();
      case 'cancer':
        return (c.cancer_types ?? '').toLowerCase();
      case 'location':
        return (c.tumor_locations ?? '').toLowerCase();
      case 'species':
        return (c.species ?? '').toLowerCase();
      case 'program':
        return (c.program_id ?? '').toLowerCase();
      case 'subjects':
        return c.subjects ?? -1;
      case 'cohort':
        return inCohort.get(c.collection_id) ?? 0;
      case 'total':
        return total?.get(c.collection_id) ?? 0;
    }
  };
  const rows = all
    .filter((c) => !onlyCohort || (inCohort.get(c.collection_id) ?? 0) > 0)
    .filter((c) => q === '' || [c.collection_id, c.collection_name, c.cancer_types, c.tumor_locations, c.species, c.program_id].some((x) => (x ?? '').toLowerCase().includes(q)))
    .sort((a, b) => {
      const x = key(a);
      const y = key(b);
      const d = x < y ? -1 : x > y ? 1 : 0;
      return (sort.desc ? -d : d) || a.collection_id.localeCompare(b.collection_id);
    });
  const head = (k: SortKey, text: string, num = false) => (
    <th scope="col" class={num ? 'num' : undefined} aria-sort={sort.key === k ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
      <button type="button" class="sort" data-sort={k} onClick={() => setSort((s) => ({ key: k, desc: s.key === k ? !s.desc : num }))}>
        {text}
        <span aria-hidden="true" class="arrow">
          {sort.key === k ? (sort.desc ? '▼' : '▲') : '↕'}
        </span>
      </button>
    </th>
  );
  return (
    <section data-view="collections-list">
      <div class="row">
        <input type="search" class="search grow" placeholder="Search name, cancer type, location, species, program" aria-label="Search collections" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <label class="check">
          <input type="checkbox" checked={onlyCohort} onChange={(e) => setOnlyCohort(e.currentTarget.checked)} /> Only collections in the cohort
        </label>
        <span class="muted small" data-collections-shown={rows.length}>
          {fmtCount(rows.length)} of {fmtCount(all.length)} collections
        </span>
      </div>
      <div class="scroll-x">
        <table class="data">
          <thead>
            <tr>
              {head('name', 'Collection')}
              {head('cancer', 'Cancer type')}
              {head('location', 'Tumor location')}
              {head('species', 'Species')}
              {head('program', 'Program')}
              {head('subjects', 'Subjects', true)}
              {head('cohort', `${cap(props.mode)} in cohort`, true)}
              {head('total', `${cap(props.mode)} in release`, true)}
              <th scope="col">Licenses</th>
              <th scope="col">Supporting data</th>
              <th scope="col">Cart</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => (
              <tr key={c.collection_id} data-collection={c.collection_id}>
                <td>
                  <a href={`#collection=${encodeURIComponent(c.collection_id)}`} onClick={(e) => (e.preventDefault(), props.onOpen(c.collection_id))}>
                    {c.collection_name ?? c.collection_id}
                  </a>
                  <div class="mono muted small">{c.collection_id}</div>
                </td>
                <td>
                  <span class="clamp" title={c.cancer_types ?? ''}>
                    {c.cancer_types ?? '—'}
                  </span>
                </td>
                <td>
                  <span class="clamp" title={c.tumor_locations ?? ''}>
                    {c.tumor_locations ?? '—'}
                  </span>
                </td>
                <td>{c.species ?? '—'}</td>
                <td>{c.program_id ?? '—'}</td>
                <td class="num">{c.subjects === null ? '—' : fmtCount(c.subjects)}</td>
                <td class="num" data-in-cohort={inCohort.get(c.collection_id) ?? 0}>
                  {fmtCount(inCohort.get(c.collection_id) ?? 0)}
                </td>
                <td class="num" data-in-release={total?.get(c.collection_id) ?? ''}>
                  {total ? fmtCount(total.get(c.collection_id) ?? 0) : '…'}
                </td>
                <td>{licensesOf(c) || '—'}</td>
                <td>{c.supporting_data ?? '—'}</td>
                <td>
                  <CartToggle kind="collections" id={c.collection_id} release={props.release} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The text of the release's HTML description (parsed inertly: nothing of it runs or loads). */
function plainText(html: string | null): string {
  if (!html) return '';
  return (new DOMParser().parseFromString(html, 'text/html').body.textContent ?? '').replace(/\s+\n/g, '\n').trim();
}

interface Detail extends CollectionInfo {
  patients: number;
  studies: number;
  series: number;
  instances: number;
  size_MB: number;
  modalities: string[];
  licenses: { license_short_name: string | null; series: number; commercial_use_allowed: boolean | null }[];
}

export function CollectionPage(props: { id: string; mode: CountMode; onBack: () => void; onCohort: (f: Filter) => void }) {
  const [d, setD] = useState<Detail | null>(null);
  const [mods, setMods] = useState<TermFacet | null>(null);
  const [cite, setCite] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ac = new AbortController();
    const filters = { terms: { collection_id: [props.id] } };
    setD(null);
    get<Detail>(`/v3/collections/${encodeURIComponent(props.id)}`, ac.signal).then(setD).catch((e: unknown) => !ac.signal.aborted && setError(e));
    post<Facets>('/v3/cohort/facets', { filters, attributes: ['Modality'], count: props.mode, limit: 100 }, ac.signal)
      .then((f) => setMods(f.facets.Modality as TermFacet))
      .catch(() => {});
    post<Citations>('/v3/citations', { filters, citation_format: 'apa' }, ac.signal)
      .then((c) => setCite(c.citations.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))))
      .catch(() => {});
    return () => ac.abort();
  }, [props.id, props.mode]);
  if (error) return <ErrorBox error={error} title={`Collection ${props.id}`} />;
  if (!d) return <div class="muted">Loading {props.id}…</div>;
  const dois = d.sources.filter((s) => s.source_DOI);
  return (
    <article class="card detail" data-view="collection-page" data-collection-page={d.collection_id}>
      <div class="card-head">
        <button type="button" class="link" onClick={props.onBack}>
          ← All collections
        </button>
        <button type="button" class="btn" data-open-cohort={d.collection_id} onClick={() => props.onCohort({ terms: { collection_id: [d.collection_id] }, ranges: {} })}>
          Open as the cohort
        </button>
      </div>
      <h2>{d.collection_name ?? d.collection_id}</h2>
      <dl class="facts">
        <dt>Collection ID</dt>
        <dd class="mono">{d.collection_id}</dd>
        <dt>Program</dt>
        <dd>{d.program_id ?? '—'}</dd>
        <dt>Cancer type</dt>
        <dd>{d.cancer_types ?? '—'}</dd>
        <dt>Tumor location</dt>
        <dd>{d.tumor_locations ?? '—'}</dd>
        <dt>Species</dt>
        <dd>{d.species ?? '—'}</dd>
        <dt>Counts</dt>
        <dd data-detail-counts={`${d.patients}/${d.studies}/${d.series}`}>
          {fmtCount(d.patients)} patients · {fmtCount(d.studies)} studies · {fmtCount(d.series)} series · {fmtCount(d.instances)} instances · {size(d.size_MB)}
        </dd>
        <dt>Modalities</dt>
        <dd>{d.modalities.join(', ') || '—'}</dd>
        <dt>Licenses</dt>
        <dd>{d.licenses.map((l) => `${l.license_short_name ?? '(none)'} (${fmtCount(l.series)} series)`).join(', ')}</dd>
        <dt>DOI</dt>
        <dd>
          {dois.length === 0
            ? '—'
            : dois.map((s, i) => (
                <span key={s.source_DOI}>
                  {i > 0 ? ', ' : ''}
                  <a href={`https://doi.org/${s.source_DOI}`} target="_blank" rel="noopener noreferrer">
                    {s.source_DOI}
                  </a>
                </span>
              ))}
        </dd>
        <dt>Supporting data</dt>
        <dd>{d.supporting_data ?? '—'}</dd>
      </dl>
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
      <p class="description">{plainText(d.description) || '—'}</p>
    </article>
  );
}
