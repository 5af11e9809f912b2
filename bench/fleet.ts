// npm run bench:fleet — throughput of one server, of `idqs serve --workers 2`
// (one port, two processes) and of the reference nginx fleet (deploy/: nginx
// in front of three single-process replicas), in one run on loopback with
// autocannon: requests/s, p50 and p99 of GET /v3/version and POST
// /v3/cohort/counts (never cached: every request runs on the engine). The
// single and two-worker servers are measured in alternation, twice, so the
// ratio is taken under the same machine noise. Target: counts with 2 workers
// >= 1.7x one worker on a 2-core machine. Sized as docs/deploy.md says
// (workers x engine threads = cores), so each worker has IDQS_THREADS=1; the
// same pair is then measured with the engine's default 2 threads, where one
// worker's engine already uses both cores. Also the start-up time and idle memory
// of each server's whole process tree, which chose the default of one worker.
// Options: --scale S (default 0.1), --duration SECONDS per load (default 6), --rounds N (default 2).

import autocannon from 'autocannon';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NGINX, startNginx } from '../scripts/local-nginx.ts';
import { ensureBenchDb, freePort, spawnServer } from './server.ts';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const scale = arg('scale', 0.1);
const duration = arg('duration', 6);
const rounds = arg('rounds', 2);
const COUNTS = { terms: { Modality: ['CT', 'MR'] }, ranges: { instanceCount: { gte: 10 } } };

/** CPU seconds used so far by a process and its descendants (Linux /proc; 0 elsewhere). */
function cpuSeconds(pid: number): number {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return 0;
  const f = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  let s = (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  const kids = `/proc/${pid}/task/${pid}/children`;
  if (existsSync(kids)) for (const c of readFileSync(kids, 'utf8').trim().split(/\s+/).filter(Boolean)) s += cpuSeconds(Number(c));
  return s;
}

/** Resident memory of a process and its descendants, MB (Linux /proc; 0 elsewhere). */
function treeRssMb(pid: number): number {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return 0;
  let kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(status, 'utf8'))?.[1] ?? 0);
  const kids = `/proc/${pid}/task/${pid}/children`;
  if (existsSync(kids)) for (const c of readFileSync(kids, 'utf8').trim().split(/\s+/).filter(Boolean)) kb += treeRssMb(Number(c)) * 1024;
  return kb / 1024;
}

