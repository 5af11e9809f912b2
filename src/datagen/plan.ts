// The dataset plan: every collection and analysis result of the release
// profile, with the number of patients at the requested scale (at least one,
// so every collection exists at every scale) and the share of source series
// each analysis result derives objects from. Small and computed in JS; the
// bulk rows are generated from it in SQL.

import { loadProfile, PID_CLASSES, type AnalysisResultPart, type AnalysisResultProfile, type CollectionProfile, type ReleaseProfile, type StudySignature } from './profile.ts';
import { IMAGE_MODALITIES } from './vocab.ts';

/** Modalities whose objects point to an image series (seg_index, ann_index, rtstruct_index). */
export const REFERENCING = ['SEG', 'RTSTRUCT', 'ANN'];

/** sfc32 seeded from a string: small, fast, deterministic. */
export function prng(seed: string): () => number {
  let h = 1779033703 ^ seed.length;
  for (let i = 0; i < seed.length; i++) {
    h = Math.imul(h ^ seed.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  const next = () => {
    h = Math.imul(h ^ (h >>> 16), 2246822507);
    h = Math.imul(h ^ (h >>> 13), 3266489909);
    return (h ^= h >>> 16) >>> 0;
  };
  let a = next(),
    b = next(),
    c = next(),
    d = next();
  return () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

export interface PlannedCollection extends CollectionProfile {
  idx: number;
  nPatients: number;
  /** PatientID template, widened when the real one has too few free positions for this many patients. */
  pidTemplate: string;
  /** Offset added to the patient number so collections sharing a template never share a PatientID. */
  pidOffset: number;
  /** Two four-digit groups of the collection's TCIA-style UIDs. */
  uidGroup: [number, number];
}

export interface PlannedPart extends AnalysisResultPart {
  partIdx: number;
  arIdx: number;
  collIdx: number;
  /** Share of the source series that get derived objects of this result. */
  coverage: number;
  /** Derived series of this part per covered source series. */
  perCovered: number;
}

export interface PlannedAnalysisResult extends Omit<AnalysisResultProfile, 'parts'> {
  idx: number;
  parts: PlannedPart[];
}

export interface Plan {
  seed: number;
  scale: number;
  profile: ReleaseProfile;
  collections: PlannedCollection[];
  analysisResults: PlannedAnalysisResult[];
  /** Release the dataset imitates (the profile's). */
  currentVersion: number;
}

/**
 * Ratio r of a geometric count 1 + G (P(G >= k) = r^k) capped at `cap`, whose
 * mean is `mean`: the capped mean is 1 + r(1 - r^(cap-1)) / (1 - r), solved by
 * bisection (the uncapped formula would fall short of the real mean).
 */
export function geometricRatio(mean: number, cap: number): number {
  if (cap <= 1 || mean <= 1.0001) return 0;
  if (mean >= cap - 1e-6) return 1;
  const capped = (r: number) => 1 + (r * (1 - Math.pow(r, cap - 1))) / (1 - r);
  let lo = 0;
  let hi = 1 - 1e-12;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (capped(mid) < mean) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Number of distinct identifiers a PatientID template can produce. */
export function pidCapacity(template: string): number {
  let n = 1;
  for (const ch of template) n *= PID_CLASSES[ch]?.length ?? 1;
  return n;
}

/**
 * A signature whose segmentations or structure sets have no image series in
 * their study gets one of the collection's most common image modality, so
 * every such object references an image of its own study.
 */
function withImage(sig: StudySignature, c: CollectionProfile): StudySignature {
  if (!sig.mods.some((m) => REFERENCING.includes(m)) || sig.mods.some((m) => IMAGE_MODALITIES.includes(m))) return sig;
  const image = Object.entries(c.modalities)
    .filter(([m]) => IMAGE_MODALITIES.includes(m))
    .sort((a, b) => b[1].series - a[1].series)[0]?.[0];
  if (!image) return sig;
  return { ...sig, mods: [...sig.mods, image].sort(), per: { ...sig.per, [image]: 1 }, max: { ...sig.max, [image]: 1 } };
}

export function makePlan(scale: number, seed: number, profile: ReleaseProfile = loadProfile()): Plan {
  if (!(scale > 0 && scale <= 4)) throw new Error(`scale must be in (0, 4]; got ${scale}`);
  const rnd = prng(`plan:${seed}`);
  const offsets = new Map<string, number>();
  const collections: PlannedCollection[] = profile.collections.map((c, idx) => {
    const nPatients = Math.max(1, Math.round(c.patients * scale));
    let pidTemplate = c.pid;
    const offset = offsets.get(pidTemplate) ?? 0;
    while (pidCapacity(pidTemplate) < (offset + nPatients) * 4) pidTemplate += '#';
    offsets.set(c.pid, offset + nPatients);
    // A collection kept at one patient below its share (tiny scales) gets
    // proportionally fewer studies, so phantoms with a thousand scans of one
    // subject do not swamp a small dataset.
    const studyScale = Math.min(1, (c.patients * scale) / nPatients);
    return {
      ...c,
      studies_per_patient: {
        mean: Math.max(1, c.studies_per_patient.mean * studyScale),
        max: Math.max(1, Math.ceil(c.studies_per_patient.max * studyScale)),
      },
      signatures: c.signatures.map((sig) => withImage(sig, c)),
      idx,
      nPatients,
      pidTemplate,
      pidOffset: pidTemplate === c.pid ? offset : 0,
      uidGroup: [1000 + Math.floor(rnd() * 9000), 1000 + Math.floor(rnd() * 9000)],
    };
  });
  const collIdx = new Map(collections.map((c) => [c.id, c.idx]));
  let partIdx = 0;
  const analysisResults: PlannedAnalysisResult[] = profile.analysis_results.map((a, idx) => {
    // Parts sharing a source (e.g. one SEG and two SR per CT) cover the same source series.
    const coverage = new Map<string, number>();
    for (const p of a.parts) {
      const k = `${p.collection}/${p.source}`;
      coverage.set(k, Math.max(coverage.get(k) ?? 0, Math.min(1, p.series / Math.max(1, p.source_series))));
    }
    const parts = a.parts
      .filter((p) => collIdx.has(p.collection))
      .map((p) => {
        const cov = coverage.get(`${p.collection}/${p.source}`)!;
        return { ...p, partIdx: partIdx++, arIdx: idx, collIdx: collIdx.get(p.collection)!, coverage: cov, perCovered: p.series / Math.max(1, p.source_series) / cov };
      });
    return { ...a, idx, parts };
  });
  return { seed, scale, profile, collections, analysisResults, currentVersion: profile.release.idc_version };
}
