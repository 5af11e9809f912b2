// Bibliographic records for every DOI of a generated dataset, so citations
// are produced offline. Records of real collections carry only what is public
// and certain (title, publisher, year from the DOI); authors of real datasets
// are given as the collection's contributors rather than invented names.

import type { BibRecord } from '../core/data/manifest.ts';
import { PLATFORM_CITATION } from '../core/data/platform-citation.ts';
import { prng, type Plan } from './plan.ts';


const FAMILY = ['Smith', 'Chen', 'Garcia', 'Kowalski', 'Nguyen', 'Okafor', 'Rossi', 'Schmidt', 'Tanaka', 'Novak', 'Silva', 'Haddad', 'Larsen', 'Patel', 'Dubois', 'Moreau', 'Ivanova', 'Kim', 'Murphy', 'Cohen'];
const GIVEN = ['A.', 'B.', 'C.', 'D.', 'E.', 'F.', 'G.', 'H.', 'J.', 'K.', 'L.', 'M.', 'N.', 'P.', 'R.', 'S.', 'T.', 'V.'];

function yearFromDoi(doi: string, fallback: number): number {
  const m = /\.(19|20)(\d\d)\./.exec(doi);
  return m ? Number(m[1]! + m[2]!) : fallback;
}

export function buildBibliography(plan: Plan): BibRecord[] {
  const rnd = prng(`bib:${plan.seed}`);
  const people = (n: number) =>
    Array.from({ length: n }, () => ({ family: FAMILY[Math.floor(rnd() * FAMILY.length)]!, given: GIVEN[Math.floor(rnd() * GIVEN.length)]! }));
  const out = new Map<string, BibRecord>();
  for (const c of plan.collections) {
    if (out.has(c.doi)) continue;
    out.set(c.doi, {
      doi: c.doi,
      title: c.synthetic ? `${c.name}: imaging of ${c.cancer.toLowerCase()} (synthetic collection)` : `Data from ${c.name}`,
      authors: c.synthetic ? people(2 + Math.floor(rnd() * 4)) : [{ literal: `${c.name} collection contributors` }],
      year: yearFromDoi(c.doi, 2010 + (c.since ?? 1) / 2 + 2),
      publisher: 'The Cancer Imaging Archive',
      url: `https://doi.org/${c.doi}`,
      type: 'dataset',
    });
  }
  for (const a of plan.analysisResults) {
    if (out.has(a.doi)) continue;
    out.set(a.doi, {
      doi: a.doi,
      title: a.title,
      authors: a.synthetic || a.doi.startsWith('10.5555/') ? people(2 + Math.floor(rnd() * 3)) : [{ literal: `${a.title} contributors` }],
      year: 2016 + Math.floor(a.since / 3),
      publisher: a.doi.startsWith('10.7937/') ? 'The Cancer Imaging Archive' : 'Zenodo',
      url: `https://doi.org/${a.doi}`,
      type: 'dataset',
    });
  }
  out.set(PLATFORM_CITATION.doi, PLATFORM_CITATION);
  return [...out.values()].map((r) => ({ ...r, year: Math.round(r.year) }));
}
