// The filter panel: every attribute the API lists, grouped, each with its
// facet. Term attributes are checkbox lists with live counts (counted under
// every other filter), value search, sort by count or name and select/clear;
// range attributes have min/max inputs and a clickable histogram; identifiers
// take a pasted list. Counts of the last answer stay visible while the next
// one loads.

import { useEffect, useMemo, useState } from 'preact/hooks';
import type { AttributeInfo, Bound, CountMode, Facet, Filter, RangeFacet, TermFacet } from '../api.ts';
import { count as fmtCount, short } from '../format.ts';
import { OPEN_BY_DEFAULT, groupAttributes, label } from '../groups.ts';
import { parseBound, withRange, withTerms } from '../url-state.ts';
import { mainBins } from '../bins.ts';
import { ChartView } from './chart.tsx';
import { CollectionTree } from './collection-tree.tsx';

interface PanelProps {
  attributes: AttributeInfo[];
  facets: Record<string, Facet> | null;
  filter: Filter;
  countLabel: CountMode;
  onFilter: (f: Filter) => void;
}

interface FilterPanelProps extends PanelProps {
  /** On narrow screens the panel is a drawer, open or closed; null: a column beside the results. */
  drawer: 'open' | 'closed' | null;
  onClose: () => void;
}

export function FilterPanel(props: FilterPanelProps) {
  const [hideZero, setHideZero] = useState(false);
  const groups = useMemo(() => groupAttributes(props.attributes), [props.attributes]);
  const { drawer, onClose } = props;
  useEffect(() => {
    if (drawer !== 'open') return;
    // A modal drawer: the page behind is inert (no Tab or Shift+Tab reaches it), and Tab cycles inside.
    const behind = [...document.querySelectorAll<HTMLElement>('#app > :not(.layout), .layout > main')];
    for (const el of behind) el.inert = true;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
      if (e.key !== 'Tab') return;
      const focusable = [...document.querySelectorAll<HTMLElement>('#filters :is(button, input, select, a[href], [tabindex="0"]):not([disabled])')].filter((el) => el.offsetParent !== null);
      const first = focusable[0];
      const last = focusable[focusable.length - 1];
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last?.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first?.focus();
      }
    };
    addEventListener('keydown', onKey);
    document.querySelector<HTMLElement>('#filters .drawer-close')?.focus();
    return () => {
      removeEventListener('keydown', onKey);
      for (const el of behind) el.inert = false;
      // The page was inert when the closing asked for focus: the Filters button takes it back.
      const at = document.activeElement;
      if (!at || at === document.body || at.closest('#filters')) document.getElementById('open-filters')?.focus();
    };
  }, [drawer, onClose]);
  return (
    <>
      {drawer === 'open' ? <div class="backdrop" aria-hidden="true" onClick={onClose} /> : null}
      {/* Closed, the drawer stays mounted (open facets and searches are kept) but takes no space. */}
      <nav id="filters" class={`panel${drawer ? ' drawer' : ''}`} aria-label="Filters" hidden={drawer === 'closed'}>
      <div class="panel-head">
        <h2>Filters</h2>
        {drawer ? (
          <button type="button" class="btn small drawer-close" onClick={onClose}>
            Show results
          </button>
        ) : null}
        <label class="check">
          <input type="checkbox" checked={hideZero} onChange={(e) => setHideZero(e.currentTarget.checked)} /> Hide values with 0 {props.countLabel}
        </label>
      </div>
      {groups.map((g) => (
        <section key={g.id} class="group" aria-labelledby={`group-${g.id}`}>
          <h3 id={`group-${g.id}`}>{g.title}</h3>
          {g.attributes.map((a) => (
            <FacetCard key={a.name} attr={a} facet={props.facets?.[a.name]} {...props} hideZero={hideZero} />
          ))}
        </section>
      ))}
      </nav>
    </>
  );
}

interface CardProps extends PanelProps {
  attr: AttributeInfo;
  facet: Facet | undefined;
  hideZero: boolean;
}

