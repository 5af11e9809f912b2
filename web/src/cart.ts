// The cart: whole cohorts (filters) and picked collections, patients,
// studies and series, kept in localStorage with the data release it was
// made on. Sent to the service as one filter, a union (any_of) of one member
// per cohort and per kind of item, so its counts, manifest, citations and
// licenses come from the same routes as the cohort's. A share link carries
// the cohort on screen and the tab in its query (the explorer's own URL) and
// the cart itself, deflated and base64url-encoded, in its hash; opening one
// asks before it touches the recipient's cart (sharing.tsx).

import { useEffect, useState } from 'preact/hooks';
import type { Filter } from './api.ts';

export const KINDS = ['collections', 'patients', 'studies', 'series'] as const;
export type Kind = (typeof KINDS)[number];
export const KIND_ATTRIBUTE: Record<Kind, string> = { collections: 'collection_id', patients: 'PatientID', studies: 'StudyInstanceUID', series: 'SeriesInstanceUID' };

export interface Cart {
  /** The data release the cart was made on (GET /v3/version idc_version). */
  release: string | null;
  cohorts: Filter[];
  ids: Record<Kind, string[]>;
}

const KEY = 'idqs-cart';

export function emptyCart(release: string | null = null): Cart {
  return { release, cohorts: [], ids: { collections: [], patients: [], studies: [], series: [] } };
}

function valid(x: unknown): x is Cart {
  const c = x as Cart;
  return !!c && typeof c === 'object' && Array.isArray(c.cohorts) && !!c.ids && KINDS.every((k) => Array.isArray(c.ids[k]));
}

function load(): Cart {
  try {
    const c = JSON.parse(localStorage.getItem(KEY) ?? 'null') as unknown;
    return valid(c) ? c : emptyCart();
  } catch {
    return emptyCart();
  }
}

let current: Cart = load();
const listeners = new Set<(c: Cart) => void>();

export function cart(): Cart {
  return current;
}

export function setCart(next: Cart): void {
  current = next;
  try {
    localStorage.setItem(KEY, JSON.stringify(next));
  } catch {
    // A full or disabled storage keeps the cart for this page only.
  }
  for (const l of listeners) l(next);
}

/** The cart, re-rendering when it changes (here or in another tab of the browser). */
export function useCart(): Cart {
  const [c, setC] = useState(current);
  useEffect(() => {
    listeners.add(setC);
    const onStorage = (e: StorageEvent) => {
      if (e.key === KEY) {
        current = load();
        setC(current);
      }
    };
    addEventListener('storage', onStorage);
    return () => {
      listeners.delete(setC);
      removeEventListener('storage', onStorage);
    };
  }, []);
  return c;
}

export function itemCount(c: Cart): number {
  return c.cohorts.length + KINDS.reduce((n, k) => n + c.ids[k].length, 0);
}

/** Sets of a cart's ids, built once per cart value: a table of 1,000 rows asks for each of them. */
const lookups = new WeakMap<Cart, Map<Kind, Set<string>>>();

export function hasItem(c: Cart, kind: Kind, id: string): boolean {
  let m = lookups.get(c);
  if (!m) lookups.set(c, (m = new Map()));
  let set = m.get(kind);
  if (!set) m.set(kind, (set = new Set(c.ids[kind])));
  return set.has(id);
}

/** Add or remove identifiers of one kind; the cart takes the release of its first item. */
export function toggleItems(kind: Kind, ids: string[], add: boolean, release: string): void {
  const c = current;
  const set = new Set(c.ids[kind]);
  for (const id of ids) {
    if (add) set.add(id);
    else set.delete(id);
  }
  setCart({ ...c, release: c.release ?? release, ids: { ...c.ids, [kind]: [...set] } });
}

export function addCohort(f: Filter, release: string): void {
  const c = current;
  const key = JSON.stringify(f);
  if (c.cohorts.some((x) => JSON.stringify(x) === key)) return;
  setCart({ ...c, release: c.release ?? release, cohorts: [...c.cohorts, f] });
}

export function removeCohort(i: number): void {
  setCart({ ...current, cohorts: current.cohorts.filter((_, k) => k !== i) });
}

/** The cart as one cohort filter: a union of its cohorts and of one member per kind of item. */
export function cartFilter(c: Cart): { any_of: Filter[] } {
  const any_of: Filter[] = c.cohorts.map((f) => ({ terms: f.terms, ranges: f.ranges, ...(f.all_terms ? { all_terms: f.all_terms } : {}) }));
  for (const k of KINDS) if (c.ids[k].length > 0) any_of.push({ terms: { [KIND_ATTRIBUTE[k]]: c.ids[k] }, ranges: {} });
  return { any_of };
}

function toBase64Url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(s, (ch) => ch.charCodeAt(0));
}

async function pipe(bytes: Uint8Array<ArrayBuffer>, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

/** The share link of a cart: the page's address with the cohort's query (`?Modality=CT&tab=cart`, url-state.ts toQuery) and #cart=<deflated JSON>. */
export async function shareLink(c: Cart, query: string): Promise<string> {
  const packed = await pipe(new TextEncoder().encode(JSON.stringify(c)), new CompressionStream('deflate-raw'));
  return `${location.origin}/${query}#cart=${toBase64Url(packed)}`;
}

/** One cart holding both: the cohorts and identifiers of each, once; the release of the first. */
export function mergeCarts(mine: Cart, theirs: Cart): Cart {
  const keys = new Set(mine.cohorts.map((f) => JSON.stringify(f)));
  const cohorts = [...mine.cohorts, ...theirs.cohorts.filter((f) => !keys.has(JSON.stringify(f)))];
  const ids = emptyCart().ids;
  for (const k of KINDS) ids[k] = [...new Set([...mine.ids[k], ...theirs.ids[k]])];
  return { release: mine.release ?? theirs.release, cohorts, ids };
}

/** The cart a share link carries, or null when the hash holds none (an error when it is damaged). */
export async function cartFromHash(hash: string): Promise<Cart | null> {
  const m = /(?:^#|&)cart=([A-Za-z0-9_-]+)/.exec(hash);
  if (!m) return null;
  const json = new TextDecoder().decode(await pipe(fromBase64Url(m[1]!), new DecompressionStream('deflate-raw')));
  const c = JSON.parse(json) as unknown;
  if (!valid(c)) throw new Error('The shared cart link is damaged: it does not hold a cart.');
  return c;
}
