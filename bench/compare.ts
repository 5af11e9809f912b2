// npm run bench:compare -- [--peer DIR] [--root DIR] [--db FILE] [--duration S] [--rounds N] [--starts N] [--before DIR] [--only REGEX]
//
// IDQS (cohort index on) beside a peer on the same release, in --rounds
// alternating rounds (default 3) in one run (autocannon, c1 then c8 per
// request and server), then start to first count and resident memory. Prints
// one table with ratios, and the targets. Per request and concurrency: p50 in
// ms to 0.1 ms (from every response's own time, not autocannon's whole-ms
// histogram), req/s, and the server's CPU time per request (its process tree,
// from /proc, over the measurement and the queued work after it). Rows that
// repeat one request are answered from IDQS's caches after the first; rows
// whose filter changes with every request never are (the table says which).
//
// Start is measured the same way for every server, in --starts alternating
// starts (default 3; medians): from spawning the process, a count (nlst + CT)
// is posted every 20 ms until one answers 200 (start to first count), the CPU
// time the process tree used until then, and its resident memory 2 s after
// the cohort index answers (IDQS). --before DIR adds another IDQS checkout
// (built; e.g. a worktree of main) to those starts. RSS after load is the
// resident memory of the process and its children once every request round is
// done and the server has settled (2 s later); RSS after the run once the
// facet measurement is done too (parts read on first use are then held).
//
// The peer is the reference implementation when --peer names a folder that
// holds it (IDC-REST-MCP, Python), installed with:
//   fetch github:ImagingDataCommons/IDC-REST-MCP, git archive it into DIR (under .cache/, never committed), then
//   python3 -m venv DIR/.venv && DIR/.venv/bin/pip install DIR 'idc-index-data==25.0.5'
// It is started as DIR/.venv/bin/idc-api with IDC_API_INCLUDE_INDICES=none on
// loopback (its first start builds its database; a warm-up start runs first
// so the measured start is a normal one). Without --peer the peer is IDQS
// itself with IDQS_COHORT_INDEX=off: the same requests answered by SQL.
// --root DIR measures another IDQS checkout (built) instead of this one: the
// before row of a change, in the same session (e.g. git archive main into .cache/).
// --db defaults to the pinned real release in the cache (test/real-release.json).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { defaultCacheDir } from '../src/config.ts';
import { freePort } from './server.ts';
import { CASES as ALL_CASES, NLST_CT, cachedCase, setCollections, type Case } from './compare-cases.ts';
import { cpuSeconds, settle, treeRssMb } from './proc-stats.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const PIN = JSON.parse(readFileSync(new URL('../test/real-release.json', import.meta.url), 'utf8')) as { release: string; source: string };
const db = arg('db') ?? join(defaultCacheDir(), 'releases', `${PIN.release}-${PIN.source}`, 'idqs.duckdb');
const peerDir = arg('peer') === undefined ? undefined : resolve(arg('peer')!);
const duration = Number(arg('duration') ?? 5);
const rounds = Number(arg('rounds') ?? 3);
const starts = Number(arg('starts') ?? 3);
const beforeRoot = arg('before');
/** The IDQS checkout measured (built): this one, or another (a worktree of main, for a before row in the same session). */
const root = arg('root') === undefined ? join(import.meta.dirname, '..') : resolve(arg('root')!);
/** Only the request rows whose name matches (a quicker run while working on one of them; the targets need them all). */
const only = arg('only') === undefined ? null : new RegExp(arg('only')!, 'i');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CASES = ALL_CASES.filter((c) => only === null || only.test(c.name));

