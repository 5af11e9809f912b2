// npm run bench:resolve — time to resolve a saved manifest of 100,000 lines
// (POST /v3/series/resolve, end to end over loopback HTTP: body upload,
// parsing, the queries, the JSON answer) on the pinned real release.
// Target: <= 2 s. Both forms of the answer are timed: the default JSON
// (parsed whole by the client) and "format": "tsv" (split into rows and cells). The lines mix every form: s5cmd cp lines of current
// folders, URLs of prior versions (revised and removed series), bare
// SeriesInstanceUIDs and StudyInstanceUIDs, and a few bogus lines.
// Each form is also timed to its last byte received (fetch decompresses as it
// receives), apart from the client's parsing, and the CPU time the server and
// the client spent on it: less sensitive to the load of the machine than the
// wall time. The server is `idqs serve` in a process of its own, as a user's
// client and server are (in one process the client's decompressing and parsing
// held up the server's sending).
// Options: -- --lines N --runs R

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
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
const post = (body: unknown) => fetch(`${server.base}/v3/series/resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
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
      const res = await post(format === 'json' ? { text } : { text, format });
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
    const s3 = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const stats = (t: number[]) => (t.sort((a, b) => a - b), `median ${s3(t[Math.floor(RUNS / 2)]!)}, best ${s3(t[0]!)}, worst ${s3(t[RUNS - 1]!)}`);
    process.stdout.write(
      `resolve ${LINES} lines (${(text.length / 1e6).toFixed(1)} MB) on ${release}, format ${format}: ` +
        `${stats(times)} over ${RUNS} runs, parsed (target <= 2 s); ` +
        `last byte received ${stats(lastByte)} (${(bytes / 1e6).toFixed(1)} MB, ${encoding}); ` +
        `CPU of the server ${stats(serverCpu)}, of the client ${stats(cpu)}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n` +
        `totals ${totals}\n`,
    );
  }
} finally {
  server.proc.kill();
}
