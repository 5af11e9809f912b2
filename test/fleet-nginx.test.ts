// The reference deployment of deploy/, run for real on loopback: Debian's
// nginx with deploy/nginx/idqs.conf in front of three `idqs serve` replicas
// (each restarted by a supervisor loop when it exits, as systemd's
// Restart=always does), and deploy/switch-release.sh switching them from one
// database to another under load. Expected answers come from SQL run by the
// test on each database file.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { build } from '../src/core/data/build.ts';
import { generate } from '../src/datagen/generate.ts';
import { NGINX, startNginx } from '../scripts/local-nginx.ts';
import { TEST_SCALE, freePort, testDataset } from './fixture.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const skip = NGINX ? false : 'nginx is not installed (apt-get install nginx; .ci/run installs it)';
const PREVIEW = '/v2/cohorts/manifest/preview';
const COUNTS_BODY = { terms: { Modality: ['CT'] } };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Fleet {
  dir: string;
  envFile: string;
  ports: number[];
  base: string;
  nginx: ChildProcess;
  loops: ChildProcess[];
}

let fleet: Fleet | undefined;
/** Expected answers of each database: counts of the CT cohort and its series, by SQL. */
const expected: { counts: Json; series: Set<string> }[] = [];
let dbs: string[] = [];


/** A second database, of another seed: the "new release" of the switch. */
async function secondDatabase(first: string): Promise<string> {
  const base = `${dirname(first)}-fleet-seed8`;
  const db = join(base, 'fleet.duckdb');
  if (!existsSync(db)) {
    rmSync(base, { recursive: true, force: true });
    mkdirSync(base, { recursive: true });
    await generate({ scale: TEST_SCALE, seed: 8, out: join(base, 'data'), instances: true });
    await build({ from: join(base, 'data'), db });
  }
  return db;
}

async function expectations(db: string): Promise<{ counts: Json; series: Set<string> }> {
  const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
  const con = await inst.connect();
  const r = await con.runAndReadAll(`
    SELECT count(DISTINCT PatientID)::INT AS patients, count(DISTINCT StudyInstanceUID)::INT AS studies,
           count(*)::INT AS series, sum(instanceCount)::BIGINT AS instances
    FROM "index" WHERE Modality = 'CT'`);
  const [row] = r.getRowObjectsJS() as Json[];
  const s = await con.runAndReadAll(`SELECT SeriesInstanceUID FROM "index" WHERE Modality = 'CT'`);
  const series = new Set((s.getRowObjectsJS() as Json[]).map((x) => x.SeriesInstanceUID as string));
  con.closeSync();
  inst.closeSync();
  return { counts: { patients: row!.patients, studies: row!.studies, series: row!.series, instances: Number(row!.instances) }, series };
}

/** A replica under a supervisor loop that starts it again (with the current environment file) whenever it exits. */
function replica(dir: string, envFile: string, port: number): ChildProcess {
  const script = `
    while [ ! -e "${dir}/stop" ]; do
      ( set -a; . "${envFile}"; set +a; exec "${process.execPath}" "${join(root, 'bin/idqs.cjs')}" serve --port ${port} --host 127.0.0.1 ) 2>>"${dir}/replica-${port}.log" >/dev/null &
      echo $! > "${dir}/${port}.pid"
      wait $! || true
      sleep 0.2
    done`;
  return spawn('bash', ['-c', script], { stdio: 'ignore' });
}

/** The end of nginx's error log: why it answered 502, when a test fails. */
function nginxErrors(): string {
  const f = join(fleet!.dir, 'nginx-error.log');
  return existsSync(f) ? readFileSync(f, 'utf8').split('\n').slice(-30).join('\n') : '(no error log)';
}

function pidOf(port: number): number {
  return Number(readFileSync(join(fleet!.dir, `${port}.pid`), 'utf8').trim());
}

