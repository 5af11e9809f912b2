// npm run bench:abuse — what hostile clients cost everyone else (issue 15). One
// server process (the real CLI) over the series-level benchmark database; counts
// are probed one after another while idle, then under each hostile load in turn:
// 10 stalled manifest.txt readers, 4 big-result SQL queries read at 1 MB/s,
// 8 CPU-bound SQL queries, 4 parser-bound nested expressions. Printed per phase:
// counts p50/p99 and failures, event-loop delay max, server RSS peak (main
// process, and with its caller-SQL workers); then the
// targets (p99 <= 3x idle, zero failed curated requests, RSS peak <= 2x idle +
// the caller-SQL cap, the same server process throughout).
// With --release (the pinned real release, test/real-release.json, from the
// cache) or --mix, the phases are: idle, then 16 hostile clients at once
// (issue 34): 4 sending resolve bodies of 25,000,000 newlines, 3 resolve bodies
// just under the line limit (99,999 lines of junk), 3 counts bodies of 0.9 MB of
// PatientIDs, 2 CPU-bound caller SQL queries, 2 whole-release manifest.txt read
// fast and 2 left unread; then the same mix without the resolve clients. The
// load average is printed beside the figures.
// Options: --scale S (default 0.3), --duration SECONDS per phase (default 8),
// --release (any value: the pinned real release), --mix.
// --only KIND,... runs each named kind of the mix alone, one phase per kind (resolve-stream,
// resolve-junk, counts-ids, sql-cpu, manifest-fast, manifest-stalled): what each costs the others.

import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { ensureBenchDb, spawnServer } from './server.ts';
import { PIN, pinnedRelease } from '../test/real-releases.ts';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const scale = arg('scale', 0.3);
const duration = arg('duration', 8);
const real = process.argv.includes('--release');
const onlyArg = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1]!.split(',') : null;
const mixOnly = real || process.argv.includes('--mix') || onlyArg !== null;
/** The caller-SQL memory cap the server runs with (per worker), in MB: part of the RSS target. */
const SQL_MEMORY_MB = 512;

/** A caller-SQL query that keeps a core busy until it is cut. */
const cpu = 'SELECT sum(hash(range * 7919)) AS h FROM range(20000000000)';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Resident memory of one process, in MB (0 once it is gone). */
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resident memory of a process and its children (the caller-SQL workers), in MB. */
function treeRssMb(pid: number): number {
  let total = rssMb(pid);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) total += rssMb(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return total;
}

/** POST JSON; the status and the whole body. */
function post(base: string, path: string, body: unknown, signal?: AbortSignal): Promise<{ status: number; text: string }> {
  return fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));
}

/** Largest event-loop delay since the last scrape, in ms (prom-client resets its histogram on each collect). */
async function loopDelayMaxMs(base: string): Promise<number> {
  const text = await (await fetch(base + '/metrics')).text();
  const m = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : NaN;
}

/** A hostile load: started, then stopped by its own `stop()`. */
interface Load {
  stop(): Promise<void>;
}

/** Clients that ask for the whole manifest.txt and never read it. */
function stalledReaders(base: string, n: number): Load {
  const port = Number(new URL(base).port);
  const body = JSON.stringify({ filters: { ranges: { instanceCount: { gte: 0 } } }, format: 's5cmd' });
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.write(`POST /v3/cohort/manifest.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    sockets.push(s); // no 'data' listener: the socket's buffer fills and the TCP window closes
  }
  return { stop: async () => sockets.forEach((s) => s.destroy()) };
}

/** `n` loops, each running `one(signal)` again and again until stopped. */
function loops(n: number, one: (signal: AbortSignal) => Promise<void>): Load {
  const ac = new AbortController();
  const running = Array.from({ length: n }, async () => {
    while (!ac.signal.aborted) {
      try {
        await one(ac.signal);
      } catch {
        /* aborted, refused or cut: the next round tries again */
      }
      if (!ac.signal.aborted) await sleep(50);
    }
  });
  return {
    stop: async () => {
      ac.abort();
      await Promise.allSettled(running);
    },
  };
}

/** A big caller-SQL result read at `bytesPerSecond`. */
function slowSql(base: string, sql: string, maxRows: number, bytesPerSecond: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(base + '/v3/sql', { method: 'POST', headers: { 'content-type': 'application/json' }, signal }, (res) => {
      let budget = 0;
      let windowStart = Date.now();
      res.on('data', (chunk: Buffer) => {
        budget += chunk.length;
        const due = windowStart + (budget / bytesPerSecond) * 1000;
        const wait = due - Date.now();
        if (wait > 0) {
          res.pause();
          setTimeout(() => res.resume(), wait);
        }
        if (Date.now() - windowStart > 1000) {
          windowStart = Date.now();
          budget = 0;
        }
      });
      res.on('end', () => resolve());
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ sql, max_rows: maxRows }));
  });
}

/** A resolve body of `newlines` newlines sent as a stream (1 MB at a time) until the server answers; the status. */
function hugeResolve(base: string, newlines: number, signal: AbortSignal): Promise<void> {
  const block = Buffer.from('\\n'.repeat(1 << 19));
  const blocks = Math.ceil(newlines / (1 << 19));
  const length = 9 + blocks * block.length + 2;
  return new Promise((resolve) => {
    const s = connect(Number(new URL(base).port), '127.0.0.1');
    let answered = false;
    const done = () => {
      s.destroy();
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    s.on('data', () => {
      answered = true;
      setTimeout(done, 50);
    });
    s.on('error', done);
    s.on('close', done);
    s.on('connect', async () => {
      const write = (b: Buffer | string) => (s.write(b) ? Promise.resolve() : new Promise<void>((r) => s.once('drain', r)));
      await write(`POST /v3/series/resolve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"text":"`);
      for (let i = 0; i < blocks && !answered && !s.destroyed; i++) await write(block);
      if (!answered && !s.destroyed) await write('"}');
    });
  });
}

