// Per-row cart and download, as the portal's tables have them: how many
// series of each row are in the cart (asked of the service: the page's rows
// AND the cart's union, one request per page), and a download of the row's
// own s5cmd manifest (the cohort manifest route, filtered to that row).

import { useEffect, useState } from 'preact/hooks';
import { post, postText, type TablePage } from '../api.ts';
import { cartFilter, itemCount, useCart, type Kind, KIND_ATTRIBUTE } from '../cart.ts';
import { stamp, saveText } from '../format.ts';

/** Series in the cart per row key of the page, or null (empty cart, or loading). */
export function useInCart(level: Kind, ids: string[]): Map<string, number> | null {
  const c = useCart();
  const [counts, setCounts] = useState<Map<string, number> | null>(null);
  const empty = itemCount(c) === 0;
  const cartKey = empty ? '' : JSON.stringify(cartFilter(c));
  const idsKey = ids.join('\n');
  useEffect(() => {
    setCounts(null);
    if (empty || ids.length === 0) return;
    const key = KIND_ATTRIBUTE[level];
    const ac = new AbortController();
    post<TablePage>('/v3/cohort/table', { filters: { terms: { [key]: ids }, any_of: cartFilter(c).any_of }, level, page_size: ids.length }, ac.signal)
      .then((p) => {
        const m = new Map<string, number>(ids.map((id) => [id, 0]));
        // A series row counts itself; the other levels carry their series count.
        for (const r of p.rows) m.set(String(r[key]), (m.get(String(r[key])) ?? 0) + (level === 'series' ? 1 : Number(r.series ?? 0)));
        setCounts(m);
      })
      .catch(() => {
        // The count is an aid: on failure the column shows a dash rather than an error per page.
        if (!ac.signal.aborted) setCounts(null);
      });
    return () => ac.abort();
  }, [level, idsKey, cartKey]);
  return empty ? new Map(ids.map((id) => [id, 0])) : counts;
}

/** The row's s5cmd manifest, saved under the name its first line runs. */
export function RowDownload(props: { level: Kind; id: string }) {
  const [state, setState] = useState<'idle' | 'busy' | 'failed'>('idle');
  const run = async () => {
    setState('busy');
    try {
      const r = await postText('/v3/cohort/manifest.txt', { filters: { terms: { [KIND_ATTRIBUTE[props.level]]: [props.id] } }, source: 'cloud1', format: 's5cmd' });
      const name = /\brun (\S+\.s5cmd)\s*$/m.exec(r.text.split('\n', 1)[0] ?? '')?.[1] ?? `manifest_${stamp()}_aws.s5cmd`;
      saveText(name, r.text);
      setState('idle');
    } catch {
      setState('failed');
    }
  };
  return (
    <button
      type="button"
      class="btn ghost small row-download"
      data-row-download={props.id}
      disabled={state === 'busy'}
      aria-label={`Download the s5cmd manifest of ${props.id}`}
      title={state === 'failed' ? 'The manifest could not be fetched: try again' : 's5cmd manifest of this row (cloud1)'}
      onClick={() => void run()}
    >
      {state === 'failed' ? 'Retry' : '.s5cmd'}
    </button>
  );
}