interface Server {
  name: string;
  base: string;
  proc: ChildProcess;
  startMs: number;
}


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
async function startIdqs(name: string, env: Record<string, string>, checkout = root): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [join(checkout, 'bin/idqs.cjs'), 'serve', '--db', db, '--port', String(port)], {
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


interface Cell {
  p50: number[];
  rps: number[];
  cpuMs: number[];
}

/** Request numbers for bodies that vary: one sequence over the whole run, so no filter is asked twice of any server. */
let requestNumber = 0;

/** One measurement: p50 from every 2xx response's own time (autocannon's histogram keeps whole ms), and the server's CPU per request. */
async function load(s: Server, c: Case, connections: number): Promise<{ p50: number; rps: number; cpuMs: number; bad: number }> {
  const body = c.body;
  const varying =
    typeof body === 'function'
      ? { requests: [{ method: c.method ?? 'POST', path: c.path, setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify((body as (i: number) => unknown)(requestNumber++)) }) }] }
      : body === undefined
        ? {}
        : { body: JSON.stringify(body) };
  const cpu0 = cpuSeconds(s.proc.pid!);
  const times: number[] = [];
  const run = autocannon({
    url: s.base + c.path,
    method: c.method ?? 'POST',
    connections,
    duration,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...c.headers },
    ...varying,
  });
  run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) times.push(ms);
  });
  const r = await run;
  await settle(s.proc.pid!);
  const cpuMs = ((cpuSeconds(s.proc.pid!) - cpu0) * 1000) / Math.max(1, r.requests.total);
  return { p50: median(times), rps: r.requests.average, cpuMs, bad: r.errors + r.non2xx };
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
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

