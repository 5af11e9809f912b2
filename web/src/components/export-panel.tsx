// Export of the cohort: the manifest for either object store (file download
// and copy), the ready-to-run idqs and s5cmd commands, the series table as
// CSV or JSON, and citations in each format the API offers. Everything comes
// from the API; nothing is built here but file names.

import { useEffect, useState } from 'preact/hooks';
import { hasFilter, post, postText, type Citations, type Filter, type ManifestPayload, type TablePage } from '../api.ts';
import { count, csv, saveParts, saveText, size, stamp } from '../format.ts';
import { CodeBlock, CopyButton, ErrorBox, Note } from './common.tsx';

/** The citation formats of POST /v3/citations. */
const CITATION_FORMATS = ['apa', 'bibtex', 'ris', 'csl-json'] as const;
/** Series rows per request of a CSV/JSON export of the table (the whole cohort is fetched, page by page). */
const TABLE_EXPORT_PAGE = 5000;
/** Manifest formats of POST /v3/cohort/manifest.txt, with the extension a saved file takes. */
const MANIFEST_FORMATS = { s5cmd: 's5cmd', urls: 'txt', csv: 'csv', tsv: 'tsv', json: 'json' } as const;
type ManifestFormat = keyof typeof MANIFEST_FORMATS;
const isTable = (f: ManifestFormat) => f === 'csv' || f === 'tsv' || f === 'json';
/** The API's default columns of a table manifest, shown so they can be edited. */
const DEFAULT_COLUMNS = 'collection_id, PatientID, StudyInstanceUID, SeriesInstanceUID, Modality, instanceCount, series_size_MB, url';

export function ExportPanel(props: { filter: Filter; series: number | null }) {
  const filtered = hasFilter(props.filter);
  return (
    <div class="export">
      {!filtered ? <Note kind="warn">Select something first: manifests and download commands are refused for the whole release (over 100 TB in the real corpus).</Note> : null}
      <ManifestExport filter={props.filter} enabled={filtered} />
      <Commands filter={props.filter} enabled={filtered} />
      <TableExport filter={props.filter} series={props.series} />
      <CitationsExport filter={props.filter} />
    </div>
  );
}