function FacetCard(props: CardProps) {
  const { attr } = props;
  const active = attr.name in props.filter.terms || attr.name in (props.filter.all_terms ?? {}) || attr.name in props.filter.ranges;
  const [open, setOpen] = useState(OPEN_BY_DEFAULT.has(attr.name) || active);
  useEffect(() => {
    if (active) setOpen(true);
  }, [active]);
  const id = `facet-${attr.name}`;
  const n = props.filter.terms[attr.name]?.length ?? props.filter.all_terms?.[attr.name]?.length ?? (props.filter.ranges[attr.name] ? 1 : 0);
  return (
    <div class={`facet${active ? ' active' : ''}`} data-facet={attr.name}>
      <h4>
        <button type="button" class="facet-toggle" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)} title={attr.description}>
          <span class="chev" aria-hidden="true">
            {open ? '▾' : '▸'}
          </span>
          <span class="facet-label">{label(attr.name)}</span>
          {n > 0 ? <span class="badge">{attr.kind === 'range' ? 'set' : n}</span> : null}
        </button>
      </h4>
      {open ? (
        <div id={id} class="facet-body">
          <div class="attr-name">{attr.name}</div>
          {attr.kind === 'range' ? (
            <RangeBody {...props} facet={props.facet as RangeFacet | undefined} />
          ) : attr.categorical ? (
            <TermBody {...props} facet={props.facet as TermFacet | undefined} />
          ) : (
            <IdBody {...props} facet={props.facet as TermFacet | undefined} />
          )}
        </div>
      ) : null}
    </div>
  );
}

const FIRST = 8;

function TermBody(props: CardProps & { facet: TermFacet | undefined }) {
  const { attr, facet, filter } = props;
  const [query, setQuery] = useState('');
  const tree = attr.name === 'collection_id';
  const [sort, setSort] = useState<'count' | 'name' | 'program'>(tree ? 'program' : 'count');
  const [all, setAll] = useState(false);
  // The portal's "Find studies with ANY / ALL selected modalities".
  const inAll = attr.name in (filter.all_terms ?? {});
  const [mode, setMode] = useState<'any' | 'all'>(inAll ? 'all' : 'any');
  useEffect(() => {
    if (inAll) setMode('all');
  }, [inAll]);
  if (!facet) return <div class="muted small">Loading values…</div>;
  const chosen = filter.all_terms?.[attr.name] ?? filter.terms[attr.name] ?? [];
  const selected = new Set(chosen.filter((v): v is string => v !== null));
  const none = chosen.includes(null);
  const q = query.trim().toLowerCase();
  let values = facet.values.filter((v) => (q === '' || v.value.toLowerCase().includes(q)) && (!props.hideZero || v.count > 0 || selected.has(v.value)));
  if (sort === 'name') values = [...values].sort((a, b) => a.value.localeCompare(b.value));
  const shown = all || q !== '' ? values : values.slice(0, FIRST);
  // The None bucket shares the scale: its bar stays inside the card.
  const top = Math.max(1, ...facet.values.map((v) => v.count), facet.missing?.count ?? 0);
  const set = (vs: string[], withNone = none, m = mode) => props.onFilter(withTerms(filter, attr.name, withNone ? [...vs, null] : vs, m === 'all'));
  const switchMode = (m: 'any' | 'all') => {
    setMode(m);
    if (selected.size > 0) set([...selected], none, m);
  };
  return (
    <>
      {attr.name === 'Modality' ? (
        <div class="facet-tools any-all">
          <span id={`anyall-${attr.name}`}>Find studies with</span>
          <span class="seg" role="group" aria-labelledby={`anyall-${attr.name}`}>
            <button type="button" aria-pressed={mode === 'any'} onClick={() => switchMode('any')} title="Series of any selected modality">
              ANY
            </button>
            <button type="button" aria-pressed={mode === 'all'} disabled={none} onClick={() => switchMode('all')} title="Every series of the studies that have all the selected modalities">
              ALL
            </button>
          </span>
          <span>selected modalities</span>
        </div>
      ) : null}
      {facet.values.length > FIRST ? (
        <input
          type="search"
          class="search"
          placeholder={`Search ${facet.values.length} values`}
          aria-label={`Search values of ${label(attr.name)}`}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
      ) : null}
      <div class="facet-tools">
        <span class="seg" role="group" aria-label="Sort values">
          <button type="button" aria-pressed={sort === 'count'} onClick={() => setSort('count')}>
            By count
          </button>
          <button type="button" aria-pressed={sort === 'name'} onClick={() => setSort('name')}>
            A–Z
          </button>
          {tree ? (
            <button type="button" aria-pressed={sort === 'program'} onClick={() => setSort('program')}>
              By program
            </button>
          ) : null}
        </span>
        <button type="button" class="link" onClick={() => set([...new Set([...selected, ...values.filter((v) => v.count > 0).map((v) => v.value)])])}>
          Select all
        </button>
        <button type="button" class="link" disabled={selected.size === 0} onClick={() => set([])}>
          Clear
        </button>
      </div>
      {sort === 'program' ? (
        <CollectionTree
          facet={facet}
          programs={props.facets?.program_id as TermFacet | undefined}
          selected={selected}
          hideZero={props.hideZero}
          query={query}
          onSelect={set}
        />
      ) : (
      <ul class="values">
        {shown.map((v) => (
          <li key={v.value} class={v.count === 0 ? 'zero' : undefined}>
            <label>
              <input
                type="checkbox"
                checked={selected.has(v.value)}
                onChange={(e) => set(e.currentTarget.checked ? [...selected, v.value] : [...selected].filter((x) => x !== v.value))}
              />
              <span class="value" title={v.value}>
                {v.value === '' ? <em>(empty)</em> : v.value}
              </span>
              <span class="count" data-count={v.count} data-value={v.value}>
                {fmtCount(v.count)}
              </span>
              <span class="bar" aria-hidden="true">
                <span class="fill" style={{ width: `${(100 * v.count) / top}%` }} />
              </span>
            </label>
          </li>
        ))}
      </ul>
      )}
      {values.length > FIRST && q === '' && sort !== 'program' ? (
        <button type="button" class="link more" onClick={() => setAll(!all)}>
          {all ? 'Show fewer' : `Show all ${values.length}`}
        </button>
      ) : null}
      {values.length === 0 ? <div class="muted small">No value matches.</div> : null}
      {facet.truncated ? <div class="muted small">Only the {facet.values.length} most frequent values are listed.</div> : null}
      {facet.missing && (facet.missing.count > 0 || none) && sort !== 'program' ? (
        <ul class="values none-bucket">
          <li class={facet.missing.count === 0 ? 'zero' : undefined} data-none-bucket>
            <label title={mode === 'all' ? 'ALL takes values only: switch to ANY to select the series without a value' : 'Series without a value'}>
              <input type="checkbox" checked={none} disabled={mode === 'all'} onChange={(e) => set([...selected], e.currentTarget.checked)} />
              <span class="value">
                <em>None (no value)</em>
              </span>
              <span class="count" data-count={facet.missing.count} data-none>
                {fmtCount(facet.missing.count)}
              </span>
              <span class="bar" aria-hidden="true">
                <span class="fill" style={{ width: `${(100 * facet.missing.count) / top}%` }} />
              </span>
            </label>
          </li>
        </ul>
      ) : null}
    </>
  );
}

