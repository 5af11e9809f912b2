// Realism of the generated default: the checks of realism-checks.ts (what
// published IDC queries rely on, and invariants across tables) on the built
// test database, and the plan at scale 1.0 against the real release's own totals.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { testDataset } from './fixture.ts';
import { CHECKS, type Db } from './realism-checks.ts';
import { makePlan } from '../src/datagen/plan.ts';

let inst: DuckDBInstance;
let c: DuckDBConnection;
const db: Db = {
  rows: async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[],
  scalar: async (sql) => Number(Object.values(((await c.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[])[0]!)[0]),
};

before(async () => {
  inst = await DuckDBInstance.create((await testDataset()).db, { access_mode: 'READ_ONLY' });
  c = await inst.connect();
});
after(() => {
  c.closeSync();
  inst.closeSync();
});

for (const check of CHECKS) test(check.name, () => check.run(db));

test('scale 1.0 plans the real release: its patients in 179 collections and 26 analysis results', () => {
  const plan = makePlan(1, 42);
  assert.equal(plan.collections.length, 179);
  assert.equal(plan.analysisResults.length, 26);
  // v25 counts 86,451 patients collection by collection (86,362 distinct PatientIDs: 89 appear in two collections).
  assert.equal(plan.collections.reduce((s, c) => s + c.nPatients, 0), 86451);
});
