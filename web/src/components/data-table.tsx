// A table of the cohort's collections, patients, studies or series, paged
// and sorted on the server (POST /v3/cohort/table). Column headers sort
// (click again to reverse); studies and series open in the viewer
// /v3/viewer-url picks (and in VolView where it can open them); identifiers can be copied. The previous page stays
// visible while the next one loads.

import { useEffect, useRef, useState } from 'preact/hooks';
import { post, type Filter, type TablePage } from '../api.ts';
import { count } from '../format.ts';
import { toggleItems } from '../cart.ts';
import { CartToggle, CellView, ErrorBox } from './common.tsx';
import { RowDownload, useInCart } from './row-cart.tsx';

export type Level = 'collections' | 'patients' | 'studies' | 'series';

const HEADINGS: Record<string, string> = {
  collection_id: 'Collection',
  patients: 'Patients',
  studies: 'Studies',
  series: 'Series',
  PatientID: 'Patient ID',
  PatientSex: 'Sex',
  StudyInstanceUID: 'Study UID',
  SeriesInstanceUID: 'Series UID',
  StudyDate: 'Study date',
  SeriesDate: 'Series date',
  StudyDescription: 'Study description',
  SeriesDescription: 'Series description',
  SeriesNumber: 'Series #',
  BodyPartExamined: 'Body part',
  instanceCount: 'Instances',
  series_size_MB: 'Size',
  size_MB: 'Size',
  license_short_name: 'License',
  licenses: 'Licenses',
  modalities: 'Modalities',
  viewer_url: 'View',
};

/** Columns shown per level (the API returns more; the CSV export has them all). */
const SHOWN: Partial<Record<Level, string[]>> = {
  series: ['SeriesInstanceUID', 'StudyInstanceUID', 'Modality', 'BodyPartExamined', 'SeriesDescription', 'SeriesNumber', 'instanceCount', 'series_size_MB', 'viewer_url'],
  studies: ['StudyInstanceUID', 'PatientID', 'StudyDate', 'StudyDescription', 'modalities', 'series', 'size_MB', 'viewer_url'],
};

const NUMERIC = new Set(['patients', 'studies', 'series', 'size_MB', 'series_size_MB', 'instanceCount']);
const PAGE_SIZES = [10, 25, 50, 100, 500, 1000];

const KEY_OF: Record<Level, string> = { collections: 'collection_id', patients: 'PatientID', studies: 'StudyInstanceUID', series: 'SeriesInstanceUID' };

