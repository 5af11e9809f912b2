// npm run bench:compare -- [--peer DIR] [--db FILE] [--duration S] [--rounds N] [--starts N] [--before DIR] [--only REGEX]
//
// IDQS (cohort index on) beside a peer on the same release, in alternating
// rounds in one run (autocannon, c1 then c8 per request and server), then
// start to first count and resident memory after load. Prints one table with
// ratios, and the issue-22 targets. Rows that repeat one filter are answered
// from IDQS's answer cache after the first request; rows whose filter changes
// with every request (a new date window, a new set of collections) never are,
// and the table says which is which.
//
// Start and memory are measured the same way for every server, in --starts
// alternating starts (default 3; medians): from spawning the process, a count
// (nlst + CT) is posted every 20 ms until one answers 200 (start to first
// count) and the CPU time the process tree used until then; then, once the
// cohort index answers (IDQS), 2 s later, the resident
// memory of the process and its children (RSS after load). --before DIR adds
// another IDQS checkout (built; e.g. a worktree of main) to those starts, for
// a before/after in one run. RSS after the run is taken once every request
// and facet measurement is done (parts read on first use are then held).
//
// The peer is the reference implementation when --peer names a folder that
// holds it, installed with:
//   git archive of ImagingDataCommons/IDC-REST-MCP into DIR, then
//   python3 -m venv DIR/.venv && DIR/.venv/bin/pip install DIR 'idc-index-data==25.0.5'
// It is started as DIR/.venv/bin/idc-api with IDC_API_INCLUDE_INDICES=none on
// loopback (its first start builds its database; a warm-up start runs first
// so the measured start is a normal one). Without --peer the peer is IDQS
// itself with IDQS_COHORT_INDEX=off: the same requests answered by SQL.
// --db defaults to the pinned real release in the cache (test/real-release.json).

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { defaultCacheDir } from '../src/config.ts';
import { freePort } from './server.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const PIN = JSON.parse(readFileSync(new URL('../test/real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const db = arg('db') ?? join(defaultCacheDir(), 'releases', `${PIN.release}-${PIN.source}`, 'idqs.duckdb');
const peerDir = arg('peer');
const duration = Number(arg('duration') ?? 5);
const rounds = Number(arg('rounds') ?? 2);
const starts = Number(arg('starts') ?? 3);
const beforeRoot = arg('before');
/** Only the request rows whose name matches (a quicker run while working on one of them; the targets need them all). */
const only = arg('only') === undefined ? null : new RegExp(arg('only')!, 'i');
const here = join(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Server {
  name: string;
  base: string;
  proc: ChildProcess;
  startMs: number;
}

/** Resident memory of a process and its children, in MB. */
function treeRssMb(pid: number): number {
  const rss = (p: number) => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  };
  let total = rss(pid);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) total += treeRssMb(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return total;
}

const NLST_CT = { terms: { collection_id: ['nlst'], Modality: ['CT'] }, ranges: {} };

async function post(base: string, path: string, body: unknown): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t };
}

/** Milliseconds from `t0` until the server answers a count. */
async function firstCount(base: string, t0: number, proc: ChildProcess): Promise<number> {
  for (;;) {
    try {
      if ((await post(base, '/v3/cohort/counts', NLST_CT)).status === 200) return performance.now() - t0;
    } catch {
      /* not up yet */
    }
    if (proc.exitCode !== null) throw new Error('the server exited before answering');
    await sleep(20);
  }
}