/** A bound as an input shows it: dates as they are, numbers without float noise. */
function shown(b: Bound | undefined | null): string {
  if (b === undefined || b === null) return '';
  return typeof b === 'number' ? String(Number(b.toPrecision(12))) : b;
}

/** The day before a YYYY-MM-DD date. */
function dayBefore(d: string): string {
  const t = new Date(`${d}T00:00:00Z`);
  t.setUTCDate(t.getUTCDate() - 1);
  return t.toISOString().slice(0, 10);
}

function RangeBody(props: CardProps & { facet: RangeFacet | undefined }) {
  const { attr, facet, filter } = props;
  const current = filter.ranges[attr.name] ?? {};
  const [lo, setLo] = useState(shown(current.gte));
  const [hi, setHi] = useState(shown(current.lte));
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    setLo(shown(current.gte));
    setHi(shown(current.lte));
    // The bounds were set (or cleared) elsewhere: what was typed here and refused is gone.
    setProblem(null);
  }, [current.gte, current.lte]);
  const date = attr.value_format === 'YYYY-MM-DD';
  const apply = (l: string, h: string) => {
    const gte = l.trim() === '' ? undefined : parseBound(attr, l);
    const lte = h.trim() === '' ? undefined : parseBound(attr, h);
    if (gte === null || lte === null) return setProblem(`Enter ${date ? 'a date (YYYY-MM-DD)' : 'a number'}.`);
    if (gte !== undefined && lte !== undefined && gte > lte) return setProblem('The minimum is above the maximum.');
    setProblem(null);
    if (gte === current.gte && lte === current.lte) return;
    props.onFilter(withRange(filter, attr.name, { ...(gte !== undefined ? { gte } : {}), ...(lte !== undefined ? { lte } : {}) }));
  };
  const bins = facet ? mainBins(facet.bins, 'count').shown : [];
  const pick = (i: number) => {
    const b = bins[i];
    if (!b) return;
    const upper = typeof b.lt === 'string' ? dayBefore(b.lt) : attr.data_type === 'INTEGER' ? Number(b.lt) - 1 : b.lt;
    props.onFilter(withRange(filter, attr.name, { gte: b.gte, lte: upper }));
  };
  const type = date ? ('date' as const) : ('number' as const);
  return (
    <>
      <div class="range-inputs">
        <BoundInput side="Min" type={type} value={lo} placeholder={shown(facet?.min)} onInput={setLo} onCommit={(v) => apply(v, hi)} name={label(attr.name)} />
        <BoundInput side="Max" type={type} value={hi} placeholder={shown(facet?.max)} onInput={setHi} onCommit={(v) => apply(lo, v)} name={label(attr.name)} />
        <button type="button" class="link" disabled={!filter.ranges[attr.name]} onClick={() => props.onFilter(withRange(filter, attr.name, null))}>
          Clear
        </button>
      </div>
      {problem ? <div class="field-error">{problem}</div> : null}
      {facet ? (
        <>
          <div class="muted small range-span">
            {facet.min === null ? 'No values under the other filters' : `From ${shown(facet.min)} to ${shown(facet.max)}`}
            {facet.missing.count > 0 ? ` · ${fmtCount(facet.missing.count)} ${props.countLabel} have series without a value` : ''}
          </div>
          {bins.length > 0 ? (
            <ChartView
              kind="bar"
              mini
              height={100}
              title={`Histogram of ${label(attr.name)}: ${props.countLabel} per bin (dark: in the cohort; light: under the other filters); click a bar to select it`}
              labels={bins.map((b) => short(b.gte, 12))}
              series={[
                { label: 'in the cohort', values: bins.map((b) => b.filtered_count), color: '#1f6feb' },
                { label: 'under the other filters', values: bins.map((b) => b.count), color: '#c9d7ef' },
              ]}
              onPick={pick}
            />
          ) : null}
        </>
      ) : (
        <div class="muted small">Loading…</div>
      )}
    </>
  );
}

