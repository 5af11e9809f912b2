// A real browser for the explorer's tests and benchmark: Debian's Chromium
// (installed by .ci/run with apt-get; never downloaded) driven by
// playwright-core, headless, with a fresh profile and the background
// networking that would flood a closed network turned off. Console errors,
// page errors and failed requests are collected so a test can require none.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export const BROWSER_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where screenshots of the main states go (git-ignored; CI keeps them as artifacts). */
export const SCREENSHOTS = fileURLToPath(new URL('../.cache/screenshots/', import.meta.url));

export interface TestBrowser {
  context: BrowserContext;
  /** The page the helpers act on (tests may point it at another page of the context). */
  page: Page;
  /** Console errors, uncaught page errors, failed requests and error answers (`http 400 POST /v3/sql`) seen so far. */
  problems: string[];
  screenshot: (name: string) => Promise<void>;
  close: () => Promise<void>;
}

export async function openBrowser(viewport = { width: 1366, height: 900 }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'idqs-chromium-'));
  // A fresh profile each time (playwright passes it as --user-data-dir).
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: BROWSER_ARGS, viewport, acceptDownloads: true });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  const watch = (p: Page) => {
    p.on('console', (m) => {
      // A 4xx/5xx answer is logged by Chromium as "Failed to load resource"; it is recorded below with its route.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
    });
    p.on('response', (r) => {
      if (r.status() >= 400) problems.push(`http ${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    p.on('requestfailed', (r) => {
      // Requests the app cancels itself (a newer filter superseding an older one) are not failures.
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });
  };
  watch(page);
  context.on('page', watch);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const b: TestBrowser = {
    context,
    page,
    problems,
    screenshot: async (name) => void (await b.page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false })),
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
  return b;
}
