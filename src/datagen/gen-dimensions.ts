// Dimension tables of the generation, loaded from the plan: collections with
// their demographic and date distributions and PatientID formats, study
// signatures (which modalities a study holds, how many series of each), and
// one series profile per (collection, modality) and per analysis-result part.

import { valuesTable, type Lit } from '../core/data/sql.ts';
import { weights, type GenContext } from './context.ts';
import { geometricRatio, type PlannedCollection } from './plan.ts';
import { PID_CLASSES, type SeriesProfile } from './profile.ts';

/** Largest number of PatientIDs one template enumerates (keeps the arithmetic in 64 bits). */
const PID_SPAN = 1e15;

/** PatientID slots, right to left: literal characters, or an alphabet with the divisor of its digit. */
export function pidSlots(c: PlannedCollection): { slots: { lit: string; div: string; alpha: string }[]; m: string; add: string } {
  const out: { lit: string; div: string; alpha: string }[] = [];
  let span = 1n;
  let h = 0;
  for (const ch of c.pidTemplate) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  for (const ch of [...c.pidTemplate].reverse()) {
    const alpha = PID_CLASSES[ch];
    if (!alpha) {
      out.unshift({ lit: ch, div: '1', alpha: '' });
    } else if (Number(span) * alpha.length <= PID_SPAN) {
      out.unshift({ lit: '', div: String(span), alpha });
      span *= BigInt(alpha.length);
    } else {
      // Positions beyond the span are fixed per template.
      h = (h * 1103515245 + 12345) >>> 0;
      out.unshift({ lit: alpha[h % alpha.length]!, div: '1', alpha: '' });
    }
  }
  return { slots: out, m: String(span), add: String(BigInt(h) % span) };
}

function seriesProfileRow(id: number, p: SeriesProfile, doi: string | null): Lit[] {
  const w = weights;
  const desc = w(p.descriptions);
  const eq = w(p.equipment);
  const sop = w(p.sop);
  const ts = w(p.transfer_syntaxes);
  const pi = w(p.photometric);
  const pr = w(p.pixel_representation);
  const iv = w(p.init_versions);
  const lic = w(p.licenses);
  const bp = w(p.body_parts);
  const bpNull = p.body_parts.filter(([v]) => v === null).reduce((s, [, x]) => s + x, 0) / (p.body_parts.reduce((s, [, x]) => s + x, 0) || 1);
  return [
    id, p.instances.q, p.instances.adj, p.mb_per_instance.q, p.mb_per_instance.adj, desc.vals, desc.cum,
    eq.vals.map((e) => e[0]), eq.vals.map((e) => e[1]), eq.cum, sop.vals, sop.cum, ts.vals, ts.cum, pi.vals, pi.cum, pr.vals, pr.cum,
    p.series_date_null, iv.vals, iv.cum, lic.vals.map((l) => l[0]), lic.vals.map((l) => l[1]), lic.cum, bp.vals, bp.cum, bpNull, doi,
  ];
}

const SPROF_COLUMNS: [string, string][] = [
  ['prof_id', 'INTEGER'], ['inst_q', 'DOUBLE[]'], ['inst_adj', 'DOUBLE'], ['b_q', 'DOUBLE[]'], ['b_adj', 'DOUBLE'],
  ['desc_vals', 'VARCHAR[]'], ['desc_cum', 'DOUBLE[]'], ['eq_man', 'VARCHAR[]'], ['eq_model', 'VARCHAR[]'], ['eq_cum', 'DOUBLE[]'],
  ['sop_vals', 'VARCHAR[]'], ['sop_cum', 'DOUBLE[]'], ['ts_vals', 'VARCHAR[]'], ['ts_cum', 'DOUBLE[]'], ['pi_vals', 'VARCHAR[]'], ['pi_cum', 'DOUBLE[]'],
  ['pr_vals', 'VARCHAR[]'], ['pr_cum', 'DOUBLE[]'], ['sdate_null', 'DOUBLE'], ['iv_vals', 'BIGINT[]'], ['iv_cum', 'DOUBLE[]'],
  ['lic_vals', 'VARCHAR[]'], ['lic_buckets', 'VARCHAR[]'], ['lic_cum', 'DOUBLE[]'], ['bp_vals', 'VARCHAR[]'], ['bp_cum', 'DOUBLE[]'],
  ['bp_null', 'DOUBLE'], ['doi', 'VARCHAR'],
];

/** DOI of the collection's source that covers a modality (e.g. slides converted separately from the radiology). */
function sourceDoi(c: PlannedCollection, modality: string): string | null {
  const has = (s: { modalities: string }) => (s.modalities ?? '').split(/,\s*/).includes(modality);
  return (c.sources.find(has) ?? c.sources[0])?.doi ?? null;
}

