// The data platform's own paper: cited after the datasets of every selection
// (the public service does the same). Kept in core because the citation
// service needs it whatever dataset is served.

import type { BibRecord } from './manifest.ts';

/** The data platform's own paper, cited in addition to every dataset. */
export const PLATFORM_CITATION: BibRecord = {
  doi: '10.1148/rg.230180',
  title:
    'National Cancer Institute Imaging Data Commons: Toward Transparency, Reproducibility, and Scalability in Imaging Artificial Intelligence',
  authors: [
    { family: 'Fedorov', given: 'Andrey' },
    { family: 'Longabaugh', given: 'William J. R.' },
    { family: 'Pot', given: 'David' },
    { family: 'Clunie', given: 'David A.' },
    { family: 'Pieper', given: 'Steve D.' },
    { family: 'Gibbs', given: 'David L.' },
    { family: 'Bridge', given: 'Christopher' },
    { family: 'Herrmann', given: 'Markus D.' },
    { family: 'Homeyer', given: 'André' },
    { family: 'Lewis', given: 'Rob' },
    { family: 'Aerts', given: 'Hugo J. W. L.' },
    { family: 'Krishnaswamy', given: 'Deepa' },
    { family: 'Thiriveedhi', given: 'Vamsi K.' },
    { family: 'Ciausu', given: 'Cosmin' },
    { family: 'Schacherer', given: 'Daniela P.' },
    { family: 'Bontempi', given: 'Dennis' },
    { family: 'Pihl', given: 'Todd' },
    { family: 'Wagner', given: 'Ulrike' },
    { family: 'Farahani', given: 'Keyvan' },
    { family: 'Kim', given: 'Erika' },
    { family: 'Kikinis', given: 'Ron' },
  ],
  year: 2023,
  publisher: 'Radiological Society of North America',
  url: 'https://doi.org/10.1148/rg.230180',
  type: 'article',
  container_title: 'RadioGraphics',
  volume: '43',
  issue: '12',
  pages: 'e230180',
};