interface Figures {
  /** Cores the server used on average during the load. */
  cores?: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(base: string, kind: 'version' | 'counts'): Promise<Figures> {
  const r = await autocannon(
    kind === 'version'
      ? { url: `${base}/v3/version`, connections: 32, duration }
      : { url: `${base}/v3/cohort/counts`, method: 'POST', connections: 16, duration, headers: { 'content-type': 'application/json' }, body: JSON.stringify(COUNTS) },
  );
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

function mean(xs: Figures[]): Figures {
  const m = (f: keyof Figures) => xs.reduce((a, x) => a + (x[f] ?? 0), 0) / xs.length;
  return { rps: m('rps'), p50: m('p50'), p99: m('p99'), cores: m('cores'), errors: xs.reduce((a, x) => a + x.errors, 0) };
}

async function measure(base: string, pids: number[]): Promise<{ version: Figures; counts: Figures }> {
  await load(base, 'counts'); // warm the engine and the JIT
  const version = await load(base, 'version');
  const cpu0 = pids.reduce((a, p) => a + cpuSeconds(p), 0);
  const t0 = performance.now();
  const counts = await load(base, 'counts');
  counts.cores = (pids.reduce((a, p) => a + cpuSeconds(p), 0) - cpu0) / ((performance.now() - t0) / 1000);
  return { version, counts };
}

async function main() {
  const db = await ensureBenchDb(scale);
  const env = { IDQS_SHUTDOWN_S: '2', IDQS_THREADS: '1' };
  const pair = async (threads: string) => {
    const results = { one: { version: [] as Figures[], counts: [] as Figures[] }, two: { version: [] as Figures[], counts: [] as Figures[] } };
    const idle = { one: [] as { start: number; rss: number }[], two: [] as { start: number; rss: number }[] };
    for (let round = 0; round < rounds; round++) {
      for (const workers of [1, 2]) {
        const s = await spawnServer(db, { ...env, IDQS_THREADS: threads, IDQS_WORKERS: String(workers) });
        try {
          // Idle memory of the whole tree (primary, HTTP workers, the warm caller-SQL worker), once settled.
          await new Promise((r) => setTimeout(r, 1500));
          (workers === 1 ? idle.one : idle.two).push({ start: s.startSeconds, rss: treeRssMb(s.proc.pid!) });
          const m = await measure(s.base, [s.proc.pid!]);
          const r = workers === 1 ? results.one : results.two;
          r.version.push(m.version);
          r.counts.push(m.counts);
          process.stderr.write(`threads ${threads}, round ${round + 1}, ${workers} worker(s): counts ${Math.round(m.counts.rps)} req/s, version ${Math.round(m.version.rps)} req/s\n`);
        } finally {
          s.proc.kill('SIGTERM');
          await new Promise((r) => s.proc.once('exit', r));
        }
      }
    }
    const avg = (xs: { start: number; rss: number }[]) => ({ start: xs.reduce((a, x) => a + x.start, 0) / xs.length, rss: xs.reduce((a, x) => a + x.rss, 0) / xs.length });
    return {
      one: { version: mean(results.one.version), counts: mean(results.one.counts), idle: avg(idle.one) },
      two: { version: mean(results.two.version), counts: mean(results.two.counts), idle: avg(idle.two) },
    };
  };
  const sized = await pair('1');
  const defaults = await pair('2');

  let nginx: { version: Figures; counts: Figures } | string = 'nginx is not installed (apt-get install nginx)';
  if (NGINX) {
    const dir = mkdtempSync(join(tmpdir(), 'idqs-bench-fleet-'));
    const replicas = await Promise.all([0, 1, 2].map(() => spawnServer(db, { ...env, IDQS_WORKERS: '1' })));
    try {
      const ports = replicas.map((r) => Number(new URL(r.base).port));
      const n = await startNginx(dir, ports, await freePort());
      try {
        nginx = await measure(n.base, replicas.map((r) => r.proc.pid!));
      } finally {
        n.proc.kill('SIGTERM');
      }
    } finally {
      for (const r of replicas) r.proc.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const row = (name: string, f: { version: Figures; counts: Figures }) =>
    `| ${name} | ${Math.round(f.version.rps)} | ${f.version.p50} / ${f.version.p99} | ${Math.round(f.counts.rps)} | ${f.counts.p50} / ${f.counts.p99} | ${(f.counts.cores ?? 0).toFixed(2)} | ${f.version.errors + f.counts.errors} |`;
  console.log(`\nbench:fleet — scale ${scale}, ${availableParallelism()} cores, ${duration} s per load, ${rounds} alternating rounds (means)\n`);
  console.log('| server | /v3/version req/s | p50 / p99 ms | counts req/s | p50 / p99 ms | server cores used (counts) | errors |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(row('--workers 1, IDQS_THREADS=1', sized.one));
  console.log(row('--workers 2, IDQS_THREADS=1', sized.two));
  console.log(row('--workers 1, IDQS_THREADS=2 (default)', defaults.one));
  console.log(row('--workers 2, IDQS_THREADS=2 (default)', defaults.two));
  if (typeof nginx === 'string') console.log(`| nginx + 3 replicas | ${nginx} | | | | |`);
  else console.log(row('nginx + 3 replicas, IDQS_THREADS=1 (deploy/; GETs cached by nginx)', nginx));
  const ratio = sized.two.counts.rps / sized.one.counts.rps;
  console.log(`\ncounts throughput, 2 workers / 1 worker (1 engine thread each): ${ratio.toFixed(2)}x (target >= 1.7x: ${ratio >= 1.7 ? 'met' : 'missed'})`);
  console.log(`counts throughput, 2 workers / 1 worker (default 2 engine threads each): ${(defaults.two.counts.rps / defaults.one.counts.rps).toFixed(2)}x`);
  console.log(`/v3/version throughput, 2 workers / 1 worker: ${(sized.two.version.rps / sized.one.version.rps).toFixed(2)}x (the load generator shares the 2 cores)`);
  for (const [name, p] of [['IDQS_THREADS=1', sized], ['IDQS_THREADS=2 (default)', defaults]] as const) {
    console.log(`start-up to /v3/health and idle memory of the process tree, ${name}: 1 worker ${p.one.idle.start.toFixed(1)} s, ${Math.round(p.one.idle.rss)} MB; 2 workers ${p.two.idle.start.toFixed(1)} s, ${Math.round(p.two.idle.rss)} MB`);
  }
  console.log(`one worker already keeps ${(sized.one.counts.cores ?? 0).toFixed(2)} of ${availableParallelism()} cores busy on counts: its engine runs concurrent queries on several threads, so more workers add throughput only where the JavaScript side is the limit`);
}

await main();
