// Analysis results (derived datasets: segmentations, annotations, radiomics)
// as the portal lists them: title, source collections, modalities, license,
// subjects, patients in the cohort, and a page for each (DOI, citation,
// counts by modality, description, open as the cohort), at #analysis=<id>.

import { useEffect, useState } from 'preact/hooks';
import { get, type CountMode, type Facets, type Filter, type TermFacet } from '../api.ts';
import { count as fmtCount } from '../format.ts';
import { ErrorBox } from './common.tsx';
import { DetailTail, useDetailFacts } from './detail-parts.tsx';
import { ListView, type Column } from './list-view.tsx';

export interface AnalysisResult {
  analysis_result_id: string;
  analysis_result_title: string | null;
  source_DOI: string | null;
  source_url: string | null;
  subjects: number | null;
  collections: string | null;
  modalities: string | null;
  license_short_name: string | null;
  description: string | null;
}

let all: Promise<AnalysisResult[]> | null = null;
/** The release's analysis results, asked for once. */
export function analysisResults(): Promise<AnalysisResult[]> {
  all ??= get<AnalysisResult[]>('/v3/analysis_results').catch((e: unknown) => {
    all = null;
    throw e;
  });
  return all;
}

export function AnalysisList(props: { facets: Facets | null; mode: CountMode; onOpen: (id: string) => void }) {
  const [rows, setRows] = useState<AnalysisResult[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    analysisResults().then(setRows).catch(setError);
  }, []);
  if (error) return <ErrorBox error={error} title="Analysis results failed" />;
  if (!rows) return <div class="muted">Loading analysis results…</div>;
  const f = props.facets?.facets.analysis_result_id as TermFacet | undefined;
  const inCohort = new Map((f?.values ?? []).map((v) => [v.value, v.filtered_count]));
  const lower = (x: string | null) => (x ?? '').toLowerCase();
  const columns: Column<AnalysisResult>[] = [
    {
      key: 'title',
      heading: 'Analysis result',
      sortValue: (r) => lower(r.analysis_result_title ?? r.analysis_result_id),
      cell: (r) => (
        <>
          <a href={`#analysis=${encodeURIComponent(r.analysis_result_id)}`} onClick={(e) => (e.preventDefault(), props.onOpen(r.analysis_result_id))}>
            {r.analysis_result_title ?? r.analysis_result_id}
          </a>
          <div class="mono muted small">{r.analysis_result_id}</div>
        </>
      ),
    },
    {
      key: 'collections',
      priority: 2,
      heading: 'Source collections',
      sortValue: (r) => lower(r.collections),
      cell: (r) => (
        <span class="clamp" title={r.collections ?? ''}>
          {r.collections ?? '—'}
        </span>
      ),
    },
    { key: 'modalities', priority: 3, heading: 'Modalities', sortValue: (r) => lower(r.modalities), cell: (r) => r.modalities ?? '—' },
    { key: 'license', priority: 3, heading: 'License', sortValue: (r) => lower(r.license_short_name), cell: (r) => r.license_short_name ?? '—' },
    { key: 'subjects', priority: 2, heading: 'Subjects', num: true, sortValue: (r) => r.subjects ?? -1, cell: (r) => (r.subjects === null ? '—' : fmtCount(r.subjects)) },
    {
      key: 'cohort',
      heading: `${props.mode} in cohort`,
      num: true,
      sortValue: (r) => inCohort.get(r.analysis_result_id) ?? 0,
      cell: (r) => <span data-in-cohort={inCohort.get(r.analysis_result_id) ?? 0}>{fmtCount(inCohort.get(r.analysis_result_id) ?? 0)}</span>,
    },
  ];
  return (
    <ListView
      view="analysis-list"
      title="Analysis results"
      noun="analysis results"
      rows={rows}
      rowKey={(r) => r.analysis_result_id}
      rowAttrs={(r) => ({ 'data-analysis': r.analysis_result_id })}
      searchText={(r) => [r.analysis_result_id, r.analysis_result_title, r.collections, r.modalities]}
      searchLabel="Search analysis results"
      searchPlaceholder="Search title, collections, modalities"
      columns={columns}
      initialSort={{ key: 'cohort', desc: true }}
    />
  );
}

export function AnalysisPage(props: { id: string; mode: CountMode; onBack: () => void; onCohort: (f: Filter) => void }) {
  const [r, setR] = useState<AnalysisResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const facts = useDetailFacts({ analysis_result_id: [props.id] }, props.mode);
  const totals = facts.totals;
  useEffect(() => {
    analysisResults()
      .then((rs) => {
        const found = rs.find((x) => x.analysis_result_id === props.id);
        if (found) setR(found);
        else setError(new Error(`No analysis result has analysis_result_id '${props.id}'.`));
      })
      .catch(setError);
  }, [props.id]);
  if (error) return <ErrorBox error={error} title={`Analysis result ${props.id}`} />;
  if (!r) return <div class="muted">Loading {props.id}…</div>;
  return (
    <article class="card detail" data-view="analysis-page" data-analysis-page={r.analysis_result_id}>
      <div class="card-head">
        <button type="button" class="link" onClick={props.onBack}>
          ← All analysis results
        </button>
        <button type="button" class="btn" onClick={() => props.onCohort({ terms: { analysis_result_id: [r.analysis_result_id] }, ranges: {} })}>
          Open as the cohort
        </button>
      </div>
      <h2>{r.analysis_result_title ?? r.analysis_result_id}</h2>
      <dl class="facts">
        <dt>Analysis result ID</dt>
        <dd class="mono">{r.analysis_result_id}</dd>
        <dt>Source collections</dt>
        <dd>{r.collections ?? '—'}</dd>
        <dt>Counts</dt>
        <dd data-detail-counts={totals ? `${totals.patients}/${totals.studies}/${totals.series}` : ''}>
          {totals ? `${fmtCount(totals.patients)} patients · ${fmtCount(totals.studies)} studies · ${fmtCount(totals.series)} series` : '…'}
        </dd>
        <dt>Modalities</dt>
        <dd>{r.modalities ?? '—'}</dd>
        <dt>License</dt>
        <dd>{r.license_short_name ?? '—'}</dd>
        <dt>DOI</dt>
        <dd>
          {r.source_DOI ? (
            <a href={`https://doi.org/${r.source_DOI}`} target="_blank" rel="noopener noreferrer">
              {r.source_DOI}
            </a>
          ) : (
            '—'
          )}
        </dd>
      </dl>
      <DetailTail facts={facts} mode={props.mode} description={r.description} />
    </article>
  );
}