/** One bound of a range: typed freely, applied when committed (Enter or leaving the box). */
function BoundInput(props: { side: 'Min' | 'Max'; type: 'date' | 'number'; value: string; placeholder: string; name: string; onInput: (v: string) => void; onCommit: (v: string) => void }) {
  const common = {
    value: props.value,
    placeholder: props.placeholder,
    onInput: (e: Event) => props.onInput((e.currentTarget as HTMLInputElement).value),
    onChange: (e: Event) => props.onCommit((e.currentTarget as HTMLInputElement).value),
    'aria-label': `${props.side === 'Min' ? 'Minimum' : 'Maximum'} ${props.name}`,
  };
  return (
    <label>
      <span>{props.side}</span>
      {props.type === 'date' ? (
        // Dates are typed as the chips and the API write them (YYYY-MM-DD), not in the browser's locale order.
        <input type="text" inputMode="numeric" pattern="\d{4}-?\d{2}-?\d{2}" maxLength={10} title="A date as YYYY-MM-DD" data-date="" {...common} />
      ) : (
        <input type="number" step="any" {...common} />
      )}
    </label>
  );
}

function IdBody(props: CardProps & { facet: TermFacet | undefined }) {
  const { attr, filter } = props;
  // Identifiers always have a value: no None here.
  const selected = (filter.terms[attr.name] ?? []).filter((v): v is string => v !== null);
  const [text, setText] = useState('');
  const counts = new Map((props.facet?.values ?? []).map((v) => [v.value, v.count]));
  const add = () => {
    const ids = text
      .split(/[\s,;]+/)
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (ids.length === 0) return;
    props.onFilter(withTerms(filter, attr.name, [...new Set([...selected, ...ids])]));
    setText('');
  };
  return (
    <>
      <textarea
        class="ids"
        rows={3}
        placeholder="Paste identifiers, one per line"
        aria-label={`${label(attr.name)} to select`}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <div class="facet-tools">
        <button type="button" class="btn small" onClick={add} disabled={text.trim() === ''}>
          Add
        </button>
        <button type="button" class="link" disabled={selected.length === 0} onClick={() => props.onFilter(withTerms(filter, attr.name, []))}>
          Clear
        </button>
      </div>
      {selected.length > 0 ? (
        <ul class="values">
          {selected.map((v) => (
            <li key={v}>
              <label>
                <input type="checkbox" checked onChange={() => props.onFilter(withTerms(filter, attr.name, selected.filter((x) => x !== v)))} />
                <span class="value mono" title={v}>
                  {v}
                </span>
                <span class="count" data-count={counts.get(v) ?? 0} data-value={v}>
                  {counts.has(v) ? fmtCount(counts.get(v)!) : '…'}
                </span>
              </label>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