function ManifestExport(props: { filter: Filter; enabled: boolean }) {
  const [source, setSource] = useState<'cloud1' | 'cloud2'>('cloud1');
  const [format, setFormat] = useState<ManifestFormat>('s5cmd');
  const [columns, setColumns] = useState(DEFAULT_COLUMNS);
  const [m, setM] = useState<{ text: string; total: number; returned: number; truncated: boolean } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const key = JSON.stringify([props.filter, source, format, isTable(format) ? columns : null]);
  useEffect(() => {
    setM(null);
    setError(null);
  }, [key]);
  const load = async () => {
    if (m) return m;
    setBusy(true);
    try {
      const r = await postText('/v3/cohort/manifest.txt', { filters: props.filter, source, format, ...(isTable(format) ? { columns } : {}) });
      const got = {
        text: r.text,
        total: Number(r.headers.get('x-total-count')),
        returned: Number(r.headers.get('x-returned-count')),
        truncated: r.headers.get('x-truncated') === 'true',
      };
      setM(got);
      setError(null);
      return got;
    } catch (e) {
      setError(e);
      return null;
    } finally {
      setBusy(false);
    }
  };
  const store = source === 'cloud1' ? 'aws' : 'gcs';
  // An s5cmd manifest opens with the command that runs it: save it under the name that command uses.
  const fileName = (text: string) => /\brun (\S+\.s5cmd)\s*$/m.exec(text.split('\n', 1)[0] ?? '')?.[1] ?? `manifest_${stamp()}_${store}.${MANIFEST_FORMATS[format]}`;
  return (
    <section class="card" aria-labelledby="exp-manifest">
      <h3 id="exp-manifest">Manifest</h3>
      <div class="row">
        <label>
          Store{' '}
          <select value={source} onChange={(e) => setSource(e.currentTarget.value as 'cloud1' | 'cloud2')} name="source">
            <option value="cloud1">cloud1 (aws)</option>
            <option value="cloud2">cloud2 (gcs)</option>
          </select>
        </label>
        <label>
          Format{' '}
          <select value={format} onChange={(e) => setFormat(e.currentTarget.value as ManifestFormat)} name="format">
            <option value="s5cmd">s5cmd (cp lines)</option>
            <option value="urls">URLs (one per series)</option>
            <option value="csv">CSV (chosen columns)</option>
            <option value="tsv">TSV (chosen columns)</option>
            <option value="json">JSON (chosen columns)</option>
          </select>
        </label>
        {isTable(format) ? (
          <label class="grow">
            Columns{' '}
            <input
              type="text"
              name="columns"
              value={columns}
              size={48}
              spellcheck={false}
              aria-describedby="exp-columns-help"
              onInput={(e) => setColumns(e.currentTarget.value)}
            />
          </label>
        ) : null}
        <button
          type="button"
          class="btn"
          disabled={!props.enabled || busy}
          data-action="download-manifest"
          onClick={async () => {
            const got = await load();
            if (got) saveText(fileName(got.text), got.text);
          }}
        >
          Download .{MANIFEST_FORMATS[format]}
        </button>
        <button type="button" class="btn ghost" disabled={!props.enabled || busy} onClick={() => void load()}>
          Show
        </button>
        {m ? <CopyButton text={m.text} label="Copy manifest" /> : null}
      </div>
      {isTable(format) ? (
        <p class="muted small" id="exp-columns-help">
          Any column of the index table (see SQL), and url: the series' folder in the chosen store. Separate names with commas.
        </p>
      ) : null}
      <ErrorBox error={error} />
      {m ? (
        <>
          <p class="muted small" data-manifest-total={m.total}>
            {count(m.returned)} of {count(m.total)} series{m.truncated ? ' — cut at the manifest cap: narrow the filter, or use the idqs command below.' : '.'}
          </p>
          <pre class="preview" tabIndex={0} aria-label="Manifest preview">
            {m.text.split('\n').slice(0, 30).join('\n')}
            {m.text.split('\n').length > 31 ? '\n…' : ''}
          </pre>
        </>
      ) : null}
    </section>
  );
}

