// The client side of the CLI (idqs download) must not load the engine or the
// server: it starts in a fraction of a second and runs where DuckDB is not
// wanted. A module-resolution hook reports what the process loads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testDataset } from './fixture.ts';

const CLI = fileURLToPath(new URL('../bin/idqs.cjs', import.meta.url));

function loadedHeavy(args: string[]): { status: number | null; stdout: string; loaded: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'idqs-hook-'));
  try {
    const hook = join(dir, 'hook.mjs');
    const resolveHook = `export async function resolve(s, c, next) { const r = await next(s, c); if (/@duckdb|\\/fastify\\/|@modelcontextprotocol/.test(r.url)) process.stderr.write('LOADED ' + r.url + '\\n'); return r; }`;
    writeFileSync(hook, `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent(${JSON.stringify(resolveHook)}));\n`);
    const r = spawnSync(process.execPath, ['--import', hook, CLI, ...args], { encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, loaded: r.stderr.split('\n').filter((l) => l.startsWith('LOADED ')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('idqs download loads neither DuckDB, Fastify nor the MCP SDK; idqs sql does load DuckDB (the hook sees it)', async () => {
  const dl = loadedHeavy(['download', '--help']);
  assert.equal(dl.status, 0);
  assert.match(dl.stdout, /Usage: idqs download/);
  assert.deepEqual(dl.loaded, []);
  const { db } = await testDataset();
  const sql = loadedHeavy(['sql', 'SELECT 1 AS one', '--db', db, '--format', 'json']);
  assert.equal(sql.status, 0);
  assert.match(sql.stdout, /"one"/);
  assert.ok(sql.loaded.some((l) => l.includes('@duckdb')), 'the control run loads DuckDB');
});