/** `idqs serve` of the checkout at `root`, timed as the peer is: from spawning it to its first count. */
async function startIdqs(name: string, env: Record<string, string>, root = here): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [join(root, 'bin/idqs.cjs'), 'serve', '--db', db, '--port', String(port)], {
    env: { ...process.env, IDQS_LOG_LEVEL: 'warn', IDQS_WORKERS: '1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  started.push(proc);
  return { name, base, proc, startMs: await firstCount(base, t0, proc) };
}

async function stopServer(s: Server): Promise<void> {
  if (s.proc.exitCode !== null) return;
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill();
  await exited;
}

interface Contender {
  name: string;
  start: () => Promise<Server>;
  indexed: boolean;
}

/** Start to first count and RSS after load of each contender, in alternating starts: medians. */
async function startsAndMemory(contenders: Contender[]): Promise<Map<string, { startMs: number; cpuMs: number; rssMb: number }>> {
  const seen = new Map<string, { startMs: number[]; cpuMs: number[]; rssMb: number[] }>(contenders.map((c) => [c.name, { startMs: [], cpuMs: [], rssMb: [] }]));
  for (let k = 0; k < starts; k++) {
    for (const c of k % 2 === 0 ? contenders : [...contenders].reverse()) {
      const s = await c.start();
      // CPU time to the first count: what the start costs, less dependent on the machine's load than its duration.
      seen.get(c.name)!.cpuMs.push(cpuSeconds(s.proc.pid!) * 1000);
      if (c.indexed) await indexReady(s);
      await sleep(2000);
      seen.get(c.name)!.startMs.push(s.startMs);
      seen.get(c.name)!.rssMb.push(treeRssMb(s.proc.pid!));
      await stopServer(s);
      await sleep(500);
    }
  }
  return new Map([...seen].map(([n, v]) => [n, { startMs: median(v.startMs), cpuMs: median(v.cpuMs), rssMb: median(v.rssMb) }]));
}

async function startPeer(dir: string): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(join(dir, '.venv/bin/idc-api'), [], {
    cwd: dir,
    env: { ...process.env, IDC_API_INCLUDE_INDICES: 'none', IDC_API_HOST: '127.0.0.1', IDC_API_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  started.push(proc);
  return { name: 'reference', base, proc, startMs: await firstCount(base, t0, proc) };
}

/** Until the cohort index answers (a whole-release range count becomes fast), at most two minutes. */
async function indexReady(s: Server): Promise<void> {
  const t = performance.now();
  let fast = 0;
  while (fast < 3 && performance.now() - t < 120_000) {
    // A connection cut while the server is busy building is retried, not fatal.
    const r = await post(s.base, '/v3/cohort/counts', { ranges: { instanceCount: { gte: 0 } } }).catch(() => null);
    fast = r && r.ms < 40 ? fast + 1 : 0;
    await sleep(50);
  }
}

/** CPU seconds a process and its children have used (all their threads). */
function cpuSeconds(pid: number): number {
  const fields = (p: number) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    } catch {
      return null; // gone meanwhile
    }
  };
  const own = fields(pid);
  let total = own ? (Number(own[11]) + Number(own[12])) / 100 : 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = fields(Number(d));
    if (f && Number(f[1]) === pid) total += cpuSeconds(Number(d));
  }
  return total;
}

/**
 * Until a server has finished the work a measurement left queued (a slow
 * server still answers its last requests after the client stops), at most
 * 60 s: else that work would run during the other server's measurement.
 */
async function settle(s: Server): Promise<void> {
  const t = performance.now();
  while (performance.now() - t < 60_000) {
    const before = cpuSeconds(s.proc.pid!);
    await sleep(250);
    if (cpuSeconds(s.proc.pid!) - before < 0.025) return;
  }
}

interface Case {
  name: string;
  path: string;
  /** One body for every request (the answer cache holds it after the first), or a new filter per request number. */
  body: unknown | ((i: number) => unknown);
}

const DAY = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Collections of the release, for filters on a different set of them per request (read once from IDQS). */
let collections: string[] = [];

/**
 * The i-th 3-subset of the collections (combinatorial number system, after a
 * multiplicative shuffle of i): every request a set not asked before.
 */
function collectionSet(i: number): string[] {
  const k = collections.length;
  const total = (k * (k - 1) * (k - 2)) / 6;
  // 2654435761 is prime and larger than any total here: a permutation of 0..total-1.
  let rank = Number((BigInt(i) * 2654435761n) % BigInt(total));
  const out: string[] = [];
  let c = k - 1;
  for (let m = 3; m >= 1; m--) {
    const choose = (n: number) => (m === 3 ? (n * (n - 1) * (n - 2)) / 6 : m === 2 ? (n * (n - 1)) / 2 : n);
    while (choose(c) > rank) c--;
    out.push(collections[c]!);
    rank -= choose(c);
    c--;
  }
  return out;
}

/**
 * A year-long StudyDate window from a day of 1990-2025 (then a day longer every 13,000 requests).
 * The day is i times a prime modulo 13,000, a permutation: every measurement (c1, c8, either server)
 * draws windows from the whole span alike. Taken in order, later measurements got later, denser
 * years, so one server's c8 and the other's rounds did not measure the same work.
 */
