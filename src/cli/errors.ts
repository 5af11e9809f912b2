// How the command line reports a core error: the message in the CLI's words
// (request members as flags: max_rows is --max-rows) and an exit status that
// tells a caller mistake from a failure of the service.

import type { ErrorKind, IdqsError } from '../core/errors.ts';
import { CLI_WORDS } from '../contract/words.ts';

/** 2 for what the caller can fix by changing the command (as for usage errors), 1 for the rest. */
const EXIT_STATUS: Record<ErrorKind, number> = {
  invalid_query: 2,
  invalid_request: 2,
  not_found: 2,
  unavailable: 1,
  busy: 1,
  query_timeout: 1,
  resource_exhausted: 1,
  too_large: 2,
  cancelled: 130,
};

export function reportCoreError(e: IdqsError): number {
  process.stderr.write(`error (${e.code}): ${e.text(CLI_WORDS)}\n`);
  return EXIT_STATUS[e.code];
}
