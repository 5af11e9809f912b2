// The explorer on the pinned real release (test/real-release.json) at 390 and
// 1440 px: the layout checks of test/layout-checks.ts with the release's own
// long values and large numbers, and a series table; from 360 to 2560 px its
// chart labels (long cancer types, collection ids), the collections list's
// columns and the tables' action columns (test/wide-layout-checks.ts). IDQS_SKIP_REAL_DATA
// skips it on purpose, with the reason printed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { defaultCacheDir } from '../src/config.ts';
import { ensureRelease } from '../src/core/release/fetch.ts';
import { parseSource } from '../src/core/release/sources.ts';
import { startServer } from './fixture.ts';
import { CHROMIUM, openBrowser, type TestBrowser } from './browser.ts';
import { TABLE_WIDTHS, WIDTHS, checkLayout, checkTableActions } from './layout-checks.ts';
import { checkChartLabels, checkCollectionColumns } from './wide-layout-checks.ts';

const PIN = JSON.parse(readFileSync(new URL('./real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const skipReal = process.env.IDQS_SKIP_REAL_DATA ? `IDQS_SKIP_REAL_DATA is set: the real release ${PIN.release} is skipped on purpose` : false;
if (skipReal) process.stdout.write(`# ${skipReal}\n`);

let b: TestBrowser;
before(async () => {
  if (skipReal) return;
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  b = await openBrowser();
});
after(async () => {
  await b?.close();
});

test(`the real release ${PIN.release} at 390 and 1440 px: the same layout checks, with its long values; from 360 to 2560 px labels, columns and action columns`, { skip: skipReal }, async () => {
  const rel = await ensureRelease({ release: PIN.release, source: parseSource(PIN.source), cacheDir: defaultCacheDir(), env: process.env });
  const real = await startServer({}, rel.db);
  try {
    for (const [width, height] of [WIDTHS[0], WIDTHS[3]]) await checkLayout(b, real.url, width, height, 'real');
    await b.page.getByRole('tab', { name: /^Series/ }).click();
    await b.page.locator('[data-table="series"] tbody tr').first().waitFor({ timeout: 30_000 });
    await b.screenshot('layout-real-1440-series');
    for (const width of TABLE_WIDTHS) {
      await checkChartLabels(b, real.url, width);
      await checkCollectionColumns(b, real.url, width);
      await checkTableActions(b, real.url, width, 'real');
    }
  } finally {
    await real.close();
  }
});
