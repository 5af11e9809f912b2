// The JSON error envelope of /v3 and of the agent tools: code and message
// (in the surface's words), plus, when the message has them, the names it
// suggests and the capabilities it points to, so that a client such as the
// explorer can offer them as choices instead of parsing the message.

import { Type } from '@sinclair/typebox';
import type { IdqsError, Words } from '../core/errors.ts';

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code, e.g. invalid_query, not_found, query_timeout.' }),
      message: Type.String({ description: 'What went wrong and how to fix it.' }),
      suggestions: Type.Optional(Type.Array(Type.String(), { description: 'Names the request probably meant ("Did you mean ..."), when the message suggests any.' })),
      request_id: Type.Optional(Type.String({ description: 'Id of the request (also in the X-Request-Id header and the server log); quote it when reporting a problem.' })),
      see: Type.Optional(
        Type.Array(
          Type.Object({
            capability: Type.String({ description: 'Id of a capability the message points to (the agent tool of the same name does it too).' }),
            args: Type.Optional(Type.Record(Type.String(), Type.String())),
          }),
          { description: 'Capabilities the message points to, in its order.' },
        ),
      ),
    }),
  },
  { $id: 'ErrorBody', description: 'Error envelope used by every error response.' },
);

export interface ErrorEnvelope {
  error: { code: string; message: string; suggestions?: string[]; see?: { capability: string; args?: Record<string, string> }[]; request_id?: string };
}

export function errorEnvelope(code: string, message: string): ErrorEnvelope {
  return { error: { code, message } };
}

/** The envelope of a core error in a surface's words. */
export function envelopeOf(err: IdqsError, words: Words): ErrorEnvelope {
  const body = errorEnvelope(err.code, err.text(words));
  const suggestions = err.suggestions;
  if (suggestions.length > 0) body.error.suggestions = suggestions;
  const see = err.see;
  if (see.length > 0) body.error.see = see.map((s) => (s.args ? { capability: s.id, args: s.args } : { capability: s.id }));
  return body;
}

/** The envelope with the id of the request it answers (after the other members). */
export function withRequestId(body: ErrorEnvelope, requestId: string | undefined): ErrorEnvelope {
  if (requestId !== undefined) body.error.request_id = requestId;
  return body;
}
