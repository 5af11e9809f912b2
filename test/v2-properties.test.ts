// Property test of /v2 previews: random filter sets drawn from the real
// values of the test dataset (with random casing, wildcards, ranges and TCGA
// attributes); totalFound and the counts must equal SQL written here,
// independently, over the instance-level view v2.dicom_pivot.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './fixture.ts';
import { lit } from './sql-text.ts';

let s: TestServer;
const STRING_ATTRS = ['collection_id', 'Modality', 'BodyPartExamined', 'Manufacturer'] as const;
const values = new Map<string, string[]>();
let races: string[] = [];
let thickness = { min: 0, max: 10 };

before(async () => {
  s = await startServer();
  for (const a of STRING_ATTRS) {
    const rows = await s.ctx.engine.rows(`SELECT DISTINCT "${a}" AS v FROM v2.dicom_pivot WHERE "${a}" IS NOT NULL ORDER BY 1`);
    values.set(a, rows.map((r) => String(r.v)));
  }
  races = (await s.ctx.engine.rows('SELECT DISTINCT race AS v FROM v2.tcga_clinical_rel9 WHERE race IS NOT NULL ORDER BY 1')).map((r) => String(r.v));
  const t = await s.ctx.engine.one('SELECT min(SliceThickness) AS lo, max(SliceThickness) AS hi FROM v2.dicom_pivot');
  thickness = { min: Number(t!.lo), max: Number(t!.hi) };
});
after(async () => {
  await s.close();
});


interface Case {
  filters: Record<string, (string | number)[]>;
  /** The same selection as SQL conditions over dicom_pivot `p`. */
  where: string[];
}

/** A value as a client might send it: another casing, or a prefix/suffix pattern. */
function variant(v: string): fc.Arbitrary<{ sent: string; cond: (col: string) => string }> {
  return fc.constantFrom('same', 'upper', 'lower', 'prefix', 'suffix').map((how) => {
    switch (how) {
      case 'upper':
        return { sent: v.toUpperCase(), cond: (c) => `lower(${c}) = lower(${lit(v)})` };
      case 'lower':
        return { sent: v.toLowerCase(), cond: (c) => `lower(${c}) = lower(${lit(v)})` };
      case 'prefix': {
        const p = v.slice(0, Math.max(1, Math.ceil(v.length / 2))).replace(/[%_\\]/g, '');
        return { sent: `${p}%`, cond: (c) => `starts_with(lower(${c}), lower(${lit(p)}))` };
      }
      case 'suffix': {
        const p = v.slice(Math.floor(v.length / 2)).replace(/[%_\\]/g, '');
        return { sent: `%${p}`, cond: (c) => `ends_with(lower(${c}), lower(${lit(p)}))` };
      }
      default:
        return { sent: v, cond: (c) => `lower(${c}) = lower(${lit(v)})` };
    }
  });
}

function stringFilter(attr: string, pool: string[], col: string): fc.Arbitrary<Case> {
  return fc
    .uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 3 })
    .chain((vs) => fc.tuple(...vs.map(variant)))
    .map((vs) => {
      const norm = attr === 'collection_id';
      return {
        filters: { [attr]: vs.map((v) => v.sent) },
        where: [`(${vs.map((v) => v.cond(norm ? col : col)).join(' OR ')})`],
      };
    });
}

function rangeFilter(): fc.Arbitrary<Case> {
  const point = fc.double({ min: thickness.min, max: thickness.max, noNaN: true, noDefaultInfinity: true }).map((x) => Math.round(x * 100) / 100);
  const ops: Record<string, [string, string?]> = { eq: ['='], gt: ['>'], gte: ['>='], lt: ['<'], lte: ['<='], btw: ['>', '<'], ebtw: ['>=', '<'], btwe: ['>', '<='], ebtwe: ['>=', '<='] };
  return fc.tuple(fc.constantFrom(...Object.keys(ops)), point, point).map(([suffix, a, b]) => {
    const [lo, hi] = ops[suffix]!;
    const [x, y] = a <= b ? [a, b] : [b, a];
    if (!hi) return { filters: { [`SliceThickness_${suffix}`]: [a] }, where: [`p.SliceThickness ${lo} ${a}`] };
    return { filters: { [`SliceThickness_${suffix}`]: [x, y] }, where: [`p.SliceThickness ${lo} ${x} AND p.SliceThickness ${hi} ${y}`] };
  });
}

