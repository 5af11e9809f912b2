// No process of a server outlives it (issue 27), checked on real processes: the
// real CLI on a real port, a caller-SQL query that runs for minutes in its
// worker process, then (a) SIGTERM: every descendant gone within
// IDQS_SHUTDOWN_S + 2 s, the exit code saying the drain was cut, the workers'
// folders removed; (b) SIGKILL to the server: its worker gone within 2 s;
// (c) SIGKILL to a `--workers 2` primary: every descendant gone within 2 s;
// (d) a start-up after a crash removes the folders of dead servers only.
// Each server gets its own temporary root (TMPDIR), so the tests never touch
// folders of other servers on the machine.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, testDataset } from './fixture.ts';

const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'idqs.cjs');
/** Minutes of work for the engine, whatever the data: it is stopped long before. */
const LONG_SQL = 'SELECT count(*) FROM range(100000000000) t(x) WHERE x % 7 = 3';
const roots: string[] = [];
const started: ChildProcess[] = [];
const seen = new Set<number>();

after(() => {
  // Whatever a failed assertion left behind.
  for (const p of started) p.kill('SIGKILL');
  for (const pid of seen) if (!gone(pid)) process.kill(pid, 'SIGKILL');
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tempRoot(): string {
  const r = mkdtempSync(join(tmpdir(), 'idqs-proc-test-'));
  roots.push(r);
  return r;
}

/** Fields of /proc/PID/stat after the command name, or null once the process is gone. */
function stat(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  } catch {
    return null;
  }
}
/** Gone: no such process, or a zombie waiting to be reaped (it runs nothing and holds nothing). */
const gone = (pid: number) => {
  const s = stat(pid);
  return s === null || s[0] === 'Z';
};
const cpuTicks = (pid: number) => {
  const s = stat(pid);
  return s ? Number(s[11]) + Number(s[12]) : 0;
};
const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/** Every live descendant of a process, from the kernel's own lists (each thread's children). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const read = (f: () => string): string => {
    try {
      return f();
    } catch {
      return ''; // the process or thread ended meanwhile
    }
  };
  for (const t of read(() => readdirSync(`/proc/${pid}/task`).join(' ')).split(' ').filter(Boolean)) {
    const kids = read(() => readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean).map(Number);
    for (const k of kids) out.push(k, ...descendants(k));
  }
  for (const p of out) seen.add(p);
  return out;
}

async function until(what: string, cond: () => boolean, ms: number, log: () => string = () => ''): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Served {
  proc: ChildProcess;
  url: string;
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function serve(root: string, env: Record<string, string> = {}, args: string[] = []): Promise<Served> {
  const db = (await testDataset()).db;
  const port = await freePort();
  const proc = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', String(port), ...args], {
    env: { ...process.env, TMPDIR: root, IDQS_LOG_LEVEL: 'warn', IDQS_WORKERS: '1', IDQS_SQL_CONNECTIONS: '1', IDQS_SQL_TIMEOUT_MS: '600000', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(proc);
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = args.includes('--workers') ? /IDQS fleet of \d+ workers at/ : /serving data release/;
  await until('the server to serve', () => ready.test(err) || proc.exitCode !== null, 120_000, () => err);
  assert.equal(proc.exitCode, null, err);
  return { proc, url: `http://127.0.0.1:${port}`, err: () => err, exited };
}

/** Send the long query (its answer, if any, is not awaited) and wait until a caller-SQL worker burns CPU on it. */
async function longQueryRunning(s: Served): Promise<number> {
  fetch(`${s.url}/v3/sql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: LONG_SQL }) }).then(
    (r) => r.body?.cancel(),
    () => undefined,
  );
  const workers = () => descendants(s.proc.pid!).filter((p) => cmdline(p).includes('sql-worker'));
  let busy = 0;
  await until(
    'a caller-SQL worker running the query',
    () => {
      // A second of CPU (100 ticks) after the query was sent: the query, not the start-up.
      busy = workers().find((p) => cpuTicks(p) >= 100) ?? 0;
      return busy !== 0;
    },
    30_000,
    s.err,
  );
  const t0 = cpuTicks(busy);
  await new Promise((r) => setTimeout(r, 500));
  assert.ok(cpuTicks(busy) > t0, 'the worker is running the query');
  return busy;
}

/** A quick query answered, so a caller-SQL worker runs (they start on first use). */
async function workerStarted(s: Served): Promise<void> {
  const r = await fetch(`${s.url}/v3/sql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT 42 AS n' }) });
  assert.equal(r.status, 200, await r.text());
  await until('a caller-SQL worker', () => descendants(s.proc.pid!).some((p) => cmdline(p).includes('sql-worker')), 20_000, s.err);
}

const workerFolders = (root: string) => readdirSync(root).filter((n) => n.startsWith('idqs-sql-'));

test('(a) SIGTERM: the long query is cut at IDQS_SHUTDOWN_S, every descendant is gone within it + 2 s, exit 1 says so, folders removed', async () => {
  const root = tempRoot();
  const s = await serve(root, { IDQS_SHUTDOWN_S: '2' });
  const worker = await longQueryRunning(s);
  const tree = descendants(s.proc.pid!);
  assert.ok(tree.includes(worker));
  assert.ok(workerFolders(root).length > 0, 'a worker folder exists while it runs');
  const t0 = Date.now();
  s.proc.kill('SIGTERM');
  await until('every descendant gone', () => tree.every(gone), 2000 + 2000, () => `${tree.map((p) => `${p} ${cmdline(p)}`).join('\n')}\n${s.err()}`);
  const { code } = await s.exited;
  assert.ok(Date.now() - t0 <= 4000);
  assert.equal(code, 1, `a drain that had to cut a query exits 1\n${s.err()}`);
  assert.match(s.err(), /requests still running at the deadline were cut/);
  assert.deepEqual(workerFolders(root), [], 'worker folders removed');
});

test('(a) SIGTERM with nothing in flight: exit 0, workers and folders gone', async () => {
  const root = tempRoot();
  const s = await serve(root, { IDQS_SHUTDOWN_S: '2' });
  // A caller-SQL worker, started by a first query (workers start on first use).
  await workerStarted(s);
  const tree = descendants(s.proc.pid!);
  s.proc.kill('SIGTERM');
  const { code } = await s.exited;
  assert.equal(code, 0, s.err());
  await until('every descendant gone', () => tree.every(gone), 1000);
  assert.deepEqual(workerFolders(root), []);
});

test('(b) SIGKILL to the server: its caller-SQL worker stops within 2 s, mid-query', async () => {
  const root = tempRoot();
  const s = await serve(root);
  const worker = await longQueryRunning(s);
  const tree = descendants(s.proc.pid!);
  s.proc.kill('SIGKILL');
  await s.exited;
  await until('the worker gone', () => gone(worker) && tree.every(gone), 2000, () => tree.map((p) => `${p} ${stat(p)?.[0]} ${cmdline(p)}`).join('\n'));
});

test('(c) SIGKILL to a --workers 2 primary: every descendant stops within 2 s, one of them mid-query', async () => {
  const root = tempRoot();
  const s = await serve(root, { IDQS_WORKERS: '2' }, ['--workers', '2']);
  const worker = await longQueryRunning(s);
  const tree = descendants(s.proc.pid!);
  // Two HTTP workers and at least the busy caller-SQL worker.
  assert.ok(tree.length >= 3 && tree.includes(worker), tree.map((p) => `${p} ${cmdline(p)}`).join('\n'));
  s.proc.kill('SIGKILL');
  await s.exited;
  await until('every descendant gone', () => tree.every(gone), 2000, () => tree.map((p) => `${p} ${stat(p)?.[0]} ${cmdline(p)}`).join('\n'));
});

test('(d) a start-up after a crash removes the worker folders of dead servers, and only those', async () => {
  const root = tempRoot();
  // A real crash: a server killed outright leaves its worker's folder behind.
  const crashed = await serve(root);
  await workerStarted(crashed);
  const crashedPid = crashed.proc.pid!;
  crashed.proc.kill('SIGKILL');
  await crashed.exited;
  // A folder of another dead process (pid of a process that has exited), one of a live process
  // (this test's), and folders that only look alike: the last three must stay.
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
  assert.ok(gone(deadPid));
  const dead = join(root, `idqs-sql-${deadPid}-0-AbC123`);
  const live = join(root, `idqs-sql-${process.pid}-1-XyZ789`);
  const other = join(root, `idqs-sql-notapid-0-abcdef`);
  const file = join(root, `idqs-sql-${deadPid}-2-file00`);
  for (const d of [dead, live, other]) {
    mkdirSync(join(d, 'spill'), { recursive: true });
    writeFileSync(join(d, 'spill', 'block.tmp'), 'x'.repeat(1000));
  }
  writeFileSync(file, 'not a folder');
  // The crash normally leaves its worker's folder (the kernel kills the worker before it can remove
  // it); not asserted, as the worker may just win that race. The made-up folder above stands for it.
  const leftByCrash = workerFolders(root).filter((n) => n.startsWith(`idqs-sql-${crashedPid}-`));

  const s = await serve(root);
  try {
    assert.ok(!existsSync(dead), 'the folder of a dead process is removed');
    for (const n of leftByCrash) assert.ok(!existsSync(join(root, n)), `${n}, left by the crashed server, is removed`);
    assert.ok(existsSync(join(live, 'spill', 'block.tmp')), 'the folder of a live process is kept');
    assert.ok(existsSync(join(other, 'spill', 'block.tmp')), 'a folder not named by a pid is kept');
    assert.ok(existsSync(file), 'a file is never removed');
  } finally {
    s.proc.kill('SIGTERM');
    await s.exited;
  }
});

test('(d) idqs mcp and idqs sql also remove the worker folders of dead processes at start, and only those', async () => {
  const db = (await testDataset()).db;
  for (const command of ['mcp', 'sql'] as const) {
    const root = tempRoot();
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    assert.ok(gone(deadPid));
    const dead = join(root, `idqs-sql-${deadPid}-0-AbC123`);
    const live = join(root, `idqs-sql-${process.pid}-1-XyZ789`);
    for (const d of [dead, live]) {
      mkdirSync(join(d, 'spill'), { recursive: true });
      writeFileSync(join(d, 'spill', 'block.tmp'), 'x'.repeat(1000));
    }
    const args = command === 'mcp' ? ['mcp', '--db', db] : ['sql', '--db', db, 'SELECT 42 AS answer', '--format', 'json'];
    const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TMPDIR: root, IDQS_LOG_LEVEL: 'warn' }, stdio: ['pipe', 'pipe', 'pipe'] });
    started.push(proc);
    let err = '';
    let out = '';
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    // mcp: up once it says so on stderr; sql: once it has answered and exited.
    if (command === 'mcp') await until('idqs mcp to start', () => /agent tools \(MCP\) on stdio/.test(err) || proc.exitCode !== null, 120_000, () => err);
    else assert.equal(await exited, 0, err);
    assert.ok(!existsSync(dead), `${command}: the folder of a dead process is removed`);
    assert.ok(existsSync(join(live, 'spill', 'block.tmp')), `${command}: the folder of a live process is kept`);
    assert.match(err, /removed 1 temporary folder\(s\) left by caller-SQL workers/, `${command} says what it removed`);
    if (command === 'mcp') {
      proc.stdin!.end();
      await exited;
    } else assert.equal(JSON.parse(out).rows[0].answer, 42, out);
  }
});