const yearWindow = (i: number) => {
  const start = Date.UTC(1990, 0, 1) + ((i * 7919) % 13_000) * DAY;
  return { gte: isoDay(start), lte: isoDay(start + (365 + Math.floor(i / 13_000)) * DAY) };
};

const CASES: Case[] = [
  { name: 'counts, nlst + CT', path: '/v3/cohort/counts', body: NLST_CT },
  { name: 'counts, empty filter (whole release)', path: '/v3/cohort/counts', body: { terms: {}, ranges: {} } },
  { name: 'counts, instanceCount >= 1 (whole release)', path: '/v3/cohort/counts', body: { ranges: { instanceCount: { gte: 1 } } } },
  { name: 'counts, MR + BREAST', path: '/v3/cohort/counts', body: { terms: { Modality: ['MR'], BodyPartExamined: ['BREAST'] } } },
  { name: 'counts, StudyDate in 2001', path: '/v3/cohort/counts', body: { ranges: { StudyDate: { gte: '2001-01-01', lte: '2001-12-31' } } } },
  { name: 'counts, StudyDate, a year from a new day', path: '/v3/cohort/counts', body: (i: number) => ({ ranges: { StudyDate: yearWindow(i) } }) },
  { name: 'counts, 3 collections, a new set', path: '/v3/cohort/counts', body: (i: number) => ({ terms: { collection_id: collectionSet(i) } }) },
  {
    // Bounds outside the data: every row with a StudyDate (all but 1,524 of the release).
    name: 'counts, StudyDate ~all rows, new bounds',
    path: '/v3/cohort/counts',
    body: (i: number) => ({ ranges: { StudyDate: { gte: isoDay(Date.UTC(1880, 0, 1) - (i % 20_000) * DAY), lte: isoDay(Date.UTC(2027, 0, 1) + Math.floor(i / 20_000) * DAY) } } }),
  },
  {
    name: 'counts, CT or MR + StudyDate year, new window',
    path: '/v3/cohort/counts',
    body: (i: number) => ({ terms: { Modality: ['CT', 'MR'] }, ranges: { StudyDate: yearWindow(i) } }),
  },
  { name: 'manifest, page of 100', path: '/v3/cohort/manifest', body: { filters: NLST_CT, page_size: 100 } },
  { name: 'manifest, page 50 of 100', path: '/v3/cohort/manifest', body: { filters: NLST_CT, page_size: 100, page: 50 } },
  { name: 'manifest, page of 1,000', path: '/v3/cohort/manifest', body: { filters: NLST_CT, page_size: 1000 } },
].filter((c) => only === null || only.test(c.name));

/** Whether a case repeats one body, so that IDQS answers it from its answer cache after the first request. */
const cachedCase = (c: Case) => typeof c.body !== 'function';

interface Cell {
  p50: number[];
  rps: number[];
}

/** Request numbers for bodies that vary: one sequence over the whole run, so no filter is asked twice of any server. */
let requestNumber = 0;

async function load(s: Server, c: Case, connections: number): Promise<{ p50: number; rps: number; bad: number }> {
  const body = c.body;
  const varying =
    typeof body === 'function'
      ? { requests: [{ method: 'POST', path: c.path, setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify((body as (i: number) => unknown)(requestNumber++)) }) }] }
      : { body: JSON.stringify(body) };
  const r = await autocannon({
    url: s.base + c.path,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/json' },
    ...varying,
  });
  return { p50: r.latency.p50, rps: r.requests.average, bad: r.errors + r.non2xx };
}