/** A whole manifest.txt read as fast as it comes. */
async function fastManifest(base: string, signal: AbortSignal): Promise<void> {
  const r = await fetch(base + '/v3/cohort/manifest.txt', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"filters": {}}', signal });
  for await (const chunk of r.body!) void chunk;
}

/** The kinds of hostile client in the issue-34 mix, by name (for --only). */
const KINDS = ['resolve-stream', 'resolve-junk', 'counts-ids', 'sql-cpu', 'manifest-fast', 'manifest-stalled'] as const;
type Kind = (typeof KINDS)[number];

/** The 16 hostile clients of issue 34, with or without the resolve ones; `only` keeps those kinds alone. */
function hostileMix(base: string, withResolve: boolean, only?: Set<Kind>): Load {
  const junk = { text: Array.from({ length: 99_999 }, (_, i) => `not-an-id-${i}`).join('\n') };
  const patients = { terms: { PatientID: Array.from({ length: 45_000 }, (_, i) => `PATIENT-${String(i).padStart(7, '0')}`) } };
  const want = (k: Kind) => (only ? only.has(k) : withResolve || !k.startsWith('resolve'));
  const loads = [
    want('resolve-stream') ? loops(4, (s) => hugeResolve(base, 25_000_000, s)) : null,
    want('resolve-junk') ? loops(3, async (s) => void (await post(base, '/v3/series/resolve', junk, s))) : null,
    want('counts-ids') ? loops(3, async (s) => void (await post(base, '/v3/cohort/counts', patients, s))) : null,
    want('sql-cpu') ? loops(2, async (s) => void (await post(base, '/v3/sql', { sql: cpu }, s))) : null,
    want('manifest-fast') ? loops(2, (s) => fastManifest(base, s)) : null,
    want('manifest-stalled') ? stalledReaders(base, 2) : null,
  ].filter((l): l is Load => l !== null);
  return { stop: async () => void (await Promise.all(loads.map((l) => l.stop()))) };
}

interface Phase {
  load: string;
  name: string;
  p50: number;
  p99: number;
  probes: number;
  failed: number;
  loopMaxMs: number;
  rssPeakMb: number;
  treePeakMb: number;
}

