// The dataset plan: which collections and analysis results exist at a given
// scale and seed, and how many patients each has. Small, computed in JS with a
// seeded PRNG; the bulk rows are generated from it in SQL.

import {
  REAL_ANALYSIS_RESULTS,
  REAL_COLLECTIONS,
  SEGMENT_PROPERTIES,
  SYNTHETIC_PROFILES,
  SYNTHETIC_WORDS,
  type AnalysisResultSpec,
  type RealCollection,
} from './catalog.ts';

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

export interface PlannedCollection extends RealCollection {
  idx: number;
  synthetic: boolean;
  nPatients: number;
  /** Offset added to the patient index so patterns shared by collections stay unique. */
  pidOffset: number;
  bucket: string;
  /** Second license used for slide-microscopy series of multi-license collections. */
  smLicense: string | null;
  uidGroup: [number, number];
}

export interface PlannedAnalysisResult extends AnalysisResultSpec {
  idx: number;
  synthetic: boolean;
  /** Resolved source collections present in this dataset. */
  collections: string[];
}

export interface Plan {
  seed: number;
  scale: number;
  collections: PlannedCollection[];
  analysisResults: PlannedAnalysisResult[];
  currentVersion: number;
}

export const CURRENT_VERSION = 24;
export const PATIENTS_AT_SCALE_1 = 80_000;

/** Bucket of a series in the primary store: restricted licenses and head scans have their own. */
export function bucketFor(license: string, head: boolean | undefined): string {
  if (license.includes('NC')) return 'idc-open-data-cr';
  return head ? 'idc-open-data-two' : 'idc-open-data';
}