async function waitReady(port: number, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/v3/ready`)).ok) return;
    } catch {
      /* starting */
    }
    if (Date.now() > until) throw new Error(`replica ${port} not ready: ${readFileSync(join(fleet!.dir, `replica-${port}.log`), 'utf8').slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function call(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json; upstream: string; headers: Headers }> {
  const r = await fetch(fleet!.base + path, body === undefined ? { headers } : { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await r.text();
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = { text };
  }
  return { status: r.status, json, upstream: r.headers.get('x-upstream') ?? '', headers: r.headers };
}

function countsOf(j: Json): Json {
  return { patients: j.patients, studies: j.studies, series: j.series, instances: j.instances };
}

/** Clients posting counts in a loop until `stop`, recording every answer. */
function countsLoad(clients: number, stop: { now: boolean }): Promise<{ ok: Json[]; failed: string[]; upstreams: Set<string> }> {
  const out = { ok: [] as Json[], failed: [] as string[], upstreams: new Set<string>() };
  const one = async () => {
    while (!stop.now) {
      try {
        const r = await call('/v3/cohort/counts', COUNTS_BODY);
        if (r.status === 200) out.ok.push(countsOf(r.json));
        else out.failed.push(`${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
        out.upstreams.add(r.upstream);
      } catch (e) {
        out.failed.push(String(e));
      }
    }
  };
  return Promise.all(Array.from({ length: clients }, one)).then(() => out);
}

/** Page a /v2 manifest of the CT series to its end: its rows, the replicas that answered, or the error that stopped it. */
async function pageManifest(pageSize: number): Promise<{ rows: string[]; upstreams: Set<string>; error?: Json }> {
  const upstreams = new Set<string>();
  const rows: string[] = [];
  let r = await call(PREVIEW, { cohort_def: { filters: { Modality: ['CT'] } }, fields: ['SeriesInstanceUID'], page_size: pageSize });
  for (;;) {
    upstreams.add(r.upstream);
    if (r.status !== 200) return { rows, upstreams, error: { status: r.status, ...r.json } };
    rows.push(...(r.json.manifest.manifest_data as Json[]).map((x) => x.SeriesInstanceUID as string));
    if (!r.json.next_page) return { rows, upstreams };
    r = await call(`${PREVIEW}/nextPage`, { next_page: r.json.next_page });
  }
}

before(async () => {
  if (!NGINX) return;
  dbs = [(await testDataset()).db];
  dbs.push(await secondDatabase(dbs[0]!));
  expected.push(await expectations(dbs[0]!), await expectations(dbs[1]!));
  assert.notDeepEqual(expected[0]!.counts, expected[1]!.counts, 'the two databases answer differently, so a response tells which one served it');

  const dir = mkdtempSync(join(tmpdir(), 'idqs-fleet-'));
  const envFile = join(dir, 'idqs.env');
  writeFileSync(
    envFile,
    [
      `IDQS_DB=${dbs[0]}`,
      `IDQS_CACHE_DIR=${join(root, '.cache', 'test')}`,
      'IDQS_LOG_LEVEL=warn',
      'IDQS_SHUTDOWN_S=5',
      'IDQS_TRUST_PROXY=loopback',
      // The public name nginx passes on as Host (the replicas listen on loopback and refuse other names).
      'IDQS_ALLOWED_HOSTS=idqs.example.org',
      'IDQS_TOKEN_SECRET=fleet-test-secret',
      'IDQS_SQL_CONNECTIONS=1',
      'IDQS_WORKERS=1',
      '',
    ].join('\n'),
  );
  const ports = [await freePort(), await freePort(), await freePort()];
  const listen = await freePort();
  const loops = ports.map((p) => replica(dir, envFile, p));
  fleet = { dir, envFile, ports, base: '', nginx: undefined as unknown as ChildProcess, loops };
  await Promise.all(ports.map((p) => waitReady(p)));
  const n = await startNginx(dir, ports, listen);
  fleet.base = n.base;
  fleet.nginx = n.proc;
});

after(async () => {
  if (!fleet) return;
  writeFileSync(join(fleet.dir, 'stop'), '');
  fleet.nginx?.kill('SIGTERM');
  for (const p of fleet.ports) {
    try {
      process.kill(pidOf(p), 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const l of fleet.loops) l.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 300));
  rmSync(fleet.dir, { recursive: true, force: true });
});

test('nginx spreads requests over the three replicas; answers equal SQL; GET answers are cached and revalidated, gzip passes through', { skip }, async () => {
  const seen = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const r = await call('/v3/cohort/counts', COUNTS_BODY);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(countsOf(r.json), expected[0]!.counts);
    seen.add(r.upstream);
  }
  assert.deepEqual([...seen].sort(), fleet!.ports.map((p) => `127.0.0.1:${p}`).sort(), 'every replica answered');

  const first = await call('/v3/collections', undefined, { 'accept-encoding': 'gzip' });
  const again = await call('/v3/collections', undefined, { 'accept-encoding': 'gzip' });
  assert.equal(first.status, 200);
  assert.equal(again.headers.get('x-cache'), 'HIT', 'the second GET is answered by nginx');
  assert.deepEqual(again.json, first.json);
  assert.equal(again.headers.get('etag'), first.headers.get('etag'));
  // fetch decodes gzip itself; ask without decoding to see the replica's encoding passed through.
  const raw = await new Promise<string | undefined>((resolve, reject) => {
    import('node:http').then(({ get }) =>
      get(`${fleet!.base}/v3/collections`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        res.resume();
        resolve(res.headers['content-encoding']);
      }).on('error', reject),
    );
  });
  assert.equal(raw, 'gzip');
  // Liveness and readiness are never cached.
  const ready = await call('/v3/ready');
  assert.equal(ready.status, 200);
  assert.equal(ready.headers.get('x-cache'), null);
});

test('nginx passes the client\'s Host: the public name is served, a foreign one refused by the replicas (DNS-rebinding guard)', { skip }, async () => {
  const { request } = await import('node:http');
  // POSTs: never answered from nginx's cache, so each reaches a replica.
  const post = (path: string, host: string, body: unknown) =>
    new Promise<{ status: number; json: Json }>((resolve, reject) => {
      const req = request(`${fleet!.base}${path}`, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Json }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  const ok = await post('/v3/cohort/counts', 'idqs.example.org', COUNTS_BODY);
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.deepEqual(countsOf(ok.json), expected[0]!.counts);
  const evil = await post('/v3/cohort/counts', 'evil.example', COUNTS_BODY);
  assert.equal(evil.status, 403, JSON.stringify(evil.json));
  assert.equal(evil.json.error.code, 'forbidden');
  const mcp = await post('/mcp', 'evil.example', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.equal(mcp.status, 403);
  assert.equal(mcp.json.error.code, -32000);
});

test('a replica killed under load: zero failed client requests, and the supervisor brings it back', { skip }, async (t) => {
  const stop = { now: false };
  const load = countsLoad(4, stop);
  await new Promise((r) => setTimeout(r, 1000));
  const victim = fleet!.ports[1]!;
  const pid = pidOf(victim);
  process.kill(pid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 3000));
  stop.now = true;
  const out = await load;
  assert.deepEqual(out.failed, [], `no client saw an error; nginx said:\n${nginxErrors()}`);
  assert.ok(out.ok.length > 20, `the load ran (${out.ok.length} answers)`);
  for (const c of out.ok) assert.deepEqual(c, expected[0]!.counts);
  t.diagnostic(`${out.ok.length} answers, none failed, across ${out.upstreams.size} replicas`);
  await waitReady(victim);
  assert.notEqual(pidOf(victim), pid, 'a new process serves the port');
  // nginx takes it back into rotation only after fail_timeout (2 s): the next test starts with the whole fleet, as an operator would.
  await new Promise((r) => setTimeout(r, 2500));
});

test('a /v2 manifest paged across replicas equals one SQL result, whichever replica answers each page', { skip }, async () => {
  const m = await pageManifest(7);
  assert.equal(m.error, undefined, JSON.stringify(m.error));
  assert.ok(m.upstreams.size >= 2, `pages came from ${m.upstreams.size} replicas`);
  assert.equal(m.rows.length, expected[0]!.series.size);
  assert.deepEqual(new Set(m.rows), expected[0]!.series);
});

test('release switch under load (deploy/switch-release.sh): zero failed requests, every answer from one release, a paged manifest never mixes them', { skip }, async (t) => {
  const stop = { now: false };
  const load = countsLoad(3, stop);
  const manifests: { rows: string[]; error?: Json }[] = [];
  const pager = (async () => {
    while (!stop.now) manifests.push(await pageManifest(25));
  })();
  await new Promise((r) => setTimeout(r, 500));

  const switched = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const p = spawn(join(root, 'deploy/switch-release.sh'), [`IDQS_DB=${dbs[1]}`, ...fleet!.ports.map(String)], {
      env: {
        ...process.env,
        IDQS_ENV_FILE: fleet!.envFile,
        IDQS_RESTART_CMD: `pid=$(cat "${fleet!.dir}/{port}.pid"); kill -TERM $pid; while kill -0 $pid 2>/dev/null; do sleep 0.1; done`,
        IDQS_READY_TIMEOUT_S: '90',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    p.on('exit', (code) => resolve({ code, out }));
  });
  // Keep the load on the switched fleet a moment, then stop.
  await new Promise((r) => setTimeout(r, 1000));
  stop.now = true;
  const out = await load;
  await pager;

  assert.equal(switched.code, 0, switched.out);
  assert.match(switched.out, /all 3 replicas switched/);
  assert.match(readFileSync(fleet!.envFile, 'utf8'), new RegExp(`^IDQS_DB=${dbs[1]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  assert.deepEqual(out.failed, [], `no client saw an error during the switch; nginx said:\n${nginxErrors()}`);
  const fromOld = out.ok.filter((c) => JSON.stringify(c) === JSON.stringify(expected[0]!.counts)).length;
  const fromNew = out.ok.filter((c) => JSON.stringify(c) === JSON.stringify(expected[1]!.counts)).length;
  assert.equal(fromOld + fromNew, out.ok.length, 'every answer is the old or the new release, nothing else');
  assert.ok(fromOld > 0 && fromNew > 0, `answers from both releases (${fromOld} old, ${fromNew} new)`);

  let complete = 0;
  for (const m of manifests) {
    if (m.error) {
      // What a client sees when its next page lands on a replica of the other release: a clear 400, never rows.
      assert.equal(m.error.status, 400, JSON.stringify(m.error));
      assert.match(m.error.message as string, /issued for another data release.*Run the query again from its first page/);
      continue;
    }
    complete++;
    const set = new Set(m.rows);
    assert.equal(set.size, m.rows.length, 'no row twice');
    const same = (e: Set<string>) => set.size === e.size && [...set].every((x) => e.has(x));
    assert.ok(same(expected[0]!.series) || same(expected[1]!.series), 'a complete manifest is exactly one release');
  }
  assert.ok(complete > 0, 'manifests completed during the switch');
  t.diagnostic(`counts: ${fromOld} old, ${fromNew} new, 0 failed; manifests: ${complete} complete, ${manifests.length - complete} refused for another release`);
  // After the switch every replica serves the new release.
  for (const p of fleet!.ports) {
    const r = await fetch(`http://127.0.0.1:${p}/v3/cohort/counts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(COUNTS_BODY) });
    assert.deepEqual(countsOf((await r.json()) as Json), expected[1]!.counts);
  }
});
