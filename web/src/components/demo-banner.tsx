// A banner on every page while the service serves generated data, so that
// no identifier found here is taken for a real one. Self-contained: it asks
// /v3/version itself and styles itself (through the DOM, which the page's
// Content-Security-Policy allows), so it does not depend on the app's layout.

import { useEffect, useState } from 'preact/hooks';

const STYLE = {
  background: '#7a1f00',
  color: '#fff',
  padding: '6px 12px',
  fontSize: '14px',
  textAlign: 'center',
} as const;

export function DemoBanner() {
  const [synthetic, setSynthetic] = useState(false);
  useEffect(() => {
    fetch('/v3/version')
      .then((r) => (r.ok ? (r.json() as Promise<{ synthetic?: unknown }>) : null))
      .then((v) => setSynthetic(v?.synthetic === true))
      .catch(() => {}); // no answer: the app says so itself
  }, []);
  if (!synthetic) return null;
  return (
    <div role="alert" class="demo-banner" style={STYLE}>
      <strong>Generated demo data: identifiers are not real.</strong> For the real release, run <code>idqs serve --release latest</code>.
    </div>
  );
}
