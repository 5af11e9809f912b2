// Generic per-collection clinical tables: a deterministic choice of concepts
// (with names, renderings and missing values) for the collection's kind.

import { prng, type PlannedCollection } from '../plan.ts';
import { col, histRendering, patientRows, withMissing, type ColumnSpec, type TableSpec } from './columns.ts';
import { CONCEPTS } from './concepts.ts';
import { kindOf } from './kinds.ts';


export function genericTable(c: PlannedCollection, short: string, seed: number): TableSpec {
  const rnd = prng(`clinical:${seed}:${short}`);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const k = kindOf(c);
  const isHuman = c.species === 'Human';
  const used = new Set<string>(['dicom_patient_id', 'source_batch']);
  const columns: ColumnSpec[] = [];
  const take = (names: string[]): string | null => {
    const free = names.filter((n) => !used.has(n.toLowerCase()));
    if (free.length === 0) return null;
    const n = pick(free);
    used.add(n.toLowerCase());
    return n;
  };
  if (rnd() < 0.4) {
    const n = take(['Case_ID', 'PatientID', 'subject_id', 'record_id', 'Patient_ID', 'case_submitter_id', 'Subject'])!;
    columns.push(col(n, 'Patient identifier in the source data', 'VARCHAR', 'PatientID'));
  }
  const applicable = CONCEPTS.filter((x) => (x.when ? x.when(k, isHuman) : true));
  const head = applicable.filter((x) => x.key === 'age' || x.key === 'sex');
  const rest = applicable.filter((x) => x.key !== 'age' && x.key !== 'sex');
  // Shuffle the rest deterministically, then keep each with its chance.
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  const maxCols = 4 + Math.floor(rnd() * 14);
  // A collection of one sex (all of its patients with a known sex share it) states it less often.
  const oneSex = c.sex.filter(([v]) => v === 'M' || v === 'F').length === 1;
  const chosen = [...head.filter((x) => rnd() < (x.key === 'sex' && oneSex ? 0.6 : x.p)), ...rest.filter((x) => rnd() < x.p).slice(0, maxCols)];
  for (const concept of chosen) {
    const rendering = concept.key === 'hist' ? histRendering(k, rnd() < 0.3 ? 1 : 0) : pick(concept.renderings);
    const name = take(rendering.names ?? concept.names);
    if (!name) continue;
    const spec: ColumnSpec = { name, label: rendering.label ?? concept.label, type: rendering.type, expr: rendering.expr, codes: rendering.codes };
    const miss = rnd() < 0.5 ? 0 : Math.round(rnd() * 80) / 1000;
    columns.push(withMissing(spec, miss));
  }
  const coverage = 0.85 + Math.round(rnd() * 15) / 100;
  return { coll: c, short, rows: patientRows(c, short, coverage), columns };
}