function slug(words: string[]): string {
  return words.join('_').toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

export function makePlan(scale: number, seed: number): Plan {
  if (!(scale > 0 && scale <= 4)) throw new Error(`scale must be in (0, 4]; got ${scale}`);
  const rnd = prng(`plan:${seed}`);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const targetPatients = Math.max(60, Math.round(PATIENTS_AT_SCALE_1 * scale));

  // Synthetic collections fill the corpus up to ~190 at scale 1, fewer below.
  const nSynthetic = Math.round(148 * Math.min(1, Math.sqrt(scale)));
  const synth: RealCollection[] = [];
  const used = new Set(REAL_COLLECTIONS.map((c) => c.id));
  for (let i = 0; synth.length < nSynthetic; i++) {
    const prof = pick(SYNTHETIC_PROFILES);
    const words = [pick(SYNTHETIC_WORDS), pick(SYNTHETIC_WORDS)];
    if (words[0] === words[1]) continue;
    if (rnd() < 0.4) words.push(String(1 + Math.floor(rnd() * 9)));
    const name = words.join('-');
    const id = slug(words);
    if (used.has(id)) continue;
    used.add(id);
    const y0 = 1995 + Math.floor(rnd() * 20);
    const nc = rnd() < 0.06;
    const supporting = rnd() < 0.7 ? (rnd() < 0.3 ? 'Clinical, Genomics' : 'Clinical') : rnd() < 0.5 ? 'Image Analyses' : null;
    synth.push({
      id,
      name,
      cancer: prof.cancer,
      location: prof.location,
      species: prof.cancer === 'Phantom' ? 'Phantom' : 'Human',
      program: pick(['Community', 'Community', 'Community', 'QIN', 'NCI Trials', 'ACRIN', 'HTAN', 'CCDI']),
      doi: `10.7937/idqs.${id.replaceAll('_', '-')}`,
      license: nc ? pick(['CC BY-NC 4.0', 'CC BY-NC 3.0']) : rnd() < 0.7 ? 'CC BY 4.0' : 'CC BY 3.0',
      patients: Math.max(3, Math.round(Math.exp(5.0 + 1.1 * gaussian(rnd)))),
      profile: prof.profile,
      supporting: supporting ?? undefined,
      pid: `${words.map((w) => w.replace(/[^A-Za-z0-9]/g, '').slice(0, 4).toUpperCase()).join('-')}-{n4}`,
      head: prof.head,
      sex: prof.sex,
      years: [y0, Math.min(2025, y0 + 2 + Math.floor(rnd() * 8))],
      since: 1 + Math.floor(Math.pow(rnd(), 0.7) * CURRENT_VERSION),
    });
  }

  const all = [...REAL_COLLECTIONS, ...synth];
  const rawTotal = all.reduce((s, c) => s + c.patients, 0);
  const k = targetPatients / rawTotal;
  const offsets = new Map<string, number>();
  const collections: PlannedCollection[] = all.map((c, idx) => {
    const nPatients = Math.max(1, Math.round(c.patients * k));
    const pidOffset = offsets.get(c.pid) ?? 0;
    offsets.set(c.pid, pidOffset + nPatients);
    const hasSm = (c.profile.sm ?? 0) > 0;
    // Multi-license collections: slides under a newer license than the radiology.
    const smLicense = hasSm && c.license === 'CC BY 3.0' && (c.program === 'TCGA' || c.program === 'CPTAC') ? 'CC BY 4.0' : null;
    return {
      ...c,
      years: c.years ?? [2000 + (idx % 15), 2005 + (idx % 15)],
      since: c.since ?? 1,
      idx,
      synthetic: idx >= REAL_COLLECTIONS.length,
      nPatients,
      pidOffset,
      bucket: bucketFor(c.license, c.head),
      smLicense,
      uidGroup: [1000 + Math.floor(rnd() * 9000), 1000 + Math.floor(rnd() * 9000)],
    };
  });

  const present = new Set(collections.map((c) => c.id));
  const resolve = (sources: string[]) =>
    sources.flatMap((s) => (s.endsWith('*') ? collections.filter((c) => c.id.startsWith(s.slice(0, -1))).map((c) => c.id) : present.has(s) ? [s] : []));

  const nSynthAr = Math.round(21 * Math.min(1, Math.sqrt(scale)));
  const synthAr: AnalysisResultSpec[] = [];
  const arIds = new Set(REAL_ANALYSIS_RESULTS.map((a) => a.id));
  while (synthAr.length < nSynthAr) {
    const src = collections.filter((c) => c.synthetic || rnd() < 0.1);
    const chosen = [pick(src), pick(src)].map((c) => c.id);
    const radiology = rnd() < 0.85;
    const modality = radiology ? pick(['CT', 'CT', 'MR', 'PT']) : 'SM';
    const words = [pick(SYNTHETIC_WORDS), pick(['Segmentations', 'Annotations', 'AI-Labels', 'Contours'])];
    const id = slug(words);
    if (arIds.has(id)) continue;
    arIds.add(id);
    const props = SEGMENT_PROPERTIES.filter(() => rnd() < 0.3);
    synthAr.push({
      id,
      title: `${words.join(' ')} for ${chosen.join(' and ')}`,
      doi: `10.5555/idqs.${id}`,
      sources: [...new Set(chosen)],
      sourceModality: modality,
      derived: radiology ? (rnd() < 0.3 ? ['SEG', 'SR'] : rnd() < 0.2 ? ['RTSTRUCT'] : ['SEG']) : ['ANN'],
      coverage: 0.2 + rnd() * 0.6,
      license: rnd() < 0.85 ? 'CC BY 4.0' : 'CC BY-NC 4.0',
      algorithm: pick(['nnU-Net', 'TotalSegmentator', 'MONAI Label', 'Manual contouring', 'HoVer-Net']),
      algorithmType: rnd() < 0.7 ? 'AUTOMATIC' : 'MANUAL',
      properties: props.length ? props : ['Neoplasm'],
      category: rnd() < 0.6 ? 'Anatomical Structure' : 'Morphologically Altered Structure',
      regions: rnd() < 0.5 ? ['Abdomen'] : ['Thorax'],
      since: 10 + Math.floor(rnd() * (CURRENT_VERSION - 9)),
    });
  }
  const analysisResults = [...REAL_ANALYSIS_RESULTS, ...synthAr]
    .map((a, i) => ({ ...a, idx: i, synthetic: i >= REAL_ANALYSIS_RESULTS.length, collections: resolve(a.sources) }))
    .filter((a) => a.collections.length > 0);
  return { seed, scale, collections, analysisResults, currentVersion: CURRENT_VERSION };
}

function gaussian(rnd: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
}
