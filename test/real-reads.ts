// Readers shared by the real-release tests: SQL over the release's own files
// (the reference) and JSON over the served routes (the answer), each with the
// status checked and the body shown when it is not the one expected.

import assert from 'node:assert/strict';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { TestServer } from './fixture.ts';

export type Row = Record<string, unknown>;

/** Rows and single values of SQL on a connection set up later (in `before`). */
export function sqlReads(conn: () => DuckDBConnection) {
  const rows = async (sql: string): Promise<Row[]> => (await conn().runAndReadAll(sql)).getRowObjectsJson() as Row[];
  const scalar = async (sql: string): Promise<number> => Number(Object.values((await rows(sql))[0]!)[0]);
  const list = async (sql: string): Promise<unknown[]> => (await rows(sql)).map((r) => Object.values(r)[0]);
  return { rows, scalar, list };
}

/** GET and POST of JSON on a server started later, asserting the status. */
export function jsonReads(server: () => TestServer) {
  async function get<T = Row>(path: string, status = 200): Promise<T> {
    const r = await server().get(path);
    const body = (await r.json()) as T;
    assert.equal(r.status, status, `${path}: ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  }
  async function post<T = Row>(path: string, body: unknown, status = 200): Promise<T> {
    const r = await server().post(path, body);
    const out = (await r.json()) as T;
    assert.equal(r.status, status, `${path}: ${JSON.stringify(out).slice(0, 300)}`);
    return out;
  }
  return { get, post };
}