function raceFilter(): fc.Arbitrary<Case> {
  return fc.uniqueArray(fc.constantFrom(...races), { minLength: 1, maxLength: 2 }).map((rs) => ({
    filters: { RACE: rs.map((r) => r.toLowerCase()) },
    where: [`p.PatientID IN (SELECT case_barcode FROM v2.tcga_clinical_rel9 WHERE upper(race) IN (${rs.map(lit).join(', ')}))`],
  }));
}

function caseArb(): fc.Arbitrary<Case> {
  const parts = [
    ...STRING_ATTRS.map((a) => stringFilter(a, values.get(a)!, `p."${a}"`)),
    rangeFilter(),
    raceFilter(),
  ];
  return fc.subarray(parts, { minLength: 1, maxLength: 3 }).chain((chosen) =>
    fc.tuple(...chosen).map((cs) => ({ filters: Object.assign({}, ...cs.map((c) => c.filters)), where: cs.flatMap((c) => c.where) })),
  );
}

const LEVELS: { fields: string[]; key: string | null; counts: string[] }[] = [
  { fields: ['SeriesInstanceUID'], key: 'SeriesInstanceUID', counts: ['instance_count'] },
  { fields: ['StudyInstanceUID'], key: 'StudyInstanceUID', counts: ['instance_count', 'series_count'] },
  { fields: ['collection_id', 'PatientID'], key: 'collection_id, PatientID', counts: ['instance_count', 'series_count', 'study_count'] },
  { fields: [], key: null, counts: ['instance_count', 'series_count', 'study_count', 'patient_count', 'collection_count'] },
];

test('totalFound and counts equal independent SQL over dicom_pivot for random filter sets', async () => {
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(caseArb(), fc.constantFrom(...LEVELS), async (c, level) => {
      const r = await s.post('/v2/cohorts/manifest/preview', { cohort_def: { filters: c.filters }, fields: level.fields, counts: true, group_size: true, page_size: 100000 });
      const j = (await r.json()) as { manifest: { manifest_data: Record<string, unknown>[]; totalFound: number } };
      assert.equal(r.status, 200, JSON.stringify(j));
      const where = c.where.join(' AND ');
      const aggs = `count(*)::BIGINT AS instance_count, count(DISTINCT p.SeriesInstanceUID)::BIGINT AS series_count,
        count(DISTINCT p.StudyInstanceUID)::BIGINT AS study_count, count(DISTINCT p.PatientID)::BIGINT AS patient_count,
        count(DISTINCT p.collection_id)::BIGINT AS collection_count, coalesce(sum(p.instance_size), 0)::BIGINT AS group_size`;
      const sql = level.key
        ? `SELECT ${level.key}, ${aggs} FROM v2.dicom_pivot p WHERE ${where} GROUP BY ${level.key} ORDER BY ${level.key}`
        : `SELECT ${aggs} FROM v2.dicom_pivot p WHERE ${where}`;
      const expected = await s.ctx.engine.rows(sql);
      assert.equal(j.manifest.totalFound, expected.length);
      const keep = [...level.fields, ...level.counts, 'group_size'];
      const trimmed = expected.map((row) => Object.fromEntries(keep.map((k) => [k, row[k]])));
      assert.deepEqual(j.manifest.manifest_data, trimmed, JSON.stringify(c.filters));
      if (Number(expected[0]?.instance_count ?? 0) > 0) nonEmpty++;
    }),
    { numRuns: 40, seed: 20261122 },
  );
  assert.ok(nonEmpty >= 10, `the random filter sets select something often enough (${nonEmpty} of 40)`);
});
