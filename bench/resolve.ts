// npm run bench:resolve — time to resolve a saved manifest of 100,000 lines
// (POST /v3/series/resolve, end to end over loopback HTTP: body upload,
// parsing, the queries, the answer) on the pinned real release. Target:
// <= 2 s to the answer received, its last byte in the client's hands
// (decompressed: the clients ask for gzip, as fetch and requests do). Both
// forms of the answer are timed: the default JSON and "format": "tsv". The time
// to parsed is printed beside it: the client's own JSON.parse / json.loads of
// 68 MB (0.25 s in Node, 0.6-0.9 s in Python) on the same two cores. The lines
// mix every form: s5cmd cp lines of current folders, URLs of prior versions
// (revised and removed series), bare SeriesInstanceUIDs and StudyInstanceUIDs,
// and a few bogus lines. Two clients: Node's fetch, and Python's standard
// library as requests/urllib3 use it (bench/resolve-client.py; most IDC users
// run Python), when python3 is on the PATH. The CPU time the server and the
// client spent is printed too: less sensitive to the load of the machine than
// the wall time. The server is `idqs serve` in a process of its own, as a
// user's client and server are (in one process the client's decompressing and
// parsing held up the server's sending).
// Options: -- --lines N --runs R

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { spawnServer } from './server.ts';
import { PIN, pinnedRelease } from '../test/real-releases.ts';

/** CPU time (ms) of a process so far, user and system, from /proc. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const LINES = Number(arg('lines', '100000'));
const RUNS = Number(arg('runs', '5'));

const { db } = await pinnedRelease();
const release = `${PIN.release} (${PIN.source})`;
// The manifest, made with the engine in this process before the server starts (read-only, closed after).
const instance = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
const connection = await instance.connect();
const take = async (sql: string, n: number) => (await (await connection.runAndReadAll(`${sql} LIMIT ${Math.floor(n)}`)).getRows()).map((r) => String(r[0]));
const cur = await take(`SELECT 'cp s3://' || aws_bucket || '/' || crdc_series_uuid || '/* .' FROM "index" ORDER BY hash(crdc_series_uuid)`, LINES * 0.6);
const old = await take(`SELECT DISTINCT series_aws_url FROM prior_versions_index ORDER BY 1`, LINES * 0.2);
const sids = await take(`SELECT SeriesInstanceUID FROM "index" ORDER BY hash(SeriesInstanceUID)`, LINES * 0.1);
const studies = await take(`SELECT DISTINCT StudyInstanceUID FROM "index" ORDER BY 1`, LINES * 0.05);
connection.closeSync();
instance.closeSync();
const lines = ['# bench manifest', ...cur, ...old, ...sids, ...studies];
for (let i = 0; lines.length < LINES; i++) lines.push(i % 2 ? `not-an-id-${i}` : `1.2.826.0.1.${i}`);
const text = lines.slice(0, LINES).join('\n');

const server = await spawnServer(db, { IDQS_RESOLVE_MAX_LINES: String(Math.max(LINES, 100_000)) });
const s3 = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const stats = (t: number[]) => (t.sort((a, b) => a - b), `median ${s3(t[Math.floor(t.length / 2)]!)}, best ${s3(t[0]!)}, worst ${s3(t[t.length - 1]!)}`);
const scratch = mkdtempSync(join(tmpdir(), 'idqs-bench-resolve-'));

/** The same requests from Python (bench/resolve-client.py), or why they were not made. */
async function python(format: string, body: string, expected: unknown): Promise<string> {
  const bodyFile = join(scratch, `${format}.json`);
  writeFileSync(bodyFile, body);
  const script = fileURLToPath(new URL('./resolve-client.py', import.meta.url));
  const s0 = processCpuMs(server.proc.pid!);
  // Not spawnSync: the event loop must keep running, or fetch takes a kept-alive socket the server closed meanwhile.
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)('python3', [script, String(new URL(server.base).port), bodyFile, String(RUNS), format], { encoding: 'utf8', maxBuffer: 1 << 24 }));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'Python: not measured (no python3 on the PATH)';
    throw new Error(`the Python client failed: ${(e as { stderr?: string }).stderr ?? String(e)}`, { cause: e });
  }
  const runs = stdout.trim().split('\n').map((l) => JSON.parse(l) as { last_byte: number; parsed: number; cpu: number; totals: unknown });
  const serverCpu = (processCpuMs(server.proc.pid!) - s0) / runs.length;
  const pick = (k: 'last_byte' | 'parsed' | 'cpu') => runs.map((x) => x[k] * 1000);
  for (const run of runs) {
    if (JSON.stringify(run.totals) !== JSON.stringify(expected)) throw new Error(`Python read totals ${JSON.stringify(run.totals)}, Node ${JSON.stringify(expected)}`);
  }
  return (
    `Python (http.client, zlib, json): answer received ${stats(pick('last_byte'))} (target <= 2 s); parsed ${stats(pick('parsed'))}; ` +
    `CPU of the server ${s3(serverCpu)} a run, of the client ${stats(pick('cpu'))}`
  );
}
const post = (body: string) => fetch(`${server.base}/v3/series/resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
try {
  // Each form as a client reads it: the default JSON parsed whole; the TSV split into rows and cells. The time to
  // the last byte received (decompressed, as fetch hands it over) is taken apart from the time to parsed.
  const forms = {
    json: async (body: Buffer) => JSON.stringify((JSON.parse(body.toString('utf8')) as { totals: unknown }).totals),
    tsv: async (body: Buffer) => {
      const rows = body.toString('utf8').split('\n');
      const cells = rows.slice(2, -1).map((r) => r.split('\t'));
      if (cells.some((c) => c.length !== cells[0]!.length)) throw new Error('TSV rows of different widths');
      return rows[0]!.replace(/^.*totals /, '');
    },
  };
  for (const [format, read] of Object.entries(forms)) {
    // The request, serialised once: both clients send these bytes, and no run times its making.
    const request = JSON.stringify(format === 'json' ? { text } : { text, format });
    const times: number[] = [];
    const lastByte: number[] = [];
    const cpu: number[] = [];
    const serverCpu: number[] = [];
    let totals = '';
    let bytes = 0;
    let encoding = '';
    for (let r = 0; r < RUNS; r++) {
      const c0 = process.cpuUsage();
      const s0 = processCpuMs(server.proc.pid!);
      const t0 = performance.now();
      const res = await post(request);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      encoding = res.headers.get('content-encoding') ?? 'identity';
      const body = Buffer.from(await res.arrayBuffer());
      lastByte.push(performance.now() - t0);
      bytes = body.length;
      totals = await read(body);
      times.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
      serverCpu.push(processCpuMs(server.proc.pid!) - s0);
    }
    process.stdout.write(
      `resolve ${LINES} lines (${(text.length / 1e6).toFixed(1)} MB) on ${release}, format ${format}, ${RUNS} runs (${(bytes / 1e6).toFixed(1)} MB, ${encoding}):\n` +
        `  Node fetch: answer received ${stats(lastByte)} (target <= 2 s); parsed ${stats(times)}; ` +
        `CPU of the server ${stats(serverCpu)}, of the client ${stats(cpu)}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n` +
        `  ${await python(format, request, JSON.parse(totals))}\n` +
        `  totals ${totals}\n`,
    );
  }
} finally {
  server.proc.kill();
  rmSync(scratch, { recursive: true, force: true });
}
