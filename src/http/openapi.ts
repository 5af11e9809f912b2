// Options shared by the OpenAPI documents of /v3 and /v2.

/** Shared schemas keep their $id as component name (ErrorBody, V2Error), not def-0. */
export const keepSchemaIds = {
  buildLocalReference: (json: Record<string, unknown>, _base: unknown, _fragment: unknown, i: number) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
};
