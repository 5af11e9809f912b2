// The cohort at a glance: active filters as removable chips, the totals
// (patients, studies, series, instances, size in human units), the licenses
// with a warning when some forbid commercial use, and the switch of what the
// facet counts count.

import type { AttributeInfo, CountMode, Filter, Licenses, Totals } from '../api.ts';
import { count, size } from '../format.ts';
import { label } from '../groups.ts';
import { emptyFilter, withRange, withTerms } from '../url-state.ts';
import { CopyButton } from './common.tsx';

export function Chips(props: { filter: Filter; attributes: AttributeInfo[]; onFilter: (f: Filter) => void }) {
  const { filter } = props;
  const chips: { key: string; text: string; remove: () => void }[] = [];
  for (const [name, values] of Object.entries(filter.terms)) {
    for (const v of values) {
      chips.push({ key: `${name}=${v ?? ''}`, text: `${label(name)}: ${v ?? 'None'}`, remove: () => props.onFilter(withTerms(filter, name, values.filter((x) => x !== v))) });
    }
  }
  for (const [name, values] of Object.entries(filter.all_terms ?? {})) {
    for (const v of values) {
      chips.push({ key: `${name}=${v}`, text: `${label(name)} (all of): ${v}`, remove: () => props.onFilter(withTerms(filter, name, values.filter((x) => x !== v), true)) });
    }
  }
  for (const [name, r] of Object.entries(filter.ranges)) {
    const text = r.gte !== undefined && r.lte !== undefined ? `${r.gte} – ${r.lte}` : r.gte !== undefined ? `≥ ${r.gte}` : `≤ ${r.lte}`;
    chips.push({ key: `${name}:range`, text: `${label(name)}: ${text}`, remove: () => props.onFilter(withRange(filter, name, null)) });
  }
  return (
    <div class="chips" aria-label="Active filters">
      {chips.length === 0 ? <span class="muted">No filter: the whole release. Pick values in the filters.</span> : null}
      {chips.map((c) => (
        <span class="chip" key={c.key} data-chip={c.key}>
          <span>{c.text}</span>
          <button type="button" aria-label={`Remove filter ${c.text}`} onClick={c.remove}>
            ×
          </button>
        </span>
      ))}
      {chips.length > 0 ? (
        <>
          <button type="button" class="link" onClick={() => props.onFilter(emptyFilter())}>
            Clear all
          </button>
          <CopyButton text={location.href} label="Copy link to this cohort" small />
        </>
      ) : null}
    </div>
  );
}

export function TotalsView(props: { totals: Totals | null; mode: CountMode; onMode: (m: CountMode) => void; loading: boolean }) {
  const t = props.totals;
  const cards: [string, string, string, number | undefined][] = [
    ['patients', 'Patients', t ? count(t.patients) : '…', t?.patients],
    ['studies', 'Studies', t ? count(t.studies) : '…', t?.studies],
    ['series', 'Series', t ? count(t.series) : '…', t?.series],
    ['instances', 'Instances', t ? count(t.instances) : '…', t?.instances],
    ['size', 'Size', t ? size(t.size_MB) : '…', t?.size_MB],
  ];
  return (
    <section class={`totals${props.loading ? ' loading' : ''}`} aria-label="Cohort totals" aria-busy={props.loading}>
      {cards.map(([key, title, text, raw]) => (
        <div class="stat" key={key} data-total={key} data-value={raw}>
          <div class="stat-value">{text}</div>
          <div class="stat-label">{title}</div>
        </div>
      ))}
      <div class="mode">
        <span id="mode-label">Facet counts are</span>
        <span class="seg" role="radiogroup" aria-labelledby="mode-label">
          {(['patients', 'studies', 'series'] as const).map((m) => (
            <button key={m} type="button" role="radio" aria-checked={props.mode === m} onClick={() => props.onMode(m)}>
              {m}
            </button>
          ))}
        </span>
      </div>
    </section>
  );
}

export function LicensesView(props: { licenses: Licenses | null }) {
  const l = props.licenses;
  if (!l || l.licenses.length === 0) return null;
  const nc = l.licenses.filter((x) => x.commercial_use_allowed === false);
  // A named license whose commercial use is not stated (NLM Terms and Conditions) is still a license.
  const unstated = l.licenses.filter((x) => x.commercial_use_allowed === null && x.license_short_name);
  const none = l.licenses.filter((x) => !x.license_short_name);
  return (
    <section class="licenses" aria-label="Licenses">
      <span class="licenses-title">Licenses:</span>
      {l.licenses.map((x) => (
        <span key={x.license_short_name ?? '(none)'} class={`license${x.commercial_use_allowed === false ? ' nc' : ''}`} title={x.license_long_name ?? ''}>
          {x.license_url ? (
            <a href={x.license_url} target="_blank" rel="noopener noreferrer">
              {x.license_short_name ?? '(none)'}
            </a>
          ) : (
            (x.license_short_name ?? '(no license)')
          )}{' '}
          <span class="muted">{count(x.series)} series</span>
        </span>
      ))}
      {nc.length > 0 ? (
        <div class="note warn" role="alert" data-warning="non-commercial">
          Part of this cohort is licensed for non-commercial use only ({nc.map((x) => x.license_short_name).join(', ')}: {count(nc.reduce((a, x) => a + x.series, 0))}{' '}
          series). Check the license before any commercial use.
        </div>
      ) : null}
      {unstated.length > 0 ? (
        <div class="note info" data-note="commercial-unstated">
          {unstated.map((x) => x.license_short_name).join(', ')} does not say whether commercial use is allowed ({count(unstated.reduce((a, x) => a + x.series, 0))} series): read
          its terms before any commercial use.
        </div>
      ) : null}
      {none.length > 0 ? (
        <div class="note info" data-note="no-license">
          {count(none.reduce((a, x) => a + x.series, 0))} series carry no license value; check their source before reuse.
        </div>
      ) : null}
    </section>
  );
}