/** Every collection_id of the release, from IDQS's facets. */
async function collectionsOf(s: Server): Promise<string[]> {
  const r = await fetch(`${s.base}/v3/cohort/facets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: ['collection_id'], limit: 10_000, count: 'series' }),
  });
  const body = (await r.json()) as { facets: { collection_id: { values: { value: string }[] } } };
  const ids = body.facets.collection_id.values.map((v) => v.value);
  if (ids.length < 3) throw new Error(`the release lists ${ids.length} collections; the collection-set rows need at least 3`);
  return ids.sort();
}

/** p50 of facets of every attribute, each request a filter not seen before (uncached). */
async function facetsUncached(s: Server, n: number, offset: number): Promise<number> {
  // Three facets of other filters first, then a pause: structures a server builds once per release
  // (the facet codes read from the index file, the value orders built after the first facets) are not
  // what an uncached answer costs. Every measured request is still a filter never asked before.
  for (let i = 0; i < 3; i++) await post(s.base, '/v3/cohort/facets', { filters: { ranges: { instanceCount: { lte: 1000 + i } } } });
  await sleep(2000);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await post(s.base, '/v3/cohort/facets', { filters: { ranges: { instanceCount: { gte: offset + i + 1 } } } });
    if (r.status !== 200) return NaN;
    ms.push(r.ms);
  }
  ms.sort((a, b) => a - b);
  return ms[Math.floor(ms.length / 2)]!;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 1 : 0) : 'n/a');

async function main(): Promise<void> {
  const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  process.stdout.write(`# bench:compare on ${db}\n# ${duration}s per measurement, ${rounds} alternating rounds; load average at start ${load0} (${'the machine is shared: read ratios, not absolutes'})\n`);
  if (peerDir) {
    process.stdout.write('# warm-up start of the reference (its first start builds its database)\n');
    const w = await startPeer(peerDir);
    w.proc.kill();
    await sleep(1000);
  }
  const peerName = peerDir ? 'reference' : 'IDQS (SQL)';
  const startPeerServer = () => (peerDir ? startPeer(peerDir) : startIdqs(peerName, { IDQS_COHORT_INDEX: 'off' }));
  // Each start alone (one after the other), so no start competes with another.
  const measured = await startsAndMemory([
    { name: 'IDQS (index)', start: () => startIdqs('IDQS (index)', { IDQS_COHORT_INDEX: 'on' }), indexed: true },
    ...(beforeRoot ? [{ name: 'IDQS before', start: () => startIdqs('IDQS before', { IDQS_COHORT_INDEX: 'on' }, beforeRoot), indexed: true }] : []),
    { name: peerName, start: startPeerServer, indexed: false },
  ]);
  const { startMs: startIdqsMs, cpuMs: cpuIdqsMs, rssMb: rssIdqs } = measured.get('IDQS (index)')!;
  const { startMs: startPeerMs, cpuMs: cpuPeerMs, rssMb: rssPeer } = measured.get(peerName)!;
  const idqs = await startIdqs('IDQS (index)', { IDQS_COHORT_INDEX: 'on' });
  await indexReady(idqs);
  collections = await collectionsOf(idqs);
  const peer = await startPeerServer();
  const servers = [idqs, peer];
  const cells = new Map<string, Cell>();
  const cell = (k: string) => cells.get(k) ?? (cells.set(k, { p50: [], rps: [] }), cells.get(k)!);
  let bad = 0;
  for (let round = 0; round < rounds; round++) {
    for (const c of CASES) {
      for (const conns of [1, 8]) {
        // Alternate which server goes first, so drift in the machine's load falls on both.
        for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
          const r = await load(s, c, conns);
          await settle(s);
          bad += r.bad;
          const k = `${s.name}|${c.name}|${conns}`;
          cell(k).p50.push(r.p50);
          cell(k).rps.push(r.rps);
        }
      }
    }
  }
  const facetsIdqs = await facetsUncached(idqs, 15, 0);
  const facetsPeer = peerDir ? NaN : await facetsUncached(peer, 15, 100);
  const rssAfterIdqs = treeRssMb(idqs.proc.pid!);
  const rssAfterPeer = treeRssMb(peer.proc.pid!);

  const rows: string[][] = [['request', 'IDQS answer cache', `${idqs.name} p50 ms c1`, 'req/s c1 / c8', `${peer.name} p50 ms c1`, 'req/s c1 / c8', 'ratio c1 / c8']];
  for (const c of CASES) {
    const a1 = cells.get(`${idqs.name}|${c.name}|1`)!;
    const a8 = cells.get(`${idqs.name}|${c.name}|8`)!;
    const b1 = cells.get(`${peer.name}|${c.name}|1`)!;
    const b8 = cells.get(`${peer.name}|${c.name}|8`)!;
    rows.push([
      c.name,
      cachedCase(c) ? 'hit (one filter repeated)' : 'never hit (new filter per request)',
      f1(median(a1.p50)),
      `${f1(median(a1.rps))} / ${f1(median(a8.rps))}`,
      f1(median(b1.p50)),
      `${f1(median(b1.rps))} / ${f1(median(b8.rps))}`,
      `${(median(a1.rps) / median(b1.rps)).toFixed(1)}x / ${(median(a8.rps) / median(b8.rps)).toFixed(1)}x`,
    ]);
  }
  rows.push(['facets, all attributes (p50 of 15 after 3 warm-up, one after another)', 'never hit (new filter per request)', f1(facetsIdqs), '', f1(facetsPeer), '', '']);
  rows.push([`start to first count, ms (median of ${starts})`, '', f1(startIdqsMs), '', f1(startPeerMs), '', `${(startIdqsMs / startPeerMs).toFixed(2)}x`]);
  rows.push([`CPU time to first count, ms (median of ${starts})`, '', f1(cpuIdqsMs), '', f1(cpuPeerMs), '', `${(cpuIdqsMs / cpuPeerMs).toFixed(2)}x`]);
  rows.push([`RSS after load, MB (median of ${starts})`, '', f1(rssIdqs), '', f1(rssPeer), '', `${(rssIdqs / rssPeer).toFixed(2)}x`]);
  rows.push(['RSS after the run, MB', '', f1(rssAfterIdqs), '', f1(rssAfterPeer), '', `${(rssAfterIdqs / rssAfterPeer).toFixed(2)}x`]);
  if (beforeRoot) {
    const b = measured.get('IDQS before')!;
    rows.push([
      `IDQS before (${beforeRoot}): start to first count, ms / CPU time to it, ms / RSS after load, MB`,
      '',
      `${f1(b.startMs)} / ${f1(b.cpuMs)} / ${f1(b.rssMb)}`,
      '',
      '',
      '',
      `${(b.startMs / startPeerMs).toFixed(2)}x / ${(b.cpuMs / cpuPeerMs).toFixed(2)}x / ${(b.rssMb / rssPeer).toFixed(2)}x`,
    ]);
  }
  process.stdout.write(rows.map((r) => `| ${r.join(' | ')} |`).join('\n').replace(/\n/, `\n|${rows[0]!.map(() => '---').join('|')}|\n`) + '\n');
  if (bad > 0) process.stdout.write(`# ${bad} requests failed or answered non-2xx\n`);

  const counts = CASES.filter((c) => c.path.endsWith('counts'));
  const check = (ok: boolean, text: string) => process.stdout.write(`${ok ? 'met    ' : 'NOT MET'} ${text}\n`);
  if (counts.length > 0) {
    const worstCountP50 = Math.max(...counts.map((c) => median(cells.get(`${idqs.name}|${c.name}|1`)!.p50)));
    const worstCountRatio = Math.min(...counts.map((c) => median(cells.get(`${idqs.name}|${c.name}|8`)!.rps) / median(cells.get(`${peer.name}|${c.name}|8`)!.rps)));
    check(worstCountP50 <= 5, `counts p50 <= 5 ms for every filter at c1 (worst ${f1(worstCountP50)} ms)`);
    check(worstCountRatio >= 20, `counts >= 20x the peer's req/s at c8 (worst ${worstCountRatio.toFixed(1)}x)`);
  }
  const page = cells.get(`${idqs.name}|manifest, page of 100|1`);
  if (page) {
    const pageRatio = median(cells.get(`${idqs.name}|manifest, page of 100|8`)!.rps) / median(cells.get(`${peer.name}|manifest, page of 100|8`)!.rps);
    check(median(page.p50) <= 15, `manifest page of 100 p50 <= 15 ms (${f1(median(page.p50))} ms)`);
    check(pageRatio >= 5, `manifest page of 100 >= 5x the peer at c8 (${pageRatio.toFixed(1)}x)`);
  }
  if (only !== null) process.stdout.write(`# --only ${only.source}: ${CASES.length} of the request rows measured; the targets need a run of them all\n`);
  check(facetsIdqs <= 50, `facets of all attributes uncached p50 <= 50 ms (${f1(facetsIdqs)} ms)`);
  check(rssIdqs <= 1.5 * rssPeer, `RSS after load <= 1.5x the peer's (${f1(rssIdqs)} vs ${f1(rssPeer)} MB)`);
  check(startIdqsMs <= startPeerMs, `start to first count <= the peer's (${f1(startIdqsMs)} vs ${f1(startPeerMs)} ms)`);
  process.stdout.write(`# load average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
  for (const s of servers) s.proc.kill();
}

const started: ChildProcess[] = [];
process.on('exit', () => {
  for (const p of started) if (p.exitCode === null) p.kill();
});

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
