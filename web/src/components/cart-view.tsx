// The cart's own page: what it holds (cohorts and picked collections,
// patients, studies, series, each removable), its totals and licenses, a
// share link, and the same manifest, download commands and citations as a
// cohort's, all from the service's routes with the cart sent as a union.

import { useEffect, useState } from 'preact/hooks';
import { post, type Filter, type Licenses, type Totals } from '../api.ts';
import { KINDS, cartFilter, emptyCart, itemCount, removeCohort, setCart, shareLink, toggleItems, useCart } from '../cart.ts';
import { count, size } from '../format.ts';
import { label } from '../groups.ts';
import { CopyButton, ErrorBox, Note } from './common.tsx';
import { ExportPanel } from './export-panel.tsx';
import { LicensesView } from './summary.tsx';

/** The portal warns above this many characters: some mail and chat tools cut longer links. */
const LONG_LINK = 2048;

/** A cohort in words: its filters by label, or the whole release. */
export function describe(f: Filter): string {
  const parts = [
    ...Object.entries(f.terms).map(([k, v]) => `${label(k)}: ${v.map((x) => x ?? 'None').join(', ')}`),
    ...Object.entries(f.all_terms ?? {}).map(([k, v]) => `${label(k)}: all of ${v.join(', ')}`),
    ...Object.entries(f.ranges).map(([k, r]) => `${label(k)}: ${r.gte ?? '…'} – ${r.lte ?? '…'}`),
  ];
  return parts.join(' · ') || 'the whole release';
}

/** `query`: the explorer's URL query of the cohort on screen, carried by the share link with the cart. */
export function CartView(props: { release: string; query: string }) {
  const c = useCart();
  const [totals, setTotals] = useState<Totals | null>(null);
  const [licenses, setLicenses] = useState<Licenses | null>(null);
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const n = itemCount(c);
  const filter: Filter = { terms: {}, ranges: {}, ...cartFilter(c) };
  const key = JSON.stringify(filter);
  useEffect(() => {
    setTotals(null);
    setLicenses(null);
    setLink(null);
    if (n === 0) return;
    const ac = new AbortController();
    post<Totals>('/v3/cohort/counts', filter, ac.signal)
      .then((t) => {
        setTotals(t);
        setError(null);
      })
      .catch((e: unknown) => !ac.signal.aborted && setError(e));
    post<Licenses>('/v3/licenses', filter, ac.signal)
      .then(setLicenses)
      .catch(() => {});
    return () => ac.abort();
  }, [key]);
  useEffect(() => {
    if (n > 0) shareLink(c, props.query).then(setLink, () => setLink(null));
  }, [key, props.query]);

  if (n === 0) {
    return (
      <section class="card" data-view="cart">
        <h3>The cart is empty</h3>
        <p>
          Add the current cohort with <strong>Add cohort to cart</strong>, or collections, patients, studies and series with the <strong>+</strong> buttons of the
          tables. The cart stays in this browser and can be shared as a link, with the cohort on screen.
        </p>
      </section>
    );
  }
  return (
    <section data-view="cart" data-cart-items={n}>
      {c.release && c.release !== props.release ? (
        <Note kind="warn">
          This cart was made on data release {c.release}; this service serves {props.release}. Identifiers and counts may differ between releases.
        </Note>
      ) : null}
      <ErrorBox error={error} title="Cart counts failed" />
      <div class="card">
        <div class="card-head">
          <h3>Cart</h3>
          <button type="button" class="link" onClick={() => setCart(emptyCart())}>
            Empty the cart
          </button>
        </div>
        <p data-cart-totals={totals ? `${totals.patients}/${totals.studies}/${totals.series}` : ''}>
          {totals
            ? `${count(totals.patients)} patients · ${count(totals.studies)} studies · ${count(totals.series)} series · ${size(totals.size_MB)}`
            : 'Counting…'}
          {c.release ? <span class="muted"> · made on release {c.release}</span> : null}
        </p>
        <ul class="cart-items">
          {c.cohorts.map((f, i) => (
            <li key={`cohort-${i}`}>
              <span>Cohort: {describe(f)}</span>
              <button type="button" class="link" onClick={() => removeCohort(i)} aria-label={`Remove cohort ${describe(f)} from the cart`}>
                Remove
              </button>
            </li>
          ))}
          {KINDS.filter((k) => c.ids[k].length > 0).map((k) => (
            <li key={k} data-cart-kind={k}>
              <details>
                <summary>
                  {count(c.ids[k].length)} {k}
                </summary>
                <ul class="cart-ids">
                  {c.ids[k].slice(0, 200).map((id) => (
                    <li key={id}>
                      <code>{id}</code>{' '}
                      <button type="button" class="link" onClick={() => toggleItems(k, [id], false, props.release)} aria-label={`Remove ${id} from the cart`}>
                        Remove
                      </button>
                    </li>
                  ))}
                  {c.ids[k].length > 200 ? <li class="muted">and {count(c.ids[k].length - 200)} more</li> : null}
                </ul>
              </details>
              <button type="button" class="link" onClick={() => toggleItems(k, c.ids[k], false, props.release)}>
                Remove all {k}
              </button>
            </li>
          ))}
        </ul>
        <div class="row">
          {link ? (
            <>
              <input class="share-link mono" readOnly value={link} aria-label="Share link of the cart" data-share-link onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={link} label="Copy share link" small />
              <span class="muted small" data-share-length={link.length}>
                {count(link.length)} characters{link.length > LONG_LINK ? ': long for some mail and chat tools; share the manifest for big carts' : ''}
              </span>
            </>
          ) : null}
        </div>
      </div>
      <LicensesView licenses={licenses} />
      <ExportPanel filter={filter} series={totals?.series ?? null} />
    </section>
  );
}
