// The `release` member every /v3 and /v2 request (and every data tool) may
// carry when one process serves several releases: which one to answer from.
// Declared once here; the HTTP adapter adds it to each route's schema and the
// agent tools to each tool's arguments.

import { Type } from '@sinclair/typebox';

export const RELEASE_PARAM = 'release';

export const ReleaseParam = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    'The release to answer from, when the server serves several (GET /v3/releases lists them): its index version such as "25.0.5", or its data release "v25" or "25" when one served release has it. Default: the newest served.',
  examples: ['25.0.5'],
});
