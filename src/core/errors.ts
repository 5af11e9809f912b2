// Domain errors: a stable kind (the machine-readable code) and a message made
// of text and references (a capability, a request field, a setting, names the
// caller may have meant). Core code never names a route, a tool or a flag:
// each adapter renders the references in its own words and maps the kind to
// its own status (REST an HTTP status, MCP a tool error, the CLI an exit code).

import type { CapabilityId } from './capabilities.ts';
import { suggestionText } from './suggest.ts';

/** What went wrong, as a stable code every surface keeps. */
export type ErrorKind =
  | 'invalid_query'
  | 'invalid_request'
  | 'not_found'
  | 'unavailable'
  | 'busy'
  | 'query_timeout'
  /** The query needed more memory than its budget allows and was stopped. */
  | 'resource_exhausted'
  /** The request is larger than a configured limit (the message says which). */
  | 'too_large'
  /** Nobody waits for the answer any more (the client left, shutdown): logged, never sent. */
  | 'cancelled';

/** Something a message points to, which each surface names in its own words. */
export type Ref =
  /** Another capability, with the arguments to call it with (REST: a route; MCP: a tool call; CLI: a command). */
  | { ref: 'capability'; id: CapabilityId; args?: Record<string, string> }
  /** A member of the request (REST and MCP: its name; CLI: its flag). */
  | { ref: 'field'; name: string }
  /** A server setting (the environment variable that changes it). */
  | { ref: 'setting'; name: string }
  /** Names the caller probably meant ("Did you mean ..."); renders as nothing when empty. */
  | { ref: 'suggestions'; values: string[] };

export type Part = string | Ref;

/** How a surface names references. */
export interface Words {
  capability(id: CapabilityId, args?: Record<string, string>): string;
  field(name: string): string;
}

/** Surface-free words: ids and member names as they are (used for Error.message and logs). */
export const PLAIN_WORDS: Words = {
  capability: (id, args) => (args && Object.keys(args).length > 0 ? `${id} ${JSON.stringify(args)}` : id),
  field: (name) => name,
};

export const see = (id: CapabilityId, args?: Record<string, string>): Ref => (args ? { ref: 'capability', id, args } : { ref: 'capability', id });
export const field = (name: string): Ref => ({ ref: 'field', name });
export const setting = (name: string): Ref => ({ ref: 'setting', name });
export const didYouMean = (values: string[]): Ref => ({ ref: 'suggestions', values });

/** A message with references kept as such: msg`Unknown table. ${see('list_tables')} lists them.` */
export function msg(strings: TemplateStringsArray, ...values: (Part | number | boolean | null | undefined)[]): Part[] {
  const parts: Part[] = [];
  strings.forEach((s, i) => {
    if (s !== '') parts.push(s);
    if (i < values.length) {
      const v = values[i];
      parts.push(v !== null && typeof v === 'object' ? v : String(v));
    }
  });
  return parts;
}

export function render(parts: readonly Part[], words: Words): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'string') out += p;
    else if (p.ref === 'capability') out += words.capability(p.id, p.args);
    else if (p.ref === 'field') out += words.field(p.name);
    else if (p.ref === 'setting') out += p.name;
    else out += suggestionText(p.values);
  }
  return out;
}

export interface ErrorOptions {
  /** For busy: how long a client should wait before retrying. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class IdqsError extends Error {
  readonly parts: readonly Part[];
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorKind,
    message: string | readonly Part[],
    opts: ErrorOptions = {},
  ) {
    const parts = typeof message === 'string' ? [message] : message;
    super(render(parts, PLAIN_WORDS), opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'IdqsError';
    this.parts = parts;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  /** The message in a surface's words. */
  text(words: Words): string {
    return render(this.parts, words);
  }

  /** The names the message suggests, for surfaces that offer them as choices. */
  get suggestions(): string[] {
    return this.parts.flatMap((p) => (typeof p !== 'string' && p.ref === 'suggestions' ? p.values : []));
  }

  /** The capabilities the message points to. */
  get see(): { id: CapabilityId; args?: Record<string, string> }[] {
    return this.parts.flatMap((p) => (typeof p !== 'string' && p.ref === 'capability' ? [p.args ? { id: p.id, args: p.args } : { id: p.id }] : []));
  }
}

type Message = string | readonly Part[];

export const invalidQuery = (m: Message) => new IdqsError('invalid_query', m);
export const invalidRequest = (m: Message) => new IdqsError('invalid_request', m);
export const notFound = (m: Message) => new IdqsError('not_found', m);
export const unavailable = (m: Message) => new IdqsError('unavailable', m);
export const queryTimeout = (m: Message) => new IdqsError('query_timeout', m);
export const busy = (m: Message, retryAfterSeconds: number) => new IdqsError('busy', m, { retryAfterSeconds });
export const resourceExhausted = (m: Message) => new IdqsError('resource_exhausted', m);
export const tooLarge = (m: Message) => new IdqsError('too_large', m);
export const cancelled = (m: Message) => new IdqsError('cancelled', m);