export function DataTable(props: { level: Level; filter: Filter; release: string }) {
  const [sort, setSort] = useState<{ col: string | null; order: 'asc' | 'desc' }>({ col: null, order: 'asc' });
  const [page, setPage] = useState(0);
  const [size, setSize] = useState(25);
  const [data, setData] = useState<TablePage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const filterKey = JSON.stringify(props.filter);
  const prevFilter = useRef(filterKey);

  // A new filter or level starts again from the first page.
  useEffect(() => {
    if (prevFilter.current !== filterKey) {
      prevFilter.current = filterKey;
      setPage(0);
    }
  }, [filterKey]);
  useEffect(() => {
    setSort({ col: null, order: 'asc' });
    setPage(0);
  }, [props.level]);

  useEffect(() => {
    const ac = new AbortController();
    setLoading(true);
    post<TablePage>(
      '/v3/cohort/table',
      { filters: props.filter, level: props.level, sort: sort.col ?? undefined, order: sort.order, page, page_size: size },
      ac.signal,
    )
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((e: unknown) => {
        if (!ac.signal.aborted) setError(e);
      })
      .finally(() => {
        if (!ac.signal.aborted) setLoading(false);
      });
    return () => ac.abort();
  }, [props.level, filterKey, sort.col, sort.order, page, size]);

  const toggle = (col: string) => {
    setSort((s) => (s.col === col ? { col, order: s.order === 'asc' ? 'desc' : 'asc' } : { col, order: NUMERIC.has(col) ? 'desc' : 'asc' }));
    setPage(0);
  };
  const rows = data?.level === props.level ? data : null;
  const columns = rows ? (SHOWN[props.level] ?? rows.columns).filter((c) => rows.columns.includes(c)) : [];
  const hasViewer = columns.includes('viewer_url');
  const fields = columns.filter((c) => c !== 'viewer_url');
  const inCart = useInCart(props.level, rows ? rows.rows.map((r) => String(r[KEY_OF[props.level]])) : []);
  return (
    <section class={`table-wrap${loading ? ' loading' : ''}`} aria-busy={loading} data-table={props.level}>
      <ErrorBox error={error} />
      {rows ? (
        <>
          <div class="table-meta">
            <span data-total-rows={rows.total}>
              {count(rows.total)} {props.level}
              {rows.total > 0 ? ` · rows ${count(rows.page * rows.page_size + 1)}–${count(rows.page * rows.page_size + rows.rows.length)}` : ''}
            </span>
            <button
              type="button"
              class="btn ghost small"
              data-add-page={props.level}
              disabled={rows.rows.length === 0}
              onClick={() => toggleItems(props.level, rows.rows.map((r) => String(r[KEY_OF[props.level]])), true, props.release)}
            >
              Add these {count(rows.rows.length)} {props.level} to the cart
            </button>
          </div>
          <div class="scroll-x">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Cart</th>
                  {/* The actions come first, so a laptop's card never hides them to the right. */}
                  {hasViewer ? <th scope="col">View</th> : null}
                  <th scope="col">Download</th>
                  <th scope="col" class="num" title="Series of this row in the cart">
                    # in cart
                  </th>
                  {fields.map((c) => {
                    const sortable = !['modalities', 'licenses', 'viewer_url'].includes(c);
                    const dir = sort.col === c ? (sort.order === 'asc' ? 'ascending' : 'descending') : 'none';
                    return (
                      <th key={c} scope="col" aria-sort={sortable ? dir : undefined} class={NUMERIC.has(c) ? 'num' : undefined}>
                        {sortable ? (
                          <button type="button" class="sort" onClick={() => toggle(c)} data-sort={c} title={`Sort by ${c}`}>
                            {HEADINGS[c] ?? c}
                            <span aria-hidden="true" class="arrow">
                              {sort.col === c ? (sort.order === 'asc' ? '▲' : '▼') : '↕'}
                            </span>
                          </button>
                        ) : (
                          (HEADINGS[c] ?? c)
                        )}
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {rows.rows.map((r, i) => (
                  <tr key={i}>
                    <td>
                      <CartToggle kind={props.level} id={String(r[KEY_OF[props.level]])} release={props.release} />
                    </td>
                    {hasViewer ? (
                      <td data-col="viewer_url" data-action-col>
                        {typeof r.viewer_url === 'string' ? (
                          <a class="viewer" href={r.viewer_url} target="_blank" rel="noopener noreferrer" data-viewer-for={String(r.SeriesInstanceUID ?? r.StudyInstanceUID)}>
                            {r.viewer_url.includes('/slim/') ? 'Slim' : 'OHIF'} ↗
                          </a>
                        ) : (
                          '—'
                        )}
                        {typeof r.volview_url === 'string' ? (
                          <a class="viewer alt" href={r.volview_url} target="_blank" rel="noopener noreferrer" data-volview-for={String(r.SeriesInstanceUID ?? r.StudyInstanceUID)}>
                            VolView ↗
                          </a>
                        ) : null}
                      </td>
                    ) : null}
                    <td data-action-col>
                      <RowDownload level={props.level} id={String(r[KEY_OF[props.level]])} />
                    </td>
                    <td class="num" data-in-cart={String(r[KEY_OF[props.level]])}>
                      {inCart?.get(String(r[KEY_OF[props.level]])) ?? '—'}
                    </td>
                    {fields.map((c) => (
                      <td key={c} class={NUMERIC.has(c) ? 'num' : undefined} data-col={c}>
                        <CellView column={c} value={r[c] ?? null} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <button type="button" class="btn small" disabled={page === 0} onClick={() => setPage(0)} aria-label="First page">
              «
            </button>
            <button type="button" class="btn small" disabled={page === 0} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span data-page={rows.page}>
              Page {count(rows.page + 1)} of {count(Math.max(1, rows.total_pages))}
            </span>
            <button type="button" class="btn small" disabled={page + 1 >= rows.total_pages} onClick={() => setPage(page + 1)}>
              Next
            </button>
            <button type="button" class="btn small" disabled={page + 1 >= rows.total_pages} onClick={() => setPage(rows.total_pages - 1)} aria-label="Last page">
              »
            </button>
            <label class="page-size">
              Rows per page{' '}
              <select
                value={size}
                onChange={(e) => {
                  setSize(Number(e.currentTarget.value));
                  setPage(0);
                }}
              >
                {PAGE_SIZES.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
          </div>
        </>
      ) : error ? null : (
        <div class="muted">Loading {props.level}…</div>
      )}
    </section>
  );
}
