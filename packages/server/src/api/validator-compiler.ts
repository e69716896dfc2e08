/**
 * Input validation like FastAPI's: query strings, path parameters and headers are text, so they are
 * coerced to the schema's types ("5" → 5); JSON bodies are not, because Ajv's coercion would silently
 * turn `null` into `""` or `42` into `"42"` where pydantic reports an error. Both use Fastify's own
 * Ajv compiler (same shared schemas, same formats), with coercion switched per part of the request.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
type BuildValidator = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>;

const COMMON_OPTIONS = { allErrors: true, removeAdditional: true, useDefaults: true } as const;

export function partAwareSchemaController(): SchemaController {
  const factory = AjvCompiler();
  return {
    compilersFactory: {
      buildValidator: ((externalSchemas: Parameters<BuildValidator>[0], ajvOptions: Parameters<BuildValidator>[1]) => {
        const base = (ajvOptions ?? {}) as { customOptions?: Record<string, unknown>; plugins?: unknown[] };
        const withCoercion = (coerceTypes: false | 'array') =>
          factory(externalSchemas, { plugins: [], ...base, customOptions: { ...base.customOptions, ...COMMON_OPTIONS, coerceTypes } } as never);
        const strict = withCoercion(false);
        const coercing = withCoercion('array');
        return (route: FastifyRouteSchemaDef<unknown>) => (route.httpPart === 'body' ? strict(route) : coercing(route));
      }) as BuildValidator,
    },
  };
}
