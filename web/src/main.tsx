// The IDQS cohort explorer: a filter panel with live facet counts, the
// cohort's totals, licenses and charts, tables of its collections, patients,
// studies and series, export and an SQL console. All data comes from the API
// at run time; the cohort lives in the URL (portal filter links work too).

import { render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { get, hasFilter, post, type AttributeInfo, type CountMode, type Facets, type Filter, type Licenses, type Version } from './api.ts';
import { Charts } from './components/charts.tsx';
import { ErrorBox, Note } from './components/common.tsx';
import { DataTable, type Level } from './components/data-table.tsx';
import { DemoBanner } from './components/demo-banner.tsx';
import { ExportPanel } from './components/export-panel.tsx';
import { FilterPanel } from './components/filter-panel.tsx';
import { SqlConsole } from './components/sql-console.tsx';
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
};

interface Boot {
  attributes: AttributeInfo[];
  version: Version;
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

  useEffect(() => {
    Promise.all([get<AttributeInfo[]>('/v3/attributes'), get<Version>('/v3/version')])
      .then(([attributes, version]) => {
        const parsed = parseQuery(location.search, attributes);
        setBoot({ attributes, version });
        setView(parsed.state);
        setNotes(parsed.notes);
        // A portal link (/explore/filters/?...) or any other spelling becomes the canonical URL.
        history.replaceState(null, '', `/${toQuery(parsed.state)}`);
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

  const filterKey = view ? JSON.stringify(view.filter) : '';
  const mode = view?.count ?? 'patients';
  const inflight = useRef<AbortController | null>(null);
  const first = useRef(true);
  useEffect(() => {
    if (!view) return;
    setLoading(true);
    // The first counts are asked for at once; later ones after a short pause, so quick clicks make one request.
    const delay = first.current ? 0 : DEBOUNCE_MS;
    first.current = false;
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
        <div class="brand">
          <span class="logo" aria-hidden="true">
            ◧
          </span>
          <span>IDQS Explorer</span>
        </div>
        <div class="release" data-release={boot.version.idc_version}>
          Data release <strong>{boot.version.idc_version}</strong>
          {boot.version.synthetic ? <span class="tag">synthetic</span> : null}
        </div>
        <nav class="links" aria-label="Service">
          <a href="/v3/docs">API docs</a>
          <a href="/v3/openapi.json">OpenAPI</a>
        </nav>
      </header>
      <div class={`progress${loading ? ' on' : ''}`} aria-hidden="true" />
      <div class="layout">
        <FilterPanel attributes={boot.attributes} facets={facets?.facets ?? null} filter={view.filter} countLabel={mode} onFilter={setFilter} />
        <main id="main" tabIndex={-1}>
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
          <Tabs tab={view.tab} onTab={setTab} facets={facets} />
          <section id={`panel-${view.tab}`} role="tabpanel" aria-labelledby={`tab-${view.tab}`} class="tab-panel">
            {view.tab === 'charts' ? (
              <Charts attributes={boot.attributes} facets={facets?.facets ?? null} filter={view.filter} mode={mode} onFilter={setFilter} />
            ) : view.tab === 'export' ? (
              <ExportPanel filter={view.filter} series={facets?.totals.series ?? null} />
            ) : view.tab === 'sql' ? (
              <SqlConsole />
            ) : (
              <DataTable level={view.tab as Level} filter={view.filter} />
            )}
          </section>
        </main>
      </div>
    </>
  );
}

function Tabs(props: { tab: Tab; onTab: (t: Tab) => void; facets: Facets | null }) {
  const t = props.facets?.totals;
  const badge: Partial<Record<Tab, number | undefined>> = { patients: t?.patients, studies: t?.studies, series: t?.series };
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
