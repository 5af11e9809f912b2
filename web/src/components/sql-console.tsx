// SQL console over POST /v3/sql: an editor (Ctrl/⌘+Enter runs), the tables
// and their columns at hand (click to insert), the result with its
// truncation flag, the engine's own error messages (with their "Did you
// mean" hints) and a CSV download of the result. The current cohort or the
// cart can be put in as a table, `cohort`, from the SQL the service gives
// for the filter (the counts route's `sql`), so the query shows how.

import { useEffect, useRef, useState } from 'preact/hooks';
import { get, hasFilter, post, type Filter, type SqlResult, type TableSchema, type TableSummary } from '../api.ts';
import { count, csv, saveText, stamp } from '../format.ts';
import { CellView, ErrorBox, Note } from './common.tsx';
import { SqlChart } from './sql-chart.tsx';
import { numericColumns } from '../sql-points.ts';

const EXAMPLE = 'SELECT collection_id, Modality, count(*) AS series, round(sum(series_size_MB) / 1e3, 1) AS size_GB\nFROM index\nGROUP BY ALL\nORDER BY series DESC\nLIMIT 20';
const SHOWN_ROWS = 500;

/** The query with a cohort's SQL as the table `cohort`. */
function withCohort(cohortSql: string): string {
  return `WITH cohort AS (\n  ${cohortSql}\n)\nSELECT Modality, count(DISTINCT PatientID) AS patients, count(*) AS series, round(sum(series_size_MB) / 1e3, 1) AS size_GB\nFROM cohort\nGROUP BY ALL\nORDER BY series DESC`;
}

