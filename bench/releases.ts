// Memory and start-up of one process serving two real releases against one
// serving the newest alone: `idqs serve --release A` and `--release A,B`
// (the pinned release and the earlier one of test/real-release.json, from
// the cache). For each: seconds to the banner, RSS once the newest release
// has answered its first facets (its cohort index and facets are warmed at
// start), and, with two, RSS once the earlier release has answered facets and
// counts too (its index and caches are made on first use). Target: serving
// the second release costs well under a second copy of the first (RSS at
// start <= 1.5x one release's). Prints the load average with the figures.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { freePort } from './server.ts';
import { PIN, pinnedRelease } from '../test/real-releases.ts';

const CLI = fileURLToPath(new URL('../bin/idqs.cjs', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

async function post(url: string, body: unknown): Promise<void> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status} ${await r.text()}`);
  await r.arrayBuffer();
}

interface Run {
  releases: string;
  startS: number;
  rssNewestMb: number;
  rssBothMb: number | null;
}

async function run(releases: string[]): Promise<Run> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const p = spawn(process.execPath, [CLI, 'serve', '--release', releases.join(','), '--source', PIN.source, '--port', String(port)], {
    env: { ...process.env, IDQS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  try {
    while (!/serving data release/.test(err)) {
      if (p.exitCode !== null) throw new Error(`the server exited:\n${err}`);
      await sleep(50);
    }
    const startS = (performance.now() - started) / 1000;
    const facets = { filters: { terms: { Modality: ['CT'] } } };
    await post(`${base}/v3/cohort/facets`, facets);
    await sleep(5000);
    const rssNewestMb = rssMb(p.pid!);
    let rssBothMb: number | null = null;
    if (releases.length > 1) {
      const other = `?release=${releases[1]}`;
      await post(`${base}/v3/cohort/facets${other}`, facets);
      // Its cohort index is built in the background from the first request; then counts come from it.
      await sleep(15000);
      await post(`${base}/v3/cohort/counts${other}`, facets);
      await post(`${base}/v3/cohort/facets${other}`, { filters: { terms: { Modality: ['MR'] } } });
      rssBothMb = rssMb(p.pid!);
    }
    return { releases: releases.join(','), startS, rssNewestMb, rssBothMb };
  } finally {
    p.kill('SIGTERM');
    await new Promise((r) => p.once('exit', r));
  }
}

await pinnedRelease(); // fetched and built once, outside the timings
const one = await run([PIN.release]);
const two = await run([PIN.release, PIN.previous]);
const fmt = (n: number) => n.toFixed(2);
process.stdout.write(`load average ${loadavg().map(fmt).join(' ')}\n`);
for (const r of [one, two]) {
  process.stdout.write(
    `--release ${r.releases}: start ${r.startS.toFixed(1)} s; RSS after the newest answered ${r.rssNewestMb} MB` +
      (r.rssBothMb === null ? '' : `; after both answered ${r.rssBothMb} MB`) +
      '\n',
  );
}
const ratio = two.rssNewestMb / one.rssNewestMb;
process.stdout.write(`two releases / one, RSS after the newest answered: ${ratio.toFixed(2)}x (target <= 1.5x); after both answered: ${((two.rssBothMb ?? 0) / one.rssNewestMb).toFixed(2)}x\n`);
if (ratio > 1.5) process.exitCode = 1;