async function main(): Promise<void> {
  const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  process.stdout.write(`# bench:compare of ${root} on ${db}\n# ${duration}s per measurement, ${rounds} alternating rounds; load average at start ${load0} (${'the machine is shared: read ratios, not absolutes'})\n`);
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
  setCollections(await collectionsOf(idqs));
  const peer = await startPeerServer();
  const servers = [idqs, peer];
  const cells = new Map<string, Cell>();
  const cell = (k: string) => cells.get(k) ?? (cells.set(k, { p50: [], rps: [], cpuMs: [] }), cells.get(k)!);
  // One request of each repeated case first, with no time limit: the rows that say "hit" measure the
  // answer asked again (a first caller-SQL run starts a worker, seconds on a loaded machine).
  for (const s of servers) for (const c of CASES.filter(cachedCase)) await fetch(s.base + c.path, c.body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(c.body) }).then((r) => r.arrayBuffer());
  let bad = 0;
  for (let round = 0; round < rounds; round++) {
    for (const c of CASES) {
      for (const conns of [1, 8]) {
        // Alternate which server goes first, so drift in the machine's load falls on both.
        for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
          const r = await load(s, c, conns);
          bad += r.bad;
          const k = `${s.name}|${c.name}|${conns}`;
          cell(k).p50.push(r.p50);
          cell(k).rps.push(r.rps);
          cell(k).cpuMs.push(r.cpuMs);
        }
      }
    }
  }
  // Memory once the load is over: what the servers keep, not what a request held for a moment.
  await sleep(2000);
  const rssLoadIdqs = treeRssMb(idqs.proc.pid!);
  const rssLoadPeer = treeRssMb(peer.proc.pid!);
  const facetsIdqs = await facetsUncached(idqs, 15, 0);
  const facetsPeer = peerDir ? NaN : await facetsUncached(peer, 15, 100);
  await sleep(2000);
  const rssAfterIdqs = treeRssMb(idqs.proc.pid!);
  const rssAfterPeer = treeRssMb(peer.proc.pid!);

  const m = (srv: Server, c: Case, conns: number) => cells.get(`${srv.name}|${c.name}|${conns}`)!;
  const pair = (xs: (x: Cell) => number[], srv: Server, c: Case, fmt: (x: number) => string) => `${fmt(median(xs(m(srv, c, 1))))} / ${fmt(median(xs(m(srv, c, 8))))}`;
  const head = (n: string) => [`${n} p50 ms c1 / c8`, 'req/s c1 / c8', 'CPU ms/req c1 / c8'];
  const rows: string[][] = [['request', 'IDQS caches', ...head(idqs.name), ...head(peer.name), 'req/s ratio c1 / c8']];
  const rpsRatio = (c: Case, conns: number) => median(m(idqs, c, conns).rps) / median(m(peer, c, conns).rps);
  for (const c of CASES) {
    const side = (srv: Server) => [pair((x) => x.p50, srv, c, f1), pair((x) => x.rps, srv, c, (x) => x.toFixed(0)), pair((x) => x.cpuMs, srv, c, f2)];
    rows.push([c.name, cachedCase(c) ? 'hit (one request repeated)' : 'never hit (new filter per request)', ...side(idqs), ...side(peer), `${rpsRatio(c, 1).toFixed(1)}x / ${rpsRatio(c, 8).toFixed(1)}x`]);
  }
  const row = (name: string, a: number, b: number) => rows.push([name, '', f1(a), '', '', f1(b), '', '', Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : '']);
  row('facets, all attributes, p50 ms (15 after 3 warm-up, one after another; new filter each)', facetsIdqs, facetsPeer);
  row(`start to first count, ms (median of ${starts})`, startIdqsMs, startPeerMs);
  row(`CPU time to first count, ms (median of ${starts})`, cpuIdqsMs, cpuPeerMs);
  row(`RSS 2 s after the index answers, MB (median of ${starts})`, rssIdqs, rssPeer);
  row('RSS after load (every request round, settled, 2 s), MB', rssLoadIdqs, rssLoadPeer);
  row('RSS after the run (facets too), MB', rssAfterIdqs, rssAfterPeer);
  if (beforeRoot) {
    const b = measured.get('IDQS before')!;
    rows.push([`IDQS before (${beforeRoot}): start to first count, ms / CPU time to it, ms / RSS 2 s after the index, MB`, '', `${f1(b.startMs)} / ${f1(b.cpuMs)} / ${f1(b.rssMb)}`, '', '', '', '', '', '']);
  }
  process.stdout.write(rows.map((r) => `| ${r.join(' | ')} |`).join('\n').replace(/\n/, `\n|${rows[0]!.map(() => '---').join('|')}|\n`) + '\n');
  if (bad > 0) process.stdout.write(`# ${bad} requests failed or answered non-2xx\n`);

  const check = (ok: boolean, text: string) => process.stdout.write(`${ok ? 'met    ' : 'NOT MET'} ${text}\n`);
  const byName = (n: string) => CASES.find((c) => c.name === n);
  const counts = CASES.filter((c) => c.path.endsWith('counts'));
  if (counts.length > 0) {
    const worstCountP50 = Math.max(...counts.map((c) => median(m(idqs, c, 1).p50)));
    const worstCountRatio = Math.min(...counts.map((c) => rpsRatio(c, 8)));
    const worstScaling = Math.min(...counts.filter((c) => !cachedCase(c)).map((c) => median(m(idqs, c, 8).rps) / median(m(idqs, c, 1).rps)));
    check(worstCountP50 <= 5, `counts p50 <= 5 ms for every filter at c1 (worst ${f1(worstCountP50)} ms)`);
    check(worstCountRatio >= 20, `counts >= 20x the peer's req/s at c8 (worst ${worstCountRatio.toFixed(1)}x)`);
    check(worstScaling >= 1.8, `uncached counts c8 req/s >= 1.8x c1 (worst ${worstScaling.toFixed(2)}x)`);
  }
  const p50Target = (n: string, ms: number) => {
    const c = byName(n);
    if (c) check(median(m(idqs, c, 1).p50) <= ms, `${n} p50 <= ${ms} ms (${f1(median(m(idqs, c, 1).p50))} ms)`);
  };
  p50Target('manifest, page of 1,000', 15);
  p50Target('manifest, page of 100', 5);
  const sql = byName('caller SQL, repeated');
  if (sql) check(rpsRatio(sql, 8) >= 20, `repeated caller SQL >= 20x the peer's req/s at c8 (${rpsRatio(sql, 8).toFixed(1)}x)`);
  if (only !== null) process.stdout.write(`# --only ${only.source}: ${CASES.length} of the request rows measured; the targets need a run of them all\n`);
  check(facetsIdqs <= 30, `facets of all attributes uncached p50 <= 30 ms (${f1(facetsIdqs)} ms)`);
  // Without the reference, against its figures measured on this machine for issue 39 (383 MB after load, 379 after the run).
  const [refLoad, refRun, against] = peerDir ? [rssLoadPeer, rssAfterPeer, "the reference's"] : [383, 379, "the reference's 383/379 MB of issue 39"];
  check(rssLoadIdqs <= 1.2 * refLoad, `RSS after load <= 1.2x ${against} (${f1(rssLoadIdqs)} vs ${f1(refLoad)} MB)`);
  check(rssAfterIdqs <= 1.2 * refRun, `RSS after the run <= 1.2x ${against} (${f1(rssAfterIdqs)} vs ${f1(refRun)} MB)`);
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
