// Charts of the cohort from the facets already loaded (no extra request):
// one card per categorical attribute with a bar/pie switch, the first few
// shown and the rest on demand, and histograms of the dates and sizes.
// Clicking a bar or slice adds that value to the filter.

import { useState } from 'preact/hooks';
import type { AttributeInfo, CountMode, Facet, Filter, RangeFacet, TermFacet } from '../api.ts';
import { mainBins } from '../bins.ts';
import { count, percent, short } from '../format.ts';
import { label } from '../groups.ts';
import { withTerms } from '../url-state.ts';
import { ChartView, PALETTE } from './chart.tsx';
import { useBars } from '../chart-groups.ts';

/** Charts first shown, in this order when present; the rest follow in API order. */
const FIRST = ['collection_id', 'Modality', 'cancer_types', 'tumor_locations', 'StudyDate', 'BodyPartExamined', 'license_short_name', 'program_id', 'species', 'Manufacturer'];
const SHOWN = 4;
const TOP = 10;
const ONE: Record<CountMode, string> = { patients: 'patient', studies: 'study', series: 'series' };

interface Props {
  attributes: AttributeInfo[];
  facets: Record<string, Facet> | null;
  filter: Filter;
  mode: CountMode;
  onFilter: (f: Filter) => void;
}

export function Charts(props: Props) {
  const [more, setMore] = useState(false);
  if (!props.facets) return <div class="muted">Loading charts…</div>;
  const chartable = props.attributes.filter((a) => (a.kind === 'term' && a.categorical) || a.value_format === 'YYYY-MM-DD' || a.name === 'series_size_MB');
  const ordered = [...chartable].sort((a, b) => rank(a.name) - rank(b.name));
  const visible = more ? ordered : ordered.slice(0, SHOWN);
  return (
    <section aria-label="Charts of the cohort">
      <div class="charts">
        {visible.map((a) => {
          const f = props.facets![a.name];
          if (!f) return null;
          return f.kind === 'term' ? <TermChart key={a.name} attr={a} facet={f} {...props} /> : <RangeChart key={a.name} attr={a} facet={f} mode={props.mode} />;
        })}
      </div>
      {ordered.length > SHOWN ? (
        <button type="button" class="btn ghost" onClick={() => setMore(!more)} aria-expanded={more}>
          {more ? 'Show fewer charts' : `Show ${ordered.length - SHOWN} more charts`}
        </button>
      ) : null}
    </section>
  );
}

function rank(name: string): number {
  const i = FIRST.indexOf(name);
  return i < 0 ? FIRST.length : i;
}

function TermChart(props: Props & { attr: AttributeInfo; facet: TermFacet }) {
  const [kind, setKind] = useState<'hbar' | 'pie'>('hbar');
  const bars = useBars(props.attr.name, props.facet, props.filter, props.mode, TOP);
  const labels = bars.map((b) => (b.others ? b.label : b.label || '(empty)'));
  const data = bars.map((b) => b.count);
  const whole = data.reduce((a, b) => a + b, 0);
  const merged = bars.filter((b) => !b.others && b.values.length > 1);
  const title = `${label(props.attr.name)}: ${props.mode} per value`;
  return (
    <div class="card chart-card" data-chart={props.attr.name} data-bars={JSON.stringify(bars.map((b) => [b.others ? null : b.values, b.count]))}>
      <div class="card-head">
        <h3>{label(props.attr.name)}</h3>
        <span class="seg" role="group" aria-label={`Chart type for ${label(props.attr.name)}`}>
          <button type="button" aria-pressed={kind === 'hbar'} onClick={() => setKind('hbar')}>
            Bar
          </button>
          <button type="button" aria-pressed={kind === 'pie'} onClick={() => setKind('pie')}>
            Pie
          </button>
        </span>
      </div>
      {data.length === 0 ? (
        <div class="muted">No series of the cohort has a {label(props.attr.name).toLowerCase()}.</div>
      ) : (
        <ChartView
          kind={kind}
          title={title}
          labels={labels.map((l, i) => (kind === 'pie' ? `${l} (${percent(data[i]!, whole)})` : l))}
          series={[{ label: props.mode, values: data, color: kind === 'pie' ? labels.map((_, i) => PALETTE[i % PALETTE.length]!) : '#1f6feb' }]}
          height={kind === 'pie' ? 220 : Math.max(110, Math.min(380, 30 * labels.length + 50))}
          onPick={(i) => {
            const b = bars[i];
            if (!b || b.others) return;
            const allOf = props.filter.all_terms?.[props.attr.name];
            const sel = allOf ?? props.filter.terms[props.attr.name] ?? [];
            const add = b.values.filter((v) => !sel.includes(v));
            if (add.length > 0) props.onFilter(withTerms(props.filter, props.attr.name, [...sel, ...add], allOf !== undefined));
          }}
        />
      )}
      {merged.length > 0 ? (
        <div class="muted small" data-merged={merged.map((b) => b.values.join('|')).join(',')}>
          Spellings counted as one: {merged.map((b) => `${b.label} (${b.values.map((v) => `“${v}”`).join(', ')})`).join('; ')}. A bar counts each {ONE[props.mode]} once.
        </div>
      ) : null}
    </div>
  );
}

function RangeChart(props: { attr: AttributeInfo; facet: RangeFacet; mode: CountMode }) {
  const { shown, before, after, from, to } = mainBins(props.facet.bins, 'filtered_count');
  return (
    <div class="card chart-card" data-chart={props.attr.name}>
      <div class="card-head">
        <h3>{label(props.attr.name)}</h3>
        <span class="muted small">histogram</span>
      </div>
      {shown.length === 0 ? (
        <div class="muted">No values in the cohort.</div>
      ) : (
        <ChartView
          kind="bar"
          title={`Histogram of ${label(props.attr.name)}: ${props.mode} per bin`}
          labels={shown.map((b) => (typeof b.gte === 'string' ? b.gte.slice(0, b.gte.endsWith('-01-01') ? 4 : 7) : `${short(b.gte, 10)}–${short(b.lt, 10)}`))}
          series={[{ label: props.mode, values: shown.map((b) => b.filtered_count), color: '#2da44e' }]}
        />
      )}
      {before + after > 0 ? (
        <div class="muted small" data-tails={before + after}>
          Not drawn, to keep the axis on the data: {before > 0 ? `${count(before)} ${props.mode} from ${from} on` : ''}
          {before > 0 && after > 0 ? '; ' : ''}
          {after > 0 ? `${count(after)} ${props.mode} up to ${to}` : ''}.
        </div>
      ) : null}
    </div>
  );
}
