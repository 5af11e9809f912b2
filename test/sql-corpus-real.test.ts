// Real users' SQL (test/fixtures/sql-corpus.json: the queries of IDC's public
// agent skills, idc-index's docs and IDC-Tutorials, each with its source) run
// through POST /v3/sql of `idqs serve` on the pinned real release, at default
// settings, in order. Every query whose tables the release's wheel has must
// answer, with the rows DuckDB gives for the same SQL over the release's own
// Parquet files (where that oracle can run it); every other one gets a clear
// 400: a table of the full release names the command that fetches it, SQL
// written for BigQuery says so. At the end: ran / answered / refused as
// expected / failed, and why.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { lit } from './sql-text.ts';
import { SKIP_REAL, pinnedRelease } from './real-releases.ts';
import { serveWithDefaults, type CliServer } from './serve-cli.ts';

interface Entry {
  source: string;
  sql: string;
  expect: 'rows' | 'table-not-in-wheel' | 'bigquery' | 'column-of-another-release' | 'excluded';
  table?: string;
  reason?: string;
}
type Row = Record<string, unknown>;

const corpus = (JSON.parse(readFileSync(new URL('./fixtures/sql-corpus.json', import.meta.url), 'utf8')) as { queries: Entry[] }).queries;
const MAX_ROWS = 10_000;
let server: CliServer;
let oracle: DuckDBConnection;

before(async () => {
  if (SKIP_REAL) return;
  const rel = await pinnedRelease();
  const inst = await DuckDBInstance.create(':memory:');
  oracle = await inst.connect();
  for (const [table, file] of [
    ['index', 'idc_index'],
    ['collections_index', 'collections_index'],
    ['analysis_results_index', 'analysis_results_index'],
    ['prior_versions_index', 'prior_versions_index'],
    ['version_metadata_index', 'version_metadata_index'],
  ]) {
    await oracle.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet(${lit(join(rel.fetch.folder, `${file}.parquet`))})`);
  }
  server = await serveWithDefaults(rel.db);
});

after(async () => {
  await server?.stop();
});

/** A value as both sides may write it: numbers (and numeric strings, as BIGINT and DECIMAL may come) to 9 significant digits. */
function norm(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(norm);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v) ? Number(v) : null;
  return n === null ? v : Number(n.toPrecision(9));
}
/**
 * Rows as sorted JSON texts, over the oracle's columns (the service's index has columns of its own, such as
 * series_cloud1_url, that SELECT * shows). `unordered`: the query aggregates strings in no stated order
 * (STRING_AGG without ORDER BY): a comma-separated value is compared as a set.
 */
const canon = (rows: Row[], columns: string[], unordered: boolean) =>
  rows
    .map((r) =>
      JSON.stringify(
        columns.map((c) => {
          const v = norm(r[c]);
          return unordered && typeof v === 'string' ? v.split(',').sort().join(',') : v;
        }),
      ),
    )
    .sort();

test('real users\' SQL on the pinned release, at default settings: what the wheel can answer answers as DuckDB over its Parquet, the rest is refused saying why', { skip: SKIP_REAL, timeout: 600_000 }, async () => {
  const tally = { ran: 0, answered: 0, compared: 0, refusedAsExpected: 0, excluded: 0 };
  const failures: string[] = [];
  for (const [i, q] of corpus.entries()) {
    if (q.expect === 'excluded') {
      tally.excluded++;
      continue;
    }
    tally.ran++;
    const label = `#${i} ${q.source} (${q.expect})`;
    const r = await server.post('/v3/sql', { sql: q.sql, max_rows: MAX_ROWS });
    const body = (await r.json()) as { rows?: Row[]; truncated?: boolean; columns?: string[]; error?: { code: string; message: string } };
    if (q.expect === 'rows') {
      if (r.status !== 200) {
        failures.push(`${label}: ${r.status} ${body.error?.message.split('\n')[0]}`);
        continue;
      }
      tally.answered++;
      // The oracle: the same SQL over the Parquet files (it cannot run what reads a column the service adds).
      let want: Row[];
      try {
        want = (await oracle.runAndReadAll(q.sql)).getRowObjectsJS() as Row[];
      } catch {
        continue;
      }
      tally.compared++;
      const ordered = /\border\s+by\b/i.test(q.sql);
      const limited = /\blimit\s+\d+/i.test(q.sql);
      if (want.length > MAX_ROWS) {
        if (!(body.truncated === true && body.rows!.length === MAX_ROWS)) failures.push(`${label}: ${want.length} rows, not cut at ${MAX_ROWS}`);
      } else if (limited && !ordered) {
        // Which rows a LIMIT without ORDER BY keeps is the engine's choice: their number and columns must agree.
        if (body.rows!.length !== want.length) failures.push(`${label}: ${body.rows!.length} rows, DuckDB over the Parquet gives ${want.length}`);
      } else {
        const columns = Object.keys(want[0] ?? {});
        const unordered = /\b(string_agg|group_concat)\s*\((?![^)]*order\s+by)/i.test(q.sql);
        const theirs = want.map((w) => Object.fromEntries(Object.entries(w).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
        if (body.rows!.length !== want.length || JSON.stringify(canon(body.rows!, columns, unordered)) !== JSON.stringify(canon(theirs, columns, unordered))) {
          failures.push(`${label}: rows differ from DuckDB over the Parquet`);
        }
      }
      continue;
    }
    // Refused: a clear 400 that says why and what to do.
    const msg = body.error?.message ?? '';
    const ok =
      r.status === 400 &&
      (q.expect === 'table-not-in-wheel'
        ? msg.includes(q.table!) && /idqs data fetch --release \S+ --source \S+ --tables/.test(msg)
        : q.expect === 'bigquery'
          ? /written for IDC's BigQuery dataset/.test(msg)
          : /Did you mean|Candidate bindings/.test(msg));
    if (ok) tally.refusedAsExpected++;
    else failures.push(`${label}: ${r.status} ${msg.slice(0, 300)}`);
  }
  process.stdout.write(`# corpus: ${corpus.length} queries; ran ${tally.ran}, answered ${tally.answered} (compared with DuckDB over the Parquet: ${tally.compared}), refused as expected ${tally.refusedAsExpected}, failed ${failures.length}; not runnable as published ${tally.excluded}\n`);
  assert.ok(tally.ran >= 100, `${tally.ran} queries ran`);
  assert.deepEqual(failures, []);
});
