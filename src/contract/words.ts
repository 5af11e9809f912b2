// The words each surface uses for what a core message points to: REST names
// routes and request members, MCP names tools and arguments, the command line
// names commands and flags. Adapters render core errors with their own set.

import type { Words } from '../core/errors.ts';
import { SURFACES, restRoute, toolCall } from './capabilities.ts';

export const REST_WORDS: Words = { capability: restRoute, field: (name) => name };

export const TOOL_WORDS: Words = { capability: toolCall, field: (name) => name };

/** A request member is the flag of the same name (max_rows → --max-rows); a capability without a command is named by its route. */
export const CLI_WORDS: Words = {
  capability: (id, args) => SURFACES[id].cli ?? restRoute(id, args),
  field: (name) => `--${name.replaceAll('_', '-')}`,
};
