// Small shared pieces: a copy-to-clipboard button, a copyable code block, an
// error box that shows the API's message, and a value cell for tables.

import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { Cell } from '../api.ts';
import { hasItem, toggleItems, useCart, type Kind } from '../cart.ts';
import { size } from '../format.ts';

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Without clipboard permission: select a hidden textarea and copy it.
    const t = document.createElement('textarea');
    t.value = text;
    t.setAttribute('readonly', '');
    t.className = 'offscreen';
    document.body.append(t);
    t.select();
    const ok = document.execCommand('copy');
    t.remove();
    return ok;
  }
}

export function CopyButton(props: { text: string; label?: string; small?: boolean; icon?: boolean }) {
  const [state, setState] = useState<'idle' | 'done' | 'failed'>('idle');
  const label = props.icon ? <CopyIcon /> : (props.label ?? 'Copy');
  return (
    <button
      type="button"
      class={props.icon ? 'icon-btn' : props.small ? 'btn small ghost' : 'btn ghost'}
      title={props.icon ? `Copy ${props.text}` : undefined}
      aria-label={props.icon ? `Copy ${props.text}` : undefined}
      onClick={async () => {
        setState((await copyText(props.text)) ? 'done' : 'failed');
        setTimeout(() => setState('idle'), 1500);
      }}
    >
      {state === 'done' ? (props.icon ? '✓' : 'Copied') : state === 'failed' ? (props.icon ? '!' : 'Copy failed') : label}
    </button>
  );
}

function CopyIcon() {
  return (
    <svg width="13" height="13" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.5">
      <rect x="5.5" y="5.5" width="8" height="9" rx="1.5" />
      <path d="M3.5 10.5h-1a1 1 0 0 1-1-1v-7a1 1 0 0 1 1-1h6a1 1 0 0 1 1 1v1" />
    </svg>
  );
}

export function CodeBlock(props: { text: string; label: string; id?: string }) {
  return (
    <div class="code">
      <div class="code-head">
        <span>{props.label}</span>
        <CopyButton text={props.text} label="Copy" small />
      </div>
      <pre id={props.id} tabIndex={0}>
        <code>{props.text}</code>
      </pre>
    </div>
  );
}

export function ErrorBox(props: { error: unknown; title?: string }) {
  if (!props.error) return null;
  const msg = props.error instanceof Error ? props.error.message : String(props.error);
  return (
    <div class="error" role="alert">
      {props.title ? <strong>{props.title}: </strong> : null}
      {msg}
    </div>
  );
}

export function Note(props: { children: ComponentChildren; kind?: 'warn' | 'info' }) {
  return (
    <div class={`note ${props.kind ?? 'info'}`} role={props.kind === 'warn' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

/** A table cell: lists joined, numbers with separators, identifiers monospace (long UIDs by their distinguishing end) with a copy button. */
const SIZE_COLUMNS = new Set(['size_MB', 'series_size_MB']);

export function CellView(props: { column: string; value: Cell }) {
  const v = props.value;
  if (v === null || v === undefined) return <span class="muted">—</span>;
  if (Array.isArray(v)) return <>{v.join(', ')}</>;
  // Sizes in the unit that suits them (the index stores decimal megabytes); the exact figure in the title.
  if (typeof v === 'number' && SIZE_COLUMNS.has(props.column)) return <span title={`${v} MB`} data-mb={v}>{size(v)}</span>;
  if (typeof v === 'number') return <>{Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 3 })}</>;
  if (typeof v === 'object') return <>{JSON.stringify(v)}</>;
  const s = String(v);
  if (props.column.endsWith('InstanceUID') || props.column === 'PatientID') {
    // UIDs share long prefixes, so their tail tells them apart; patient IDs are short and read whole.
    const cut = props.column !== 'PatientID' && s.length > 20;
    return (
      <span class="uid">
        <code title={s} data-uid={s}>
          {cut ? `…${s.slice(-14)}` : s}
        </code>
        <CopyButton text={s} icon />
      </span>
    );
  }
  return <>{s}</>;
}

/** Add one item to the cart, or take it out again. */
export function CartToggle(props: { kind: Kind; id: string; release: string }) {
  const c = useCart();
  const inCart = hasItem(c, props.kind, props.id);
  return (
    <button
      type="button"
      class={`icon-btn cart-toggle${inCart ? ' in' : ''}`}
      aria-pressed={inCart}
      aria-label={`${inCart ? 'Remove' : 'Add'} ${props.id} ${inCart ? 'from' : 'to'} the cart`}
      data-cart-toggle={props.id}
      onClick={() => toggleItems(props.kind, [props.id], !inCart, props.release)}
    >
      {inCart ? '−' : '+'}
    </button>
  );
}