export async function loadDimensions(ctx: GenContext): Promise<void> {
  const { plan, run } = ctx;
  await run(
    valuesTable(
      'coll',
      [
        ['idx', 'INTEGER'], ['collection_id', 'VARCHAR'], ['collection_name', 'VARCHAR'], ['cancer_types', 'VARCHAR'], ['tumor_locations', 'VARCHAR'],
        ['species', 'VARCHAR'], ['program', 'VARCHAR'], ['n_patients', 'BIGINT'], ['pid_lits', 'VARCHAR[]'], ['pid_divs', 'BIGINT[]'], ['pid_alphas', 'VARCHAR[]'],
        ['pid_m', 'BIGINT'], ['pid_add', 'BIGINT'], ['pid_offset', 'BIGINT'], ['sex_vals', 'VARCHAR[]'], ['sex_cum', 'DOUBLE[]'],
        ['age_null', 'DOUBLE'], ['age_mean', 'DOUBLE'], ['age_sd', 'DOUBLE'], ['date_null', 'DOUBLE'], ['year_lo', 'INTEGER'], ['year_hi', 'INTEGER'],
        ['spp_r', 'DOUBLE'], ['spp_max', 'INTEGER'], ['stdesc_vals', 'VARCHAR[]'], ['stdesc_cum', 'DOUBLE[]'], ['revised', 'DOUBLE'], ['prior', 'DOUBLE'],
        ['sig_cum', 'DOUBLE[]'], ['n_sigs', 'INTEGER'], ['uid_style', 'VARCHAR'], ['c4a', 'VARCHAR'], ['c4b', 'VARCHAR'],
      ],
      plan.collections.map((c) => {
        const pid = pidSlots(c);
        const sex = weights(c.sex);
        const sd = weights(c.study_descriptions);
        const sig = weights(c.signatures.map((s) => [s, s.share] as [unknown, number]));
        return [
          c.idx, c.id, c.name, c.cancer_types, c.tumor_locations, c.species, c.program, c.nPatients,
          pid.slots.map((s) => s.lit), pid.slots.map((s) => s.div), pid.slots.map((s) => s.alpha),
          pid.m, pid.add, c.pidOffset, sex.vals, sex.cum, c.age.null, c.age.mean, c.age.sd, c.dates.null, c.dates.years[0], c.dates.years[1],
          geometricRatio(c.studies_per_patient.mean, Math.min(2047, c.studies_per_patient.max)), Math.min(2047, c.studies_per_patient.max), sd.vals, sd.cum, c.revised, c.prior, sig.cum, c.signatures.length,
          c.id === 'nlst' ? 'nlst' : 'tcia', String(c.uidGroup[0]), String(c.uidGroup[1]),
        ];
      }),
    ),
  );
  await run(
    valuesTable(
      'sig_mod',
      [['idx', 'INTEGER'], ['sig_no', 'INTEGER'], ['item', 'INTEGER'], ['modality', 'VARCHAR'], ['per_r', 'DOUBLE'], ['max', 'INTEGER']],
      plan.collections.flatMap((c) =>
        c.signatures.flatMap((s, sigNo) =>
          s.mods.map((m, item) => {
            const cap = Math.min(256, s.max[m] ?? 1);
            return [c.idx, sigNo, item, m, geometricRatio(s.per[m] ?? 1, cap), cap];
          }),
        ),
      ),
    ),
  );
  // Series profiles: one per (collection, modality), then one per analysis-result part.
  const profRows: Lit[][] = [];
  const cmod: Lit[][] = [];
  for (const c of plan.collections) {
    for (const [m, p] of Object.entries(c.modalities)) {
      cmod.push([c.idx, m, profRows.length]);
      profRows.push(seriesProfileRow(profRows.length, p, sourceDoi(c, m)));
    }
  }
  const parts: Lit[][] = [];
  for (const a of plan.analysisResults) {
    for (const p of a.parts) {
      parts.push([p.partIdx, a.idx, p.collIdx, p.modality, p.source, p.coverage, p.perCovered, profRows.length]);
      profRows.push(seriesProfileRow(profRows.length, p, a.doi));
    }
  }
  await run(valuesTable('sprof', SPROF_COLUMNS, profRows));
  await run(valuesTable('cmod', [['idx', 'INTEGER'], ['modality', 'VARCHAR'], ['prof_id', 'INTEGER']], cmod));
  await run(
    valuesTable(
      'ar_part',
      [['part_idx', 'INTEGER'], ['ar_idx', 'INTEGER'], ['idx', 'INTEGER'], ['modality', 'VARCHAR'], ['source', 'VARCHAR'], ['coverage', 'DOUBLE'],
        ['per_covered', 'DOUBLE'], ['prof_id', 'INTEGER']],
      parts,
    ),
  );
  await run(
    valuesTable(
      'ar',
      [['ar_idx', 'INTEGER'], ['analysis_result_id', 'VARCHAR'], ['title', 'VARCHAR'], ['doi', 'VARCHAR'], ['url', 'VARCHAR'], ['license', 'VARCHAR'],
        ['updated', 'VARCHAR']],
      plan.analysisResults.map((a) => [a.idx, a.id, a.title, a.doi, a.url, a.license, a.updated]),
    ),
  );
  await run(
    valuesTable(
      'lic',
      [['license_short_name', 'VARCHAR'], ['long_name', 'VARCHAR'], ['url', 'VARCHAR']],
      plan.profile.licenses.map((l) => [l.short, l.long, l.url]),
    ),
  );
}
