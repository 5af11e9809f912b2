// The steps of cluster.sh that speak Trino's HTTP protocol or read Parquet:
//   rules [--setup-user U]   print the access-control rules (U may write while tables are registered)
//   ready --nodes N          wait until N nodes are active and a query runs
//   register ...             register the release folder's Parquet files (and its full metadata export's
//                            table folders) as external Hive tables
//   locked ...               wait until the read-only rules refuse the setup user's writes
// Plain JavaScript on Node's fetch, so cluster.sh needs no build of the service.

/* global fetch, setTimeout */
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DuckDBInstance, DuckDBTypeId } from '@duckdb/node-api';

const [cmd, ...rest] = process.argv.slice(2);
const opts = {};
for (let i = 0; i < rest.length; i += 2) opts[rest[i].replace(/^--/, '')] = rest[i + 1];

/** Run one statement to its end; rows, or throws with Trino's error. */
async function query(sql, user = 'idqs', headers = {}) {
  let res = await fetch(`${opts.url}/v1/statement`, { method: 'POST', body: sql, headers: { 'X-Trino-User': user, ...headers } });
  const rows = [];
  for (;;) {
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
    const body = await res.json();
    if (body.error) throw new Error(`${body.error.errorName}: ${body.error.message}`);
    if (body.data) rows.push(...body.data);
    if (!body.nextUri) return rows;
    res = await fetch(body.nextUri, { headers: { 'X-Trino-User': user } });
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function rules(catalog, setupUser) {
  const readable = `${catalog}|system`;
  const setup = setupUser ? [{ user: setupUser, allow: 'all' }] : [];
  return {
    catalogs: [...setup, { catalog: readable, allow: 'read-only' }],
    schemas: [...(setupUser ? [{ user: setupUser, owner: true }] : []), { owner: false }],
    tables: [
      ...(setupUser ? [{ user: setupUser, privileges: ['SELECT', 'INSERT', 'DELETE', 'UPDATE', 'OWNERSHIP'] }] : []),
      { catalog: readable, privileges: ['SELECT'] },
    ],
    queries: [{ allow: ['execute', 'view'] }],
  };
}

/** A Parquet column's type, as Trino's Hive connector declares it (null: a type it cannot read). */
function trinoType(t) {
  switch (t.typeId) {
    case DuckDBTypeId.VARCHAR: return 'varchar';
    case DuckDBTypeId.BIGINT: return 'bigint';
    case DuckDBTypeId.INTEGER: return 'integer';
    case DuckDBTypeId.SMALLINT: return 'smallint';
    case DuckDBTypeId.TINYINT: return 'tinyint';
    case DuckDBTypeId.DOUBLE: return 'double';
    case DuckDBTypeId.FLOAT: return 'real';
    case DuckDBTypeId.BOOLEAN: return 'boolean';
    case DuckDBTypeId.DATE: return 'date';
    case DuckDBTypeId.TIMESTAMP: return 'timestamp(6)';
    case DuckDBTypeId.BLOB: return 'varbinary';
    case DuckDBTypeId.DECIMAL: return `decimal(${t.width}, ${t.scale})`;
    case DuckDBTypeId.LIST: {
      const v = trinoType(t.valueType);
      return v && `array(${v})`;
    }
    case DuckDBTypeId.STRUCT: {
      const fields = t.entryNames.map((n, i) => [n, trinoType(t.entryTypes[i])]);
      return fields.every(([, f]) => f) ? `row(${fields.map(([n, f]) => `"${n.replaceAll('"', '""')}" ${f}`).join(', ')})` : null;
    }
    default: return null;
  }
}

/**
 * What a release folder holds as tables: each top-level Parquet file (idc_index is the service's
 * "index"), and each table folder of the full metadata export (bigquery_export/idc_v<N>/<table>/, in
 * parts), under the table's own name.
 */
function releaseTables(dir) {
  const out = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort()) {
    const base = file.slice(0, -'.parquet'.length);
    out.push({ table: base === 'idc_index' ? 'index' : base, files: [join(dir, file)] });
  }
  const exportDir = join(dir, 'bigquery_export');
  if (existsSync(exportDir)) {
    for (const version of readdirSync(exportDir).filter((v) => /^idc_v\d+$/.test(v)).sort()) {
      for (const table of readdirSync(join(exportDir, version)).sort()) {
        const tableDir = join(exportDir, version, table);
        if (!statSync(tableDir).isDirectory()) continue;
        const parts = readdirSync(tableDir).filter((f) => f.endsWith('.parquet')).sort();
        if (parts.length > 0) out.push({ table, files: parts.map((f) => join(tableDir, f)) });
      }
    }
  }
  return out.filter(({ table }) => /^[a-z][a-z0-9_]*$/.test(table));
}

async function register() {
  const { catalog, schema, user } = opts;
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await query(`CREATE SCHEMA IF NOT EXISTS ${catalog}.${schema}`, user);
  for (const { table, files } of releaseTables(opts['release-dir'])) {
    const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet('${files[0].replaceAll("'", "''")}') LIMIT 0`);
    const cols = reader.columnNames().map((n, i) => [n, trinoType(reader.columnTypes()[i])]);
    const skipped = cols.filter(([, t]) => !t).map(([n]) => n);
    if (skipped.length > 0) console.error(`${table}: columns of types Trino's Hive tables cannot declare left out: ${skipped.join(', ')}`);
    // Hive tables are folders: the table's folder holds hard links to the release's files (copies
    // across file systems); Trino's local file system reads a symbolic link's own size, not its target's.
    const dir = join(opts['tables-dir'], table);
    mkdirSync(dir, { recursive: true });
    for (const path of files) {
      try {
        linkSync(path, join(dir, basename(path)));
      } catch {
        copyFileSync(path, join(dir, basename(path)));
      }
    }
    const columns = cols.filter(([, t]) => t).map(([n, t]) => `"${n.replaceAll('"', '""')}" ${t}`).join(', ');
    await query(
      `CREATE TABLE ${catalog}.${schema}."${table}" (${columns}) WITH (external_location = 'local:///tables/${table}', format = 'PARQUET')`,
      user,
    );
    const [[n]] = await query(`SELECT count(*) FROM ${catalog}.${schema}."${table}"`);
    console.error(`registered ${table}: ${n} rows in ${files.length} file(s)`);
  }
  conn.closeSync();
  db.closeSync();
}

async function ready() {
  const until = Date.now() + Number(opts.timeout ?? 300) * 1000;
  let last = '';
  while (Date.now() < until) {
    try {
      const [[n]] = await query("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'");
      if (Number(n) >= Number(opts.nodes)) return;
      last = `${n} of ${opts.nodes} nodes active`;
    } catch (e) {
      last = e.message;
    }
    await sleep(1000);
  }
  throw new Error(`not ready after ${opts.timeout ?? 300} s: ${last}`);
}

async function locked() {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    try {
      await query(`CREATE SCHEMA ${opts.catalog}.probe_writes`, opts.user);
      await query(`DROP SCHEMA ${opts.catalog}.probe_writes`, opts.user);
    } catch (e) {
      if (/ACCESS_DENIED|Access Denied/i.test(e.message)) {
        await query(`SELECT count(*) FROM ${opts.catalog}.${opts.schema}."index"`);
        return;
      }
      throw e;
    }
    await sleep(500);
  }
  throw new Error('writes were still allowed 30 s after the read-only rules were written');
}

try {
  if (cmd === 'rules') console.log(JSON.stringify(rules(opts.catalog, opts['setup-user']), null, 2));
  else if (cmd === 'ready') await ready();
  else if (cmd === 'register') await register();
  else if (cmd === 'locked') await locked();
  else throw new Error(`unknown step ${cmd}`);
} catch (e) {
  console.error(`setup ${cmd}: ${e.message}`);
  process.exit(1);
}