async function main(): Promise<void> {
  const db = real ? (await pinnedRelease()).db : await ensureBenchDb(scale);
  const { base, proc } = await spawnServer(db, { IDQS_SQL_MEMORY_LIMIT: `${SQL_MEMORY_MB}MB`, IDQS_LOG_LEVEL: 'error' });
  const pid = proc.pid!;
  const counts = { filters: { terms: { Modality: ['CT'] } } };
  const nested = `SELECT ${'abs('.repeat(900)}1${')'.repeat(900)} AS x`;
  const bigRows = "SELECT range AS i, repeat('x', 50000) AS s FROM range(10000)";
  const phases: Phase[] = [];
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let died = false;
  void exited.then(() => (died = true));

  async function phase(name: string, start: () => Load): Promise<void> {
    const load = start();
    await sleep(1000); // let the load take hold
    await loopDelayMaxMs(base); // reset the loop-delay window
    let peak = rssMb(pid);
    let treePeak = treeRssMb(pid);
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(pid));
      treePeak = Math.max(treePeak, treeRssMb(pid));
    }, 100);
    const times: number[] = [];
    let failed = 0;
    const end = Date.now() + duration * 1000;
    while (Date.now() < end && !died) {
      const t0 = performance.now();
      try {
        const r = await post(base, '/v3/cohort/counts', counts, AbortSignal.timeout(30_000));
        if (r.status !== 200) failed++;
      } catch {
        failed++;
      }
      times.push(performance.now() - t0);
      await sleep(20);
    }
    const loopMaxMs = died ? NaN : await loopDelayMaxMs(base);
    clearInterval(sampler);
    await load.stop();
    phases.push({ load: loadavg().map((l) => l.toFixed(1)).join(' '), name, p50: pct(times, 50), p99: pct(times, 99), probes: times.length, failed, loopMaxMs, rssPeakMb: peak, treePeakMb: treePeak });
    await sleep(1500); // let the server settle before the next phase
  }

  try {
    for (let i = 0; i < 20; i++) await post(base, '/v3/cohort/counts', counts); // warm up
    await phase('idle', () => ({ stop: async () => {} }));
    if (onlyArg) {
      const unknown = onlyArg.filter((k) => !(KINDS as readonly string[]).includes(k));
      if (unknown.length > 0) throw new Error(`--only takes ${KINDS.join(', ')}; not ${unknown.join(', ')}`);
      for (const k of onlyArg as Kind[]) await phase(`${k} alone`, () => hostileMix(base, true, new Set([k])));
    } else if (mixOnly) {
      await phase('16 hostile clients (resolve included)', () => hostileMix(base, true));
      await phase('10 of them (no resolve clients)', () => hostileMix(base, false));
    } else {
      await phase('10 stalled manifest.txt readers', () => stalledReaders(base, 10));
      await phase('4 big-result SQL read at 1 MB/s', () => loops(4, (s) => slowSql(base, bigRows, 10_000, 1 << 20, s)));
      await phase('8 CPU-bound SQL queries', () => loops(8, async (s) => void (await post(base, '/v3/sql', { sql: cpu }, s))));
      await phase('4 nested-expression SQL queries', () => loops(4, async (s) => void (await post(base, '/v3/sql', { sql: nested }, s))));
    }
  } finally {
    const samePid = !died && proc.exitCode === null;
    proc.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
    if (proc.exitCode === null && !died) proc.kill('SIGKILL');

    const idle = phases[0];
    process.stdout.write(`\nbench:abuse — ${real ? `real release ${PIN.release} (${PIN.source})` : `scale ${scale}`}, ${duration} s per phase, counts probed one at a time\n`);
    process.stdout.write('phase                                   probes  p50 ms  p99 ms  p99/idle  failed  loop max ms  RSS peak MB  +workers MB  load avg\n');
    for (const p of phases) {
      const ratio = idle ? p.p99 / idle.p99 : NaN;
      process.stdout.write(
        `${p.name.padEnd(40)}${String(p.probes).padStart(6)}${p.p50.toFixed(1).padStart(8)}${p.p99.toFixed(1).padStart(8)}${ratio.toFixed(2).padStart(10)}${String(p.failed).padStart(8)}${p.loopMaxMs.toFixed(1).padStart(13)}${p.rssPeakMb.toFixed(0).padStart(13)}${p.treePeakMb.toFixed(0).padStart(13)}  ${p.load}\n`,
      );
    }
    if (idle) {
      const worst = Math.max(...phases.map((p) => p.p99 / idle.p99));
      const failed = phases.reduce((n, p) => n + p.failed, 0);
      const rssPeak = Math.max(...phases.map((p) => p.rssPeakMb));
      const rssTarget = 2 * idle.rssPeakMb + SQL_MEMORY_MB;
      const ok = (b: boolean) => (b ? 'met' : 'MISSED');
      process.stdout.write(`counts p99 under load / idle: worst ${worst.toFixed(2)}x (target <= 3x: ${ok(worst <= 3)})\n`);
      process.stdout.write(`failed curated requests: ${failed} (target 0: ${ok(failed === 0)})\n`);
      const treePeak = Math.max(...phases.map((p) => p.treePeakMb));
      process.stdout.write(`with the caller-SQL workers: peak ${treePeak.toFixed(0)} MB (idle ${idle.treePeakMb.toFixed(0)} MB)\n`);
      process.stdout.write(`server RSS peak: ${rssPeak.toFixed(0)} MB vs 2 x idle ${idle.rssPeakMb.toFixed(0)} MB + caller-SQL cap ${SQL_MEMORY_MB} MB = ${rssTarget.toFixed(0)} MB (${ok(rssPeak <= rssTarget)})\n`);
      process.stdout.write(`main process restarted or died: ${samePid ? 'no' : 'YES'} (target no: ${ok(samePid)})\n`);
    }
  }
}

await main();
