// The IDQS cohort explorer: a filter panel with live facet counts, the
// cohort's totals, licenses and charts, tables of its collections, patients,
// studies and series, export and an SQL console. All data comes from the API
// at run time; the cohort lives in the URL (portal filter links work too).

import { render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { chooseRelease, get, hasFilter, post, type AttributeInfo, type CountMode, type Facets, type Filter, type Licenses, type Version } from './api.ts';
import { Charts } from './components/charts.tsx';
import { ErrorBox, Note } from './components/common.tsx';
import { DataTable, type Level } from './components/data-table.tsx';
import { addCohort, cartFilter, itemCount, useCart } from './cart.ts';
import { AnalysisList, AnalysisPage } from './components/analysis-view.tsx';
import { CartView } from './components/cart-view.tsx';
import { CollectionPage, CollectionsList } from './components/collections-view.tsx';
import { DemoBanner } from './components/demo-banner.tsx';
import { SharedCart } from './components/shared-cart.tsx';
import { ReleasePicker } from './components/release-picker.tsx';
import { ExportPanel } from './components/export-panel.tsx';
import { FilterPanel } from './components/filter-panel.tsx';
import { SqlConsole } from './components/sql-console.tsx';
import { ChangesView } from './components/changes-view.tsx';
import { Chips, LicensesView, TotalsView } from './components/summary.tsx';
import { count as fmtCount } from './format.ts';
import { TABS, parseQuery, toQuery, type Tab, type ViewState } from './url-state.ts';
import './styles.css';

/** Values per term attribute asked of the facets route (selected values always come back). */
const FACET_LIMIT = 1000;
/** Pause after a click before asking for counts, so quick clicks make one request. */
const DEBOUNCE_MS = 120;

const TAB_TITLES: Record<Tab, string> = {
  charts: 'Charts',
  collections: 'Collections',
  patients: 'Patients',
  studies: 'Studies',
  series: 'Series',
  export: 'Export',
  sql: 'SQL',
  cart: 'Cart',
  changes: 'Changes',
};

interface Boot {
  attributes: AttributeInfo[];
  version: Version;
  /** Set when the link names a release the server does not serve. */
  releaseNote: string | null;
}

function App() {
  const [boot, setBoot] = useState<Boot | null>(null);
  const [bootError, setBootError] = useState<unknown>(null);
  const [view, setView] = useState<ViewState | null>(null);
  const [notes, setNotes] = useState<string[]>([]);
  const [facets, setFacets] = useState<Facets | null>(null);
  const [facetError, setFacetError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [licenses, setLicenses] = useState<Licenses | null>(null);
  const narrow = useNarrow();
  const [page, openPage] = useHashPage();
  const cartNow = useCart();
  const [drawer, setDrawer] = useState(false);

  useEffect(() => {
    chooseRelease(location.search)
      .then(({ note }) => Promise.all([get<AttributeInfo[]>('/v3/attributes'), get<Version>('/v3/version'), note]))
      .then(([attributes, version, releaseNote]) => {
        const parsed = parseQuery(location.search, attributes);
        setBoot({ attributes, version, releaseNote });
        setView(parsed.state);
        setNotes(parsed.notes);
        // A portal link (/explore/filters/?...) or any other spelling becomes the canonical URL.
        history.replaceState(null, '', `/${toQuery(parsed.state)}${location.hash}`);
      })
      .catch(setBootError);
  }, []);

  useEffect(() => {
    if (!boot) return;
    const onPop = () => {
      const parsed = parseQuery(location.search, boot.attributes);
      setView(parsed.state);
      setNotes(parsed.notes);
    };
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, [boot]);

  const update = useCallback((next: ViewState) => {
    setView(next);
    const url = `/${toQuery(next)}`;
    if (url !== `${location.pathname}${location.search}`) history.pushState(null, '', url);
  }, []);
  // A collection's or analysis result's page opened as the cohort: back to the charts with its filter.
  const openAsCohort = (filter: ViewState['filter']) => {
    openPage(null);
    if (view) update({ ...view, filter, tab: 'charts' });
  };

  const filterKey = view ? JSON.stringify(view.filter) : '';
  const mode = view?.count ?? 'patients';
  const inflight = useRef<AbortController | null>(null);
  const first = useRef(true);
  const lastAsk = useRef(0);
  useEffect(() => {
    if (!view) return;
    setLoading(true);
    // A click after a quiet moment is asked for at once; a click close behind another waits a short pause, so quick clicks make one request.
    const now = performance.now();
    const delay = first.current || now - lastAsk.current > DEBOUNCE_MS ? 0 : DEBOUNCE_MS;
    first.current = false;
    lastAsk.current = now;
    const timer = setTimeout(() => {
      inflight.current?.abort();
      const ac = new AbortController();
      inflight.current = ac;
      post<Facets>('/v3/cohort/facets', { filters: view.filter, count: mode, limit: FACET_LIMIT }, ac.signal)
        .then((f) => {
          setFacets(f);
          setFacetError(null);
          setLoading(false);
          // Licenses after the counts, so the two do not compete for the server's cores.
          post<Licenses>('/v3/licenses', { filters: view.filter }, ac.signal)
            .then(setLicenses)
            .catch(() => {}); // the licenses line is left as it was
        })
        .catch((e: unknown) => {
          if (ac.signal.aborted) return;
          setFacetError(e);
          setLoading(false);
        });
    }, delay);
    return () => {
      // A newer filter supersedes the request in flight; its counts stay on screen until the new ones arrive.
      clearTimeout(timer);
      inflight.current?.abort();
    };
  }, [filterKey, mode]);

  const setFilter = useCallback((filter: Filter) => view && update({ ...view, filter }), [view, update]);
  const setTab = (tab: Tab) => view && update({ ...view, tab });
  const setMode = (count: CountMode) => view && update({ ...view, count });
  const active = view ? Object.keys(view.filter.terms).length + Object.keys(view.filter.ranges).length : 0;
  const warnings = useMemo(() => (facets?.warnings ?? []).filter((w) => !w.startsWith('The filter is empty')), [facets]);

  if (bootError) {
    return (
      <div class="boot">
        <ErrorBox error={bootError} title="The API did not answer" />
      </div>
    );
  }
  if (!boot || !view) return <div class="boot muted">Loading the explorer…</div>;

  return (
    <>
      <a class="skip" href="#main">
        Skip to results
      </a>
      <header class="top">
        <h1 class="brand">
          <span class="logo" aria-hidden="true">
            ◧
          </span>
          <span>IDQS Explorer</span>
        </h1>
        <div class="release" data-release={boot.version.idc_version}>
          Data release <strong>{boot.version.idc_version}</strong>
          {boot.version.synthetic ? <span class="tag">synthetic</span> : null}
        </div>
        <ReleasePicker version={boot.version} note={boot.releaseNote} />
        <nav class="links" aria-label="Service">
          <a href="/v3/docs">API docs</a>
          <a href="/v3/openapi.json">OpenAPI</a>
        </nav>
      </header>
      <div class={`progress${loading ? ' on' : ''}`} aria-hidden="true" />
      <div class="layout">
        <FilterPanel
          attributes={boot.attributes}
          facets={facets?.facets ?? null}
          filter={view.filter}
          countLabel={mode}
          onFilter={setFilter}
          drawer={narrow ? (drawer ? 'open' : 'closed') : null}
          onClose={() => {
            setDrawer(false);
            requestAnimationFrame(() => document.getElementById('open-filters')?.focus());
          }}
        />
        <main id="main" tabIndex={-1}>
          {narrow ? (
            <div class="drawer-bar">
              <button id="open-filters" type="button" class="btn" aria-expanded={drawer} aria-controls="filters" onClick={() => setDrawer(true)} data-active-filters={active}>
                Filters{active > 0 ? <span class="badge on-accent">{active}</span> : null}
              </button>
              {/* With no filter the chips below say so already (it was said twice on a phone). */}
              {active > 0 ? <span class="muted small">{`${active} active filter${active === 1 ? '' : 's'}`}</span> : null}
            </div>
          ) : null}
          <SharedCart served={boot.version.idc_version} mine={cartNow} />
          <Chips filter={view.filter} attributes={boot.attributes} onFilter={setFilter} />
          {notes.map((n) => (
            <Note key={n} kind="warn">
              {n}
            </Note>
          ))}
          {warnings.map((w) => (
            <Note key={w} kind="warn">
              {w}
            </Note>
          ))}
          <ErrorBox error={facetError} title="Counts failed" />
          <TotalsView totals={facets?.totals ?? null} mode={mode} onMode={setMode} loading={loading} />
          {facets && facets.totals.series === 0 && hasFilter(view.filter) ? (
            <Note kind="warn">No series match every filter. Remove a filter (the counts on the left say what each value would give).</Note>
          ) : null}
          <LicensesView licenses={licenses} />
          <div class="cart-bar">
            <button
              type="button"
              class="btn ghost small"
              disabled={!hasFilter(view.filter)}
              title={hasFilter(view.filter) ? undefined : 'Pick a filter first: the cart holds parts of the release'}
              data-add-cohort
              onClick={() => addCohort(view.filter, boot.version.idc_version)}
            >
              Add cohort to cart
            </button>
          </div>
          <Tabs tab={view.tab} onTab={setTab} facets={facets} cartItems={itemCount(cartNow)} />
          <section id={`panel-${view.tab}`} role="tabpanel" aria-labelledby={`tab-${view.tab}`} class="tab-panel">
            {/* The views' own headings are h3 (or h2 on the collection lists and pages): one h2 keeps their order. */}
            {view.tab !== 'collections' ? <h2 class="sr-only">{TAB_HEADINGS[view.tab]}</h2> : null}
            {view.tab === 'charts' ? (
              <Charts attributes={boot.attributes} facets={facets?.facets ?? null} filter={view.filter} mode={mode} onFilter={setFilter} />
            ) : view.tab === 'export' ? (
              <ExportPanel filter={view.filter} series={facets?.totals.series ?? null} />
            ) : view.tab === 'cart' ? (
              <CartView release={boot.version.idc_version} query={toQuery({ ...view, tab: 'cart' })} />
            ) : view.tab === 'changes' ? (
              <ChangesView filter={view.filter} release={boot.version.idc_version} />
            ) : view.tab === 'sql' ? (
              <SqlConsole cohort={view.filter} cart={itemCount(cartNow) > 0 ? { terms: {}, ranges: {}, ...cartFilter(cartNow) } : null} />
            ) : view.tab === 'collections' ? (
              page?.kind === 'analysis' ? (
                <AnalysisPage
                  id={page.id}
                  mode={mode}
                  onBack={() => openPage(null)}
                  onCohort={openAsCohort}
                />
              ) : page ? (
                <CollectionPage
                  id={page.id}
                  mode={mode}
                  onBack={() => openPage(null)}
                  onCohort={openAsCohort}
                />
              ) : (
                <>
                  <CollectionsList facets={facets} mode={mode} onOpen={(id) => openPage({ kind: 'collection', id })} release={boot.version.idc_version} />
                  <AnalysisList facets={facets} mode={mode} onOpen={(id) => openPage({ kind: 'analysis', id })} />
                </>
              )
            ) : (
              <DataTable level={view.tab as Level} filter={view.filter} release={boot.version.idc_version} />
            )}
          </section>
        </main>
      </div>
    </>
  );
}

const TAB_HEADINGS: Record<Tab, string> = {
  charts: 'Charts of the cohort',
  collections: 'Collections',
  patients: 'Patients of the cohort',
  studies: 'Studies of the cohort',
  series: 'Series of the cohort',
  export: 'Export the cohort',
  sql: 'SQL over the cohort',
  cart: 'The cart',
  changes: 'What changed since an earlier release',
};

/** The collection or analysis-result page open (#collection=<id>, #analysis=<id>), kept in the hash so the cohort's query stays as it is. */
type PageRef = { kind: 'collection' | 'analysis'; id: string };

function useHashPage(): [PageRef | null, (p: PageRef | null) => void] {
  const read = (): PageRef | null => {
    const h = new URLSearchParams(location.hash.slice(1));
    const c = h.get('collection');
    const a = h.get('analysis');
    return c ? { kind: 'collection', id: c } : a ? { kind: 'analysis', id: a } : null;
  };
  const [ref, setRef] = useState<PageRef | null>(read);
  useEffect(() => {
    const on = () => setRef(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const open = (next: PageRef | null) => {
    if (next) location.hash = `${next.kind}=${encodeURIComponent(next.id)}`;
    else history.pushState(null, '', `${location.pathname}${location.search}`);
    setRef(next);
    requestAnimationFrame(() => document.getElementById('main')?.focus());
  };
  return [ref, open];
}

/** Below this width the filters leave the page for a drawer (styles.css uses the same number). */
const NARROW = '(max-width: 1000px)';

function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const m = matchMedia(NARROW);
    const on = () => setNarrow(m.matches);
    m.addEventListener('change', on);
    return () => m.removeEventListener('change', on);
  }, []);
  return narrow;
}

function Tabs(props: { tab: Tab; onTab: (t: Tab) => void; facets: Facets | null; cartItems: number }) {
  const t = props.facets?.totals;
  const badge: Partial<Record<Tab, number | undefined>> = { patients: t?.patients, studies: t?.studies, series: t?.series, cart: props.cartItems };
  const move = (e: KeyboardEvent) => {
    const i = TABS.indexOf(props.tab);
    const next = e.key === 'ArrowRight' ? TABS[(i + 1) % TABS.length] : e.key === 'ArrowLeft' ? TABS[(i - 1 + TABS.length) % TABS.length] : null;
    if (next) {
      e.preventDefault();
      props.onTab(next);
      requestAnimationFrame(() => document.getElementById(`tab-${next}`)?.focus());
    }
  };
  return (
    <div class="tabs" role="tablist" aria-label="Views of the cohort" onKeyDown={move}>
      {TABS.map((tab) => (
        <button
          key={tab}
          id={`tab-${tab}`}
          type="button"
          role="tab"
          aria-selected={props.tab === tab}
          aria-controls={`panel-${tab}`}
          tabIndex={props.tab === tab ? 0 : -1}
          onClick={() => props.onTab(tab)}
        >
          {TAB_TITLES[tab]}
          {badge[tab] !== undefined ? <span class="tab-count">{fmtCount(badge[tab]!)}</span> : null}
        </button>
      ))}
    </div>
  );
}

render(<><DemoBanner /><App /></>, document.getElementById('app')!);
