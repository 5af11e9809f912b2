// The downloader's table of series already planned (src/download/seen-set.ts)
// against a plain Set of the same keys: series folders (UUIDs, whose 128 bits
// are the key), object keys (hashed) and repeats, through several growths of
// the table.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { SeenSet } from '../src/download/seen-set.ts';

test('SeenSet answers has/add as a Set of the same keys, across growths and a clear', () => {
  const uuids: string[] = Array.from({ length: 20_000 }, () => randomUUID());
  // UUIDs that differ from another in one hex digit only, in each of the four 32-bit words.
  for (const pos of [0, 11, 20, 35]) {
    const u = uuids[pos]!;
    uuids.push(u.slice(0, pos) + (u[pos] === '0' ? '1' : '0') + u.slice(pos + 1));
  }
  uuids.push('00000000-0000-0000-0000-000000000000');
  const objects = uuids.slice(0, 500).map((u, i) => `idc-open-data/${u}/${i}.dcm`);
  const keys = [...uuids, ...objects, 'ABCDEF01-0000-0000-0000-000000000000', 'not a uuid'];
  const seen = new SeenSet(8);
  for (let pass = 0; pass < 2; pass++) {
    const ref = new Set<string>();
    // Every key twice, in an order that mixes first sightings and repeats.
    const order = [...keys, ...keys].map((k, i) => ({ k, r: (i * 7919) % 1_000_003 })).sort((a, b) => a.r - b.r).map((x) => x.k);
    for (const k of order) {
      assert.equal(seen.has(k), ref.has(k), `has(${k}) on pass ${pass}`);
      assert.equal(seen.add(k), !ref.has(k), `add(${k}) on pass ${pass}`);
      ref.add(k);
    }
    assert.equal(seen.size, ref.size);
    // Keys never added are absent.
    for (let i = 0; i < 2000; i++) assert.equal(seen.has(randomUUID()), false);
    assert.equal(seen.has('idc-open-data/other'), false);
    seen.clear();
    assert.equal(seen.size, 0);
    assert.equal(seen.has(keys[0]!), false);
  }
});
