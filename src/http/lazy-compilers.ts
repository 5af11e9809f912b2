// Fastify's request validators and response serializers, compiled on a
// route's first use instead of when the route is registered. Compiling every
// schema of every route (ajv and fast-json-stringify generate code for each)
// took about 0.6 s of a server's start and kept code for routes a server may
// never be asked for. The compilers are Fastify's own defaults, given the same
// shared schemas and options: only the moment of compiling changes. The
// schemas themselves (and so the OpenAPI document) are untouched.

import AjvCompiler, { type ValidatorFactory } from '@fastify/ajv-compiler';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

interface Factories {
  buildValidator: ValidatorFactory;
  buildSerializer: SerializerFactory;
}
type Validate = ((data: unknown) => unknown) & { errors?: unknown };

/** A validator compiled at its first call; Fastify reads `errors` from the function it was given, so that is passed through. */
function lazyValidator(compile: () => Validate): Validate {
  let fn: Validate | null = null;
  const validate = ((data: unknown) => (fn ??= compile())(data)) as Validate;
  Object.defineProperty(validate, 'errors', { get: () => fn?.errors ?? null });
  return validate;
}

/** The compilers factories for Fastify's `schemaController` option. */
export function lazyCompilers(): Factories {
  const validators = AjvCompiler();
  const serializers = SerializerSelector();
  const buildValidator: ValidatorFactory = (externalSchemas, options) => {
    const compiler = validators(externalSchemas, options);
    // Fastify only calls the function and reads its errors (not Ajv's schema properties).
    type Compiled = ReturnType<typeof compiler>;
    return (route) => lazyValidator(() => compiler(route) as unknown as Validate) as unknown as Compiled;
  };
  const buildSerializer: SerializerFactory = (externalSchemas, options) => {
    const compiler = serializers(externalSchemas, options);
    return (route) => {
      let fn: ((doc: unknown) => string) | null = null;
      return (doc: unknown) => (fn ??= compiler(route))(doc);
    };
  };
  return { buildValidator, buildSerializer };
}
