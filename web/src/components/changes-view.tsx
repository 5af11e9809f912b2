// What changed since an earlier release, for the cohort: series added,
// revised and removed (POST /v3/cohort/changes), in totals and per collection
// or modality, with the full list as a download. Earlier releases record only
// some attributes; the cohort's other filters are left out, and said so.

import { useEffect, useState } from 'preact/hooks';
import { post, postText, type Filter } from '../api.ts';
import { count, saveText, size } from '../format.ts';
import { ChartView, PALETTE } from './chart.tsx';
import { ErrorBox, Note } from './common.tsx';

/** The terms a filter over releases may use (the route's `filterable`). */
const VERSION_TERMS = ['collection_id', 'PatientID', 'StudyInstanceUID', 'SeriesInstanceUID', 'Modality'];
/** Rows the chart shows (the table has them all). */
const CHART_ROWS = 15;

interface Group {
  value: string | null;
  added: number;
  revised: number;
  removed: number;
  unchanged: number;
  changed_MB: number;
}

interface Changes {
  from: string;
  to: string;
  counts: Record<'added' | 'revised' | 'removed', { series: number; size_MB: number }> & { unchanged: number };
  groups: Group[];
  warnings: string[];
}

/** The part of the cohort's filter an earlier release can answer, and the attributes left out. */
function versionFilter(f: Filter): { filter: Filter; dropped: string[] } {
  const terms: Filter['terms'] = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(f.terms)) {
    if (v.length === 0) continue;
    if (VERSION_TERMS.includes(k) && !v.includes(null)) terms[k] = v;
    else dropped.push(k);
  }
  for (const [k, r] of Object.entries(f.ranges)) if (r) dropped.push(k);
  return { filter: { terms, ranges: {} }, dropped };
}

export function ChangesView(props: { filter: Filter; release: string }) {
  const current = Number(/\d+/.exec(props.release)?.[0] ?? 0);
  const earlier = Array.from({ length: Math.max(0, current - 2) }, (_, i) => `v${current - 1 - i}`);
  const [from, setFrom] = useState(earlier[0] ?? '');
  const [by, setBy] = useState<'collection_id' | 'Modality'>('collection_id');
  const [c, setC] = useState<Changes | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const { filter, dropped } = versionFilter(props.filter);
  const key = JSON.stringify([filter, from, by]);
  useEffect(() => {
    if (!from) return;
    const ac = new AbortController();
    setC(null);
    post<Changes>('/v3/cohort/changes', { filters: filter, from, limit: 0, by }, ac.signal)
      .then((r) => {
        setC(r);
        setError(null);
      })
      .catch((e: unknown) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [key]);
  if (!from) return <Note>This release has no earlier release to compare with.</Note>;

  const download = async () => {
    setSaving(true);
    try {
      const r = await postText('/v3/cohort/changes', { filters: filter, from, format: 'tsv' });
      saveText(`changes_${from}_${props.release}.tsv`, r.text, 'text/tab-separated-values');
    } catch (e) {
      setError(e);
    } finally {
      setSaving(false);
    }
  };
  const changed = (g: Group) => g.added + g.revised + g.removed;
  const shown = c ? c.groups.filter((g) => changed(g) > 0).slice(0, CHART_ROWS) : [];
  const label = by === 'collection_id' ? 'collection' : 'modality';
  return (
    <div class="changes" data-view="changes">
      <div class="row">
        <label>
          Since{' '}
          <select name="changes-from" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
            {earlier.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <span class="seg" role="radiogroup" aria-label="Count the changes by">
          {(['collection_id', 'Modality'] as const).map((b) => (
            <button key={b} type="button" role="radio" aria-checked={by === b} onClick={() => setBy(b)} data-by={b}>
              by {b === 'collection_id' ? 'collection' : 'modality'}
            </button>
          ))}
        </span>
        <button type="button" class="btn ghost" disabled={saving} onClick={() => void download()} data-action="download-changes">
          Download every change (.tsv)
        </button>
      </div>
      {dropped.length > 0 ? (
        <Note kind="warn">
          Earlier releases record only {VERSION_TERMS.join(', ')}: the cohort's filters on {dropped.join(', ')} are left out of these counts.
        </Note>
      ) : null}
      <ErrorBox error={error} title="Changes failed" />
      {c ? (
        <>
          <section class="totals" aria-label={`Changes since ${c.from}`} data-changes-total={c.counts.added.series + c.counts.revised.series + c.counts.removed.series}>
            {(['added', 'revised', 'removed'] as const).map((k) => (
              <div class="stat" key={k} data-change={k} data-value={c.counts[k].series}>
                <div class="stat-value">{count(c.counts[k].series)}</div>
                <div class="stat-label">
                  {k} · {size(c.counts[k].size_MB)}
                </div>
              </div>
            ))}
            <div class="stat" data-change="unchanged" data-value={c.counts.unchanged}>
              <div class="stat-value">{count(c.counts.unchanged)}</div>
              <div class="stat-label">unchanged</div>
            </div>
          </section>
          <p class="muted small">
            From {c.from} to {c.to}.
          </p>
          {c.warnings.map((w) => (
            <Note key={w}>{w}</Note>
          ))}
          {shown.length > 0 ? (
            <section class="card">
              <h3>Most changed, by {label}</h3>
              <ChartView
                kind="hbar"
                title={`Series added, revised and removed since ${c.from}, by ${label}`}
                labels={shown.map((g) => g.value ?? '(none)')}
                series={[{ label: 'changed series', values: shown.map(changed), color: PALETTE[0]! }]}
                height={Math.max(120, shown.length * 26 + 40)}
              />
            </section>
          ) : (
            <Note>Nothing in this cohort changed since {c.from}.</Note>
          )}
          <div class="scroll-x">
            <table class="data" data-changes-by={by}>
              <thead>
                <tr>
                  <th scope="col">{label}</th>
                  <th scope="col">added</th>
                  <th scope="col">revised</th>
                  <th scope="col">removed</th>
                  <th scope="col">unchanged</th>
                  <th scope="col">changed size</th>
                </tr>
              </thead>
              <tbody>
                {c.groups.map((g) => (
                  <tr key={g.value ?? ''} data-group={g.value ?? ''}>
                    <th scope="row">{g.value ?? '(none)'}</th>
                    <td>{count(g.added)}</td>
                    <td>{count(g.revised)}</td>
                    <td>{count(g.removed)}</td>
                    <td>{count(g.unchanged)}</td>
                    <td>{size(g.changed_MB)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : error ? null : (
        <div class="muted">Loading…</div>
      )}
    </div>
  );
}