export function SqlConsole(props: { cohort: Filter; cart: Filter | null }) {
  const [sql, setSql] = useState(EXAMPLE);
  const [using, setUsing] = useState<string | null>(null);
  const useTable = async (which: 'cohort' | 'cart') => {
    try {
      const f = which === 'cart' && props.cart ? props.cart : props.cohort;
      const r = await post<{ sql: string }>('/v3/cohort/counts', f);
      setSql(withCohort(r.sql));
      setUsing(which === 'cart' ? 'the cart' : 'the current cohort');
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  const [maxRows, setMaxRows] = useState(1000);
  const [result, setResult] = useState<SqlResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [elapsed, setElapsed] = useState<number | null>(null);
  const [charted, setCharted] = useState(false);
  const [tables, setTables] = useState<TableSummary[]>([]);
  const [schema, setSchema] = useState<TableSchema | null>(null);
  const editor = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    get<{ tables: TableSummary[] }>('/v3/tables')
      .then((t) => setTables(t.tables))
      .catch(() => {});
  }, []);

  const run = async () => {
    setBusy(true);
    const t0 = performance.now();
    try {
      setResult(await post<SqlResult>('/v3/sql', { sql, max_rows: maxRows }));
      setError(null);
    } catch (e) {
      setError(e);
      setResult(null);
    } finally {
      setElapsed(performance.now() - t0);
      setBusy(false);
    }
  };

  const insert = (text: string) => {
    const el = editor.current;
    if (!el) return;
    const start = el.selectionStart;
    const next = sql.slice(0, start) + text + sql.slice(el.selectionEnd);
    setSql(next);
    requestAnimationFrame(() => {
      el.focus();
      el.selectionStart = el.selectionEnd = start + text.length;
    });
  };

  const show = async (name: string) => {
    try {
      setSchema(await get<TableSchema>(`/v3/tables/${encodeURIComponent(name)}`));
    } catch (e) {
      setError(e);
    }
  };

  return (
    <div class="sql">
      <aside class="sql-side" aria-label="Tables">
        <h3>Tables</h3>
        <ul class="tables">
          {tables.map((t) => (
            <li key={t.name}>
              <button type="button" class="link" title={t.description} onClick={() => void show(t.name)} aria-pressed={schema?.name === t.name}>
                {t.name}
              </button>
            </li>
          ))}
        </ul>
        {schema ? (
          <div class="schema" data-schema={schema.name}>
            <h4>
              <button type="button" class="link" onClick={() => insert(schema.name)} title="Insert the table name">
                {schema.name}
              </button>
            </h4>
            <ul>
              {schema.columns.map((c) => (
                <li key={c.name}>
                  <button type="button" class="link mono" onClick={() => insert(c.name)} title={c.description}>
                    {c.name}
                  </button>{' '}
                  <span class="muted small">{c.type}</span>
                </li>
              ))}
            </ul>
          </div>
        ) : (
          <p class="muted small">Pick a table to see its columns; click a name to insert it. Clinical tables are clinical.&lt;table&gt;.</p>
        )}
      </aside>
      <div class="sql-main">
        <div class="row" data-sql-cohort>
          <span class="muted small">Query as a table named cohort:</span>
          <button type="button" class="btn ghost small" disabled={!hasFilter(props.cohort)} onClick={() => void useTable('cohort')} data-use="cohort">
            The current cohort
          </button>
          <button type="button" class="btn ghost small" disabled={!props.cart} onClick={() => void useTable('cart')} data-use="cart">
            The cart
          </button>
          {using ? (
            <span class="muted small" data-using={using}>
              The query starts with {using} as <code>WITH cohort AS (SELECT * FROM index WHERE …)</code>: edit what follows, or the filter itself.
            </span>
          ) : null}
        </div>
        <label for="sql-editor" class="sr-label">
          SQL (one read-only SELECT or WITH statement)
        </label>
        <textarea
          id="sql-editor"
          ref={editor}
          class="editor"
          spellcheck={false}
          value={sql}
          rows={9}
          onInput={(e) => setSql(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void run();
            }
          }}
        />
        <div class="row">
          <button type="button" class="btn" onClick={() => void run()} disabled={busy} data-action="run-sql">
            {busy ? 'Running…' : 'Run'}
          </button>
          <span class="muted small">Ctrl+Enter</span>
          <label>
            Max rows{' '}
            <input type="number" min={1} value={maxRows} class="narrow" onChange={(e) => setMaxRows(Math.max(1, Number(e.currentTarget.value) || 1))} />
          </label>
          {result ? (
            <button type="button" class="btn ghost" onClick={() => saveText(`query_${stamp()}.csv`, csv(result.columns, result.rows), 'text/csv')}>
              Download CSV
            </button>
          ) : null}
          {result && numericColumns(result).length > 0 ? (
            <button type="button" class="btn ghost" aria-pressed={charted} data-action="chart-sql" onClick={() => setCharted(!charted)}>
              {charted ? 'Hide chart' : 'Chart'}
            </button>
          ) : null}
        </div>
        <ErrorBox error={error} title="Query failed" />
        {result ? (
          <div class="sql-result">
            <p class="muted small" data-row-count={result.row_count}>
              {count(result.row_count)} row{result.row_count === 1 ? '' : 's'}
              {elapsed !== null ? ` in ${(elapsed / 1000).toFixed(2)} s` : ''}
            </p>
            {result.truncated ? (
              <Note kind="warn">
                <span data-truncated="true">Truncated at {count(result.max_rows)} rows</span>: more rows exist. Raise max rows (the server caps it), aggregate, or add LIMIT.
              </Note>
            ) : null}
            {charted ? <SqlChart result={result} /> : null}
            <div class="scroll-x">
              <table class="data">
                <thead>
                  <tr>
                    {result.columns.map((c, i) => (
                      <th key={c} scope="col" title={result.types[i]}>
                        {c}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {result.rows.slice(0, SHOWN_ROWS).map((r, i) => (
                    <tr key={i}>
                      {result.columns.map((c) => (
                        <td key={c} data-col={c}>
                          <CellView column={c} value={r[c] ?? null} />
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {result.rows.length > SHOWN_ROWS ? <p class="muted small">Showing {SHOWN_ROWS} rows; the CSV has all {count(result.rows.length)}.</p> : null}
          </div>
        ) : null}
      </div>
    </div>
  );
}
