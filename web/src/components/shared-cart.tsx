// A share link's cart (#cart=...) opened: what it holds is shown, and the
// recipient's own cart is left as it is until they choose to keep theirs,
// replace it or merge the two (or, with an empty cart, to take the shared
// one). The cohort and tab of the link are in its query and apply at once.

import { useEffect, useState } from 'preact/hooks';
import { KINDS, cart, cartFromHash, itemCount, mergeCarts, setCart, type Cart, type Kind } from '../cart.ts';
import { plural } from '../format.ts';
import { describe } from './cart-view.tsx';
import { Note } from './common.tsx';

const ONE: Record<Kind, string> = { collections: 'collection', patients: 'patient', studies: 'study', series: 'series' };

function contents(c: Cart): string {
  const parts = [
    ...c.cohorts.map((f) => `the cohort ${describe(f)}`),
    ...KINDS.filter((k) => c.ids[k].length > 0).map((k) => plural(c.ids[k].length, ONE[k], k)),
  ];
  return parts.join(', ') || 'nothing';
}

type State = { kind: 'none' } | { kind: 'offer'; shared: Cart } | { kind: 'done'; text: string } | { kind: 'error'; text: string };

export function SharedCart(props: { served: string; mine: Cart }) {
  const [state, setState] = useState<State>({ kind: 'none' });
  useEffect(() => {
    // A link pasted into the address bar of an open explorer changes only the hash: it is read then too.
    const read = () => {
      if (!/(?:^#|&)cart=/.test(location.hash)) return;
      cartFromHash(location.hash)
        .then((c) => c && setState({ kind: 'offer', shared: c }))
        .catch((e: unknown) => setState({ kind: 'error', text: `This shared cart link could not be read: ${(e as Error).message}` }));
    };
    read();
    addEventListener('hashchange', read);
    return () => removeEventListener('hashchange', read);
  }, []);
  if (state.kind === 'none') return null;
  if (state.kind !== 'offer') return <Note kind={state.kind === 'error' ? 'warn' : 'info'}>{state.text}</Note>;
  const shared = state.shared;
  const mineCount = itemCount(props.mine);
  const choose = (how: 'keep' | 'replace' | 'merge') => {
    // The link's hash is spent: a reload keeps the cohort of its query and the cart chosen.
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    const before = cart();
    const next = how === 'replace' ? shared : how === 'merge' ? mergeCarts(before, shared) : before;
    if (how !== 'keep') setCart(next);
    const n = itemCount(next);
    setState({
      kind: 'done',
      text: how === 'keep' ? `Kept your cart (${plural(n, 'item')}); the shared cart was not added.` : `Your cart now holds ${plural(n, 'item')} (${contents(next)}).`,
    });
  };
  return (
    <section class="note shared-cart" role="group" aria-labelledby="shared-cart-title" data-shared-cart={itemCount(shared)}>
      <h2 id="shared-cart-title" class="shared-title">
        This link shares a cart of {plural(itemCount(shared), 'item')}
      </h2>
      <p>
        It holds {contents(shared)}
        {shared.release ? `, made on data release ${shared.release}` : ''}. The cohort on screen is the link&rsquo;s.
        {shared.release && shared.release !== props.served ? ` This service serves ${props.served}: identifiers and counts may differ.` : ''}
      </p>
      {mineCount > 0 ? (
        <>
          <p>
            Your own cart holds {plural(mineCount, 'item')} ({contents(props.mine)}). Nothing changes until you choose:
          </p>
          <div class="row">
            <button type="button" class="btn ghost small" data-shared="keep" onClick={() => choose('keep')}>
              Keep mine
            </button>
            <button type="button" class="btn ghost small" data-shared="replace" onClick={() => choose('replace')}>
              Replace mine with the shared cart
            </button>
            <button type="button" class="btn small" data-shared="merge" onClick={() => choose('merge')}>
              Merge both
            </button>
          </div>
        </>
      ) : (
        <div class="row">
          <button type="button" class="btn small" data-shared="replace" onClick={() => choose('replace')}>
            Open the shared cart
          </button>
          <button type="button" class="btn ghost small" data-shared="keep" onClick={() => choose('keep')}>
            Ignore it
          </button>
        </div>
      )}
    </section>
  );
}