function Commands(props: { filter: Filter; enabled: boolean }) {
  const [p, setP] = useState<ManifestPayload | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = JSON.stringify(props.filter);
  useEffect(() => {
    setP(null);
    if (!props.enabled) return;
    const ac = new AbortController();
    post<ManifestPayload>('/v3/cohort/manifest', { filters: props.filter, include_rows: false }, ac.signal)
      .then((r) => {
        setP(r);
        setError(null);
      })
      .catch((e: unknown) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [key, props.enabled]);
  if (!props.enabled) return null;
  const d = p?.download;
  return (
    <section class="card" aria-labelledby="exp-commands">
      <h3 id="exp-commands">Download commands</h3>
      <ErrorBox error={error} />
      {d ? (
        <>
          <p class="muted small">
            {count(d.total_series)} series, {size(d.size_TB * 1e6)}. {d.note}
          </p>
          <CodeBlock label="idqs download (this service's downloader)" text={d.commands.idqs.join('\n')} id="cmd-idqs" />
          <CodeBlock label={`s5cmd from ${d.stores.cloud1.name} (cloud1)`} text={d.commands.s5cmd_cloud1.join('\n')} />
          <CodeBlock label={`s5cmd from ${d.stores.cloud2.name} (cloud2)`} text={d.commands.s5cmd_cloud2.join('\n')} />
          <CodeBlock label="Save the manifest with curl" text={d.commands.save_manifest} />
        </>
      ) : error ? null : (
        <div class="muted">Loading…</div>
      )}
    </section>
  );
}

function TableExport(props: { filter: Filter; series: number | null }) {
  const [progress, setProgress] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async (kind: 'csv' | 'json') => {
    setError(null);
    // Each page becomes text at once and only the text parts are kept (saved as one Blob):
    // the whole cohort is exported without ever holding all its rows as objects.
    const parts: string[] = [];
    let done = 0;
    try {
      for (let page = 0; ; page++) {
        const t = await post<TablePage>('/v3/cohort/table', { filters: props.filter, level: 'series', page, page_size: TABLE_EXPORT_PAGE });
        if (kind === 'csv') {
          const text = csv(t.columns, t.rows);
          parts.push(page === 0 ? text : text.slice(text.indexOf('\r\n') + 2));
        } else if (t.rows.length > 0) parts.push(t.rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
        done += t.rows.length;
        setProgress(`${count(done)} of ${count(t.total)} rows`);
        if (page + 1 >= t.total_pages) break;
      }
      const name = `series_${stamp()}.${kind}`;
      saveParts(name, parts, kind === 'csv' ? 'text/csv' : 'application/x-ndjson');
      setProgress(`Saved ${count(done)} rows as ${name}`);
    } catch (e) {
      setError(e);
      setProgress(null);
    }
  };
  const pages = Math.ceil((props.series ?? 0) / TABLE_EXPORT_PAGE);
  return (
    <section class="card" aria-labelledby="exp-table">
      <h3 id="exp-table">Series table</h3>
      <div class="row">
        <button type="button" class="btn" onClick={() => void run('csv')}>
          Download CSV
        </button>
        <button type="button" class="btn ghost" onClick={() => void run('json')}>
          Download JSON (one object per line)
        </button>
        {progress ? (
          <span class="muted small" role="status">
            {progress}
          </span>
        ) : null}
      </div>
      {pages > 1 ? <p class="muted small">Every series is exported, fetched in {count(pages)} requests of {count(TABLE_EXPORT_PAGE)} rows.</p> : null}
      <ErrorBox error={error} />
    </section>
  );
}

function CitationsExport(props: { filter: Filter }) {
  const [format, setFormat] = useState<(typeof CITATION_FORMATS)[number]>('apa');
  const [c, setC] = useState<Citations | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = JSON.stringify([props.filter, format]);
  useEffect(() => {
    const ac = new AbortController();
    post<Citations>('/v3/citations', { filters: props.filter, citation_format: format }, ac.signal)
      .then((r) => {
        setC(r);
        setError(null);
      })
      .catch((e: unknown) => !ac.signal.aborted && setError(e));
    return () => ac.abort();
  }, [key]);
  const asText = (x: string | Record<string, unknown>) => (typeof x === 'string' ? x : JSON.stringify(x, null, 2));
  const text = c ? (format === 'csl-json' ? JSON.stringify([...c.citations, c.idc_acknowledgment], null, 2) : [...c.citations, c.idc_acknowledgment].map(asText).join('\n\n')) : '';
  const ext = { apa: 'txt', bibtex: 'bib', ris: 'ris', 'csl-json': 'json' }[format];
  return (
    <section class="card" aria-labelledby="exp-cite">
      <h3 id="exp-cite">Citations</h3>
      <div class="row">
        <span class="seg" role="radiogroup" aria-label="Citation format">
          {CITATION_FORMATS.map((f) => (
            <button key={f} type="button" role="radio" aria-checked={format === f} onClick={() => setFormat(f)}>
              {f}
            </button>
          ))}
        </span>
        {c ? <CopyButton text={text} label="Copy citations" /> : null}
        {c ? (
          <button type="button" class="btn ghost" onClick={() => saveText(`citations.${ext}`, text)}>
            Download .{ext}
          </button>
        ) : null}
      </div>
      <ErrorBox error={error} />
      {c ? (
        <>
          <p class="muted small">
            {count(c.count)} dataset{c.count === 1 ? '' : 's'} plus the platform paper. {c.recommendation}
          </p>
          <pre class="preview cite" tabIndex={0} aria-label="Citations">
            {text}
          </pre>
        </>
      ) : null}
    </section>
  );
}
