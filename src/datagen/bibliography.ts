// Bibliographic records for every DOI of a generated dataset, so citations
// are produced offline. Records carry only what is public and certain: the
// source's title and DOI, the publisher (from the DOI's registrant) and the
// year (from the DOI when it has one, else the collection's last update);
// authors are given as the source's contributors rather than invented names.

import type { BibRecord } from '../core/data/manifest.ts';
import { PLATFORM_CITATION } from '../core/data/platform-citation.ts';
import { publisherOf } from './gen-metadata.ts';
import type { Plan } from './plan.ts';

function yearOf(doi: string, updated: string | null): number {
  const m = /\.(19|20)(\d\d)\./.exec(doi);
  if (m) return Number(m[1]! + m[2]!);
  const u = /^(\d{4})-/.exec(updated ?? '');
  return u ? Number(u[1]) : 2024;
}

function record(doi: string, title: string, who: string, updated: string | null): BibRecord {
  return {
    doi,
    title,
    authors: [{ literal: `${who} contributors` }],
    year: yearOf(doi, updated),
    publisher: publisherOf(doi),
    url: `https://doi.org/${doi}`,
    type: 'dataset',
  };
}

export function buildBibliography(plan: Plan): BibRecord[] {
  const out = new Map<string, BibRecord>();
  for (const c of plan.collections) {
    for (const s of c.sources) if (s.doi && !out.has(s.doi)) out.set(s.doi, record(s.doi, s.title, c.name, c.updated));
  }
  for (const a of plan.analysisResults) if (!out.has(a.doi)) out.set(a.doi, record(a.doi, a.title, a.title.split(':')[0]!, a.updated));
  out.set(PLATFORM_CITATION.doi, PLATFORM_CITATION);
  return [...out.values()];
}
