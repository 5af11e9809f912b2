// Collections as the portal lists them: a searchable, sortable table with
// the portal's columns (name, cancer type, tumor location, species,
// subjects, program, licenses, supporting data) plus patients in the cohort
// and in the release, and a page per collection (description, DOI,
// citation, license, modalities, counts by modality, a button that opens it
// as the cohort). The page is addressed by the URL's hash (#collection=<id>),
// so the cohort's own query string is left as it is.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { allCollections, post, get, type CollectionInfo, type CountMode, type Facets, type Filter, type TermFacet } from '../api.ts';
import { cap, count as fmtCount, size } from '../format.ts';
import { DetailTail, useDetailFacts, type CitationOwner } from './detail-parts.tsx';
import { analysisResults } from './analysis-view.tsx';
import { CartToggle, ErrorBox } from './common.tsx';
import { ListView, type Column } from './list-view.tsx';
import { useInCart } from './row-cart.tsx';

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
  const [onlyCohort, setOnlyCohort] = useState(true);
  const total = useReleaseCounts(props.mode);
  useEffect(() => {
    allCollections().then(setAll).catch(setError);
  }, []);
  // The portal's "# Series in Cart" of each collection.
  const inCart = useInCart('collections', useMemo(() => (all ?? []).map((c) => c.collection_id), [all]));
  const inCohort = useMemo(() => {
    const f = props.facets?.facets.collection_id as TermFacet | undefined;
    return new Map((f?.values ?? []).map((v) => [v.value, v.filtered_count]));
  }, [props.facets]);
  if (error) return <ErrorBox error={error} title="Collections failed" />;
  if (!all) return <div class="muted">Loading collections…</div>;
  const lower = (x: string | null) => (x ?? '').toLowerCase();
  const clamp = (x: string | null) => (
    <span class="clamp" title={x ?? ''}>
      {x ?? '—'}
    </span>
  );
  // The action column first, then columns by how much a researcher needs them: the rest yield on narrow cards.
  const columns: Column<CollectionInfo>[] = [
    { key: 'cart', heading: 'Cart', cell: (c) => <CartToggle kind="collections" id={c.collection_id} release={props.release} /> },
    {
      key: 'name',
      heading: 'Collection',
      sortValue: (c) => lower(c.collection_name ?? c.collection_id),
      cell: (c) => (
        <>
          <a href={`#collection=${encodeURIComponent(c.collection_id)}`} onClick={(e) => (e.preventDefault(), props.onOpen(c.collection_id))}>
            {c.collection_name ?? c.collection_id}
          </a>
          <div class="mono muted small">{c.collection_id}</div>
        </>
      ),
    },
    { key: 'cancer', priority: 2, heading: 'Cancer type', sortValue: (c) => lower(c.cancer_types), cell: (c) => clamp(c.cancer_types) },
    { key: 'location', priority: 3, heading: 'Tumor location', sortValue: (c) => lower(c.tumor_locations), cell: (c) => clamp(c.tumor_locations) },
    { key: 'species', priority: 4, heading: 'Species', sortValue: (c) => lower(c.species), cell: (c) => c.species ?? '—' },
    { key: 'program', priority: 3, heading: 'Program', sortValue: (c) => lower(c.program_id), cell: (c) => c.program_id ?? '—' },
    { key: 'subjects', priority: 2, heading: 'Subjects', num: true, sortValue: (c) => c.subjects ?? -1, cell: (c) => (c.subjects === null ? '—' : fmtCount(c.subjects)) },
    {
      key: 'cohort',
      heading: `${cap(props.mode)} in cohort`,
      num: true,
      sortValue: (c) => inCohort.get(c.collection_id) ?? 0,
      cell: (c) => <span data-in-cohort={inCohort.get(c.collection_id) ?? 0}>{fmtCount(inCohort.get(c.collection_id) ?? 0)}</span>,
    },
    {
      key: 'total',
      priority: 2,
      heading: `${cap(props.mode)} in release`,
      num: true,
      sortValue: (c) => total?.get(c.collection_id) ?? 0,
      cell: (c) => <span data-in-release={total?.get(c.collection_id) ?? ''}>{total ? fmtCount(total.get(c.collection_id) ?? 0) : '…'}</span>,
    },
    { key: 'licenses', priority: 3, heading: 'Licenses', cell: (c) => licensesOf(c) || '—' },
    { key: 'supporting', priority: 4, heading: 'Supporting data', cell: (c) => c.supporting_data ?? '—' },
    {
      key: 'in-cart',
      heading: '# series in cart',
      num: true,
      sortValue: (c) => inCart?.get(c.collection_id) ?? 0,
      cell: (c) => <span data-in-cart={c.collection_id}>{inCart ? fmtCount(inCart.get(c.collection_id) ?? 0) : '—'}</span>,
    },
  ];
  return (
    <ListView
      view="collections-list"
      title="Collections"
      noun="collections"
      rows={all}
      rowKey={(c) => c.collection_id}
      rowAttrs={(c) => ({ 'data-collection': c.collection_id })}
      keep={(c) => !onlyCohort || (inCohort.get(c.collection_id) ?? 0) > 0}
      searchText={(c) => [c.collection_id, c.collection_name, c.cancer_types, c.tumor_locations, c.species, c.program_id]}
      searchLabel="Search collections"
      searchPlaceholder="Search name, cancer type, location, species, program"
      columns={columns}
      initialSort={{ key: 'cohort', desc: true }}
      controls={
        <label class="check">
          <input type="checkbox" checked={onlyCohort} onChange={(e) => setOnlyCohort(e.currentTarget.checked)} /> Only collections in the cohort
        </label>
      }
    />
  );
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
  const [error, setError] = useState<unknown>(null);
  const facts = useDetailFacts({ collection_id: [props.id] }, props.mode);
  const [analyses, setAnalyses] = useState<CitationOwner['others']>([]);
  useEffect(() => {
    analysisResults()
      .then((rs) => setAnalyses(rs.flatMap((r) => (r.source_DOI ? [{ doi: r.source_DOI, title: r.analysis_result_title ?? r.analysis_result_id }] : []))))
      .catch(() => {}); // unlabelled citations stay in the service's order
  }, []);
  useEffect(() => {
    const ac = new AbortController();
    setD(null);
    get<Detail>(`/v3/collections/${encodeURIComponent(props.id)}`, ac.signal).then(setD).catch((e: unknown) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [props.id]);
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
      <DetailTail facts={facts} mode={props.mode} description={d.description} owner={{ own: `This collection: ${d.collection_name ?? d.collection_id}`, others: analyses }} />
    </article>
  );
}
