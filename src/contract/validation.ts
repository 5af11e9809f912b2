// Request validation shared by every surface that checks JSON against a
// schema (REST bodies and parameters, MCP tool arguments): one set of Ajv
// options, so the same value gets the same verdict, and one message per
// failure that says where the problem is, what was wrong and what is accepted.

/** Options of the validator (Fastify's for REST, the agent tools' own). */
export const AJV_OPTIONS = { removeAdditional: false, allErrors: false, verbose: true, coerceTypes: 'array', useDefaults: true } as const;

export interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: { properties?: Record<string, unknown>; enum?: unknown[] };
  schema?: unknown;
}

function where(context: string | undefined, path: string): string {
  const p = path.replace(/^\//, '').replaceAll('/', '.');
  return p ? `${context ?? 'request'}.${p}` : (context ?? 'request');
}

/** The message of the first Ajv error, located under `context` (e.g. body, querystring, arguments). */
export function ajvErrorMessage(errors: AjvError[], context: string | undefined): string | null {
  const first = errors[0];
  if (!first) return null;
  const at = where(context, first.instancePath);
  switch (first.keyword) {
    case 'additionalProperties': {
      const member = String(first.params.additionalProperty);
      const accepted = Object.keys(first.parentSchema?.properties ?? {});
      return `Unknown member ${JSON.stringify(member)} in ${at}; accepted: ${accepted.length ? accepted.join(', ') : '(none)'}.`;
    }
    case 'required':
      return `Missing required member ${JSON.stringify(first.params.missingProperty)} in ${at}.`;
    case 'enum': {
      const allowed = (first.params.allowedValues as unknown[] | undefined) ?? first.parentSchema?.enum ?? [];
      return `${at} must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}.`;
    }
    case 'type':
      return `${at} must be ${first.params.type}.`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${at} ${first.message}.`;
    default:
      return `${at} ${first.message ?? 'is invalid'}.`;
  }
}
